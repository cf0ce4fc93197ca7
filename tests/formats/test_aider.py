"""The Aider reader, on the structures of ../shared/real-logs/aider-AndrewJacop: the Markdown chat
history (sessions, multi-line ``#### `` prompts, ``> `` console lines, ``> Tokens:`` usage lines)
and the LLM history (``TO LLM`` requests of role-prefixed lines, ``LLM RESPONSE``), told from
their first bytes whatever the file is called."""

from __future__ import annotations

import json

from conftest import invoke

CHAT = """
# aider chat started at 2025-05-04 17:02:36

> Aider v0.82.2~~
> Main model: gemini/gemini-2.5-pro-exp-03-25 with diff-fenced edit format~~

#### give me an overview~~
#### in two lines~~

A calculator in React.
Components and styles.

> Tokens: 3.2k sent, 222 received.~~
> package.json~~
> Add file to the chat? (Y)es/(N)o [Yes]: y~~

Okay, I see the file.

# aider chat started at 2025-05-05 09:00:00

#### /ask what is App.js?~~

The main component.
""".replace("~", " ")  # (Aider ends its lines with two spaces)

LLM = """TO LLM 2025-05-04T17:06:58
-------
SYSTEM Act as an expert software developer.
SYSTEM~
SYSTEM Take requests for changes.
-------
USER old request
LLM RESPONSE 2025-05-04T17:07:07
ASSISTANT old answer
TO LLM 2025-05-04T17:08:00
-------
SYSTEM Act as an expert software developer.
-------
USER Change get_factorial()
USER to use math.factorial
-------
ASSISTANT Ok.
-------
USER Go on
LLM RESPONSE 2025-05-04T17:08:09
ASSISTANT Done:
ASSISTANT~
ASSISTANT app.py
""".replace("~", " ")


def _docs(result):
    assert result.status == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_the_chat_history_one_document_per_session(tmp_path):
    path = tmp_path / "notes.txt"  # (never told by its name)
    path.write_text(CHAT, encoding="utf-8")
    result = invoke(["convert", "--to", "openai", str(path)])
    first, second = _docs(result)
    assert first["model"] == "gemini/gemini-2.5-pro-exp-03-25"
    assert first["messages"] == [
        {"role": "user", "content": "give me an overview\nin two lines"},
        {"role": "assistant", "content": "A calculator in React.\nComponents and styles."},
        {"role": "user", "content": "[aider]\npackage.json\nAdd file to the chat? (Y)es/(N)o [Yes]: y"},
        {"role": "assistant", "content": "Okay, I see the file."}]
    assert second["messages"] == [{"role": "user", "content": "/ask what is App.js?"},
                                  {"role": "assistant", "content": "The main component."}]
    assert "Aider token / cost lines (usage): 1 not kept" in result.stderr


def test_the_llm_history_is_its_last_request_and_response():
    (doc,) = _docs(invoke(["convert", "--to", "openai"], LLM))
    assert doc["messages"] == [
        {"role": "system", "content": "Act as an expert software developer."},
        {"role": "user", "content": "Change get_factorial()\nto use math.factorial"},
        {"role": "assistant", "content": "Ok."},
        {"role": "user", "content": "Go on"},
        {"role": "assistant", "content": "Done:\n\napp.py"}]


def test_estimate_and_compress_read_the_same_messages():
    est = _docs(invoke(["estimate"], LLM))
    assert est[0]["messages"] == 5
    (out,) = _docs(invoke(["compress", "--summarizer", "extractive"], LLM))
    assert len(out["messages"]) == 5


def test_a_chat_history_without_a_prompt_is_refused():
    result = invoke(["estimate"], "# aider chat started at 2025-05-04 17:02:36\n\n> Aider v0.82.2  \n")
    assert result.status == 3
    assert "Aider chat history without any prompt" in result.stderr
