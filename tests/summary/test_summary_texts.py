"""The summary prose lives in hermesctx/summary/texts/*.md, shipped as package data."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

from hermesctx.summary import prompt, text

TEXTS = Path(text.__file__).parent / "texts"
ROOT = Path(__file__).resolve().parents[2]


def test_every_text_is_package_data_and_used():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["hermesctx"]
    names = sorted(p.stem for p in TEXTS.glob("*.md"))
    assert names and all(any(p.relative_to(ROOT / "hermesctx").match(pat) for pat in patterns) for p in TEXTS.glob("*.md"))
    sources = "".join(Path(m.__file__).read_text() for m in (text, prompt))
    assert [n for n in names if f'"{n}"' not in sources] == []


def test_texts_end_with_one_newline_and_have_no_trailing_space():
    for path in TEXTS.glob("*.md"):
        raw = path.read_text(encoding="utf-8")
        assert raw.endswith("\n") and not raw.endswith("\n\n"), path.name
        assert not re.search(r"[ \t]$", raw, re.M), path.name


def test_sections_come_from_the_template():
    headings = [heading for heading, _ in prompt.SECTIONS]
    assert len(headings) == 13 and headings[0] == text.TASK_HEADING
    assert {text.IN_PROGRESS_HEADING, text.PENDING_ASKS_HEADING, text.REMAINING_WORK_HEADING} <= set(headings)


def test_placeholders_are_filled_once():
    rendered = prompt.build_prompt("turns with $budget and ${date}", budget=7, previous_summary="was $turns",
                                   focus="$focus", today="2026-01-02")
    assert "turns with $budget and ${date}" in rendered and "PREVIOUS SUMMARY:\nwas $turns" in rendered
    assert "Target ~7 tokens." in rendered and "DATE: today is 2026-01-02." in rendered
    assert 'FOCUS TOPIC: "$focus"' in rendered
    assert prompt.trajectory_prompt("$x", 50).endswith('---\nTURNS TO SUMMARIZE:\n$x\n---\n\n'
                                                       'Reply with the summary alone, beginning with "[CONTEXT SUMMARY]:".')
