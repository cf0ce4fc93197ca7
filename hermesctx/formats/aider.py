"""Aider's own logs (no JSON): the chat history ``.aider.chat.history.md`` and the LLM history
``.aider.llm.history`` -> transcripts. Aider has no tool calls (edits are SEARCH/REPLACE text in
the replies).

* The chat history is Markdown: each session opens with ``# aider chat started at <time>``;
  the user's prompts are ``#### `` lines (consecutive ones are one multi-line prompt), Aider's
  console lines are quoted with ``> `` (its ``> Tokens: … Cost: …`` lines are usage), the rest
  is the model's reply. Each session is one document; the console lines said after a prompt
  are kept as user text marked ``[aider]`` (what the user saw and answered, files added to the
  chat, command output), those before the first prompt (start-up banner) are not.
* The LLM history holds every request: a ``TO LLM <time>`` block of messages separated by
  ``-------`` lines, each line prefixed with its role (``SYSTEM``, ``USER``, ``ASSISTANT``),
  then the ``LLM RESPONSE <time>``. The last request and its response are the context the
  model last saw: that is the transcript.

Told from the first bytes of the file (:func:`sniff`), never its name.
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.errors import InputError
from hermesctx.formats._common import bump

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

NAME = "aider"
PLAIN = False  # read as OpenAI chat
LOG = False

CHAT_START = "# aider chat started at "
REQUEST = "TO LLM "
RESPONSE = "LLM RESPONSE "
_SEPARATOR = "-------"
_ROLES = {"SYSTEM": "system", "USER": "user", "ASSISTANT": "assistant"}
_USAGE = lazyre.compile(r"^> Tokens: .* (sent|received)")
_MODEL = lazyre.compile(r"^> (?:Main )?[Mm]odel: (\S+)")


def sniff(head: bytes) -> bool:
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return text.startswith(CHAT_START.encode()) or (
        text.startswith(REQUEST.encode()) and text[len(REQUEST):len(REQUEST) + 2].isdigit())


def load(stream: BinaryIO, name: str | None) -> dict:
    """The file as ``{"aider": "chat" | "llm", "sessions": [...]}`` (the value :func:`read`
    takes), each session ``{"messages", "model", "lost"}`` already folded."""
    raw = stream.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"an Aider log that is not valid UTF-8 (byte {exc.start})") from None
    lines = text.splitlines()
    if text.lstrip().startswith(CHAT_START):
        return {"aider": "chat", "sessions": _chat(lines)}
    return {"aider": "llm", "sessions": [_llm(lines)]}


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("aider") in ("chat", "llm") and isinstance(
        doc.get("sessions"), list)


def records(doc: dict) -> list | None:
    sessions = [s for s in doc["sessions"] if isinstance(s, dict)]
    return [{"aider": doc["aider"], "sessions": [s]} for s in sessions] if len(sessions) > 1 else None


def read(doc: dict, lost: dict) -> dict:
    sessions = [s for s in doc["sessions"] if isinstance(s, dict)]
    if not sessions or not sessions[0].get("messages"):
        what = "chat history" if doc.get("aider") == "chat" else "LLM history"
        raise InputError(f"an Aider {what} without any prompt: no transcript in it")
    session = sessions[0]
    for what, n in (session.get("lost") or {}).items():
        bump(lost, what, n)
    body: dict = {"messages": list(session["messages"])}
    if session.get("model"):
        body["model"] = session["model"]
    return body


# --- the chat history ----------------------------------------------------------------------

def _chat(lines: list[str]) -> list[dict]:
    sessions: list[dict] = []
    current: dict | None = None
    kind = None  # what the lines being gathered are: "user", "assistant", "console"
    block: list[str] = []

    def flush() -> None:
        nonlocal block
        text = "\n".join(block).strip("\n")
        block = []
        if current is None or not text.strip():
            return
        messages = current["messages"]
        if kind == "console":
            if not messages:
                bump(current["lost"], "Aider start-up console lines before the first prompt")
                return
            messages.append({"role": "user", "content": f"[aider]\n{text}"})
        else:
            messages.append({"role": kind, "content": text})

    for line in lines:
        if line.startswith(CHAT_START):
            flush()
            current = {"started": line[len(CHAT_START):].strip(), "messages": [], "model": None,
                       "lost": {}}
            sessions.append(current)
            kind = None
            continue
        if current is None:
            continue
        if line.startswith("#### ") or line == "####":
            if kind != "user":
                flush()
                kind = "user"
            block.append(_unbreak(line[5:]))
            continue
        if line.startswith("> ") or line == ">":
            if _USAGE.match(line):
                bump(current["lost"], "Aider token / cost lines (usage)")
                continue
            found = _MODEL.match(line)
            if found and current["model"] is None:
                current["model"] = found.group(1)
            if kind != "console":
                flush()
                kind = "console"
            block.append(_unbreak(line[2:]))
            continue
        if not line.strip() and kind in ("user", "console"):
            flush()
            kind = None
            continue
        if kind != "assistant":
            if kind is not None:
                flush()
            kind = "assistant"
        block.append(line)
    flush()
    return sessions


def _unbreak(line: str) -> str:
    """A Markdown line without the two trailing spaces Aider writes as a line break."""
    return line[:-2] if line.endswith("  ") else line


# --- the LLM history -----------------------------------------------------------------------

def _llm(lines: list[str]) -> dict:
    """The last request and its response as one session (the requests before it counted)."""
    requests = 0
    last: list[str] = []
    response: list[str] | None = None
    gathering: list[str] | None = None
    for line in lines:
        if line.startswith(REQUEST):
            requests += 1
            last, response = [], None
            gathering = last
            continue
        if line.startswith(RESPONSE):
            response = []
            gathering = response
            continue
        if gathering is not None:
            gathering.append(line)
    messages = _llm_messages(last)
    if response is not None:
        messages.extend(m for m in _llm_messages(response) if m["role"] == "assistant")
    lost = {"earlier requests of the LLM history (the last one is the context)": requests - 1} \
        if requests > 1 else {}
    return {"messages": messages, "model": None, "lost": lost}


def _llm_messages(lines: list[str]) -> list[dict]:
    messages: list[dict] = []
    role = None
    text: list[str] = []

    def flush() -> None:
        if role is not None:
            messages.append({"role": role, "content": "\n".join(text)})

    for line in lines:
        if line.startswith(_SEPARATOR) and not line.strip("-"):
            flush()
            role, text = None, []
            continue
        word, _, rest = line.partition(" ")
        found = _ROLES.get(word)
        if found is None:  # (a line without its role: the message's text goes on)
            if role is not None:
                text.append(line)
            continue
        if found != role:
            flush()
            role, text = found, []
        text.append(rest)
    flush()
    return messages
