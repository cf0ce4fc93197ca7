"""The registry: every format module has the same face, and the package's capability lists
are what the modules say of themselves."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hermesctx import formats

PACKAGE = Path(formats.__file__).parent


@pytest.mark.parametrize("name", formats.FORMATS)
def test_every_format_module_has_the_face(name):
    module = formats.module(name)
    assert module.NAME == name
    assert callable(module.detect) and callable(module.read)
    assert callable(getattr(module, "write", None)) == module.WRITABLE
    assert callable(getattr(module, "stream", None)) == module.WRITABLE


def test_capability_lists_are_read_off_the_modules():
    modules = [formats.module(name) for name in formats.FORMATS]
    assert formats.LOG_FORMATS == tuple(m.NAME for m in modules if m.LOG)
    assert formats.PLAIN == tuple(m.NAME for m in modules if m.PLAIN)
    assert formats.TARGETS == tuple(m.NAME for m in modules if m.WRITABLE)


def test_submodules_do_not_import_from_the_package_face():
    for path in PACKAGE.glob("*.py"):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "hermesctx.formats":
                names = {alias.name for alias in node.names}
                assert names <= {"anthropic", "responses", "sharegpt", "openai", "claude_code",
                                 "codex"}, f"{path.name} imports {names} from hermesctx.formats"


def test_an_unknown_format_is_refused():
    with pytest.raises(formats.InputError):
        formats.module("yaml")
    with pytest.raises(formats.UsageError):
        formats.writer("responses")


def test_a_lone_log_event_reads_as_a_document():
    event = {"type": "user", "uuid": "a", "parentUuid": None, "sessionId": "s",
             "message": {"role": "user", "content": "hi"}}
    assert formats.to_openai(event, formats.CLAUDE_CODE, {}) == {
        "messages": [{"role": "user", "content": "hi"}]}
