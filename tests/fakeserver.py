"""A local HTTP server that speaks just enough of two wire formats for the summarizer tests:

* Anthropic Messages API: ``POST /v1/messages``
* OpenAI Chat Completions: ``POST .../chat/completions`` (any prefix, e.g. ``/v1``)

It listens on 127.0.0.1 on a free port, records every request (path, headers, JSON body) and
answers from a script of replies (first in, first out; when the script is empty it answers
:func:`ok` with ``default_text``)::

    with FakeServer() as server:
        server.script(status(500), ok("the summary"))
        client = OpenAISummarizer(base_url=server.url + "/v1", api_key="k", ...)
        ...
        assert server.requests[1].body["model"] == "gpt-4o-mini"

Replies: :func:`ok` (200, given text; ``None`` for empty content), :func:`status` (an error
status in the provider's own error shape, optional ``retry-after``), :func:`rate_limited`,
:func:`context_length` (each provider's real context-length error), :func:`auth_error`,
:func:`hang` (no answer for N seconds, to trip the client's timeout), :func:`trickle` (a
200 whose body comes one byte every ``interval`` seconds: no single read ever times out).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    kind: str  # ok | error | hang
    text: str | None = None
    status: int = 200
    error: str | None = None  # ok | server | rate_limit | context_length | auth
    headers: dict = field(default_factory=dict)
    seconds: float = 0.0
    message: str | None = None  # an error's message text instead of the stock one
    usage: dict | None = None  # an ok reply's usage fields, over the stock ones


def ok(text: str | None, **usage: int) -> Reply:
    """A 200 with ``text``; ``usage`` fields (``cache_read_input_tokens=900`` for Anthropic,
    ``prompt_tokens_details={"cached_tokens": 900}`` for OpenAI) over the stock usage."""
    return Reply("ok", text=text, usage=usage or None)


def status(code: int, *, retry_after: float | None = None) -> Reply:
    headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
    return Reply("error", status=code, error="server" if code >= 500 else "other", headers=headers)


def rate_limited(retry_after: float | None = None) -> Reply:
    reply = status(429, retry_after=retry_after)
    reply.error = "rate_limit"
    return reply


def context_length() -> Reply:
    return Reply("error", status=400, error="context_length")


def auth_error() -> Reply:
    return Reply("error", status=401, error="auth")


def hang(seconds: float) -> Reply:
    return Reply("hang", seconds=seconds)


def trickle(interval: float = 1.0) -> Reply:
    return Reply("trickle", seconds=interval)


@dataclass
class Recorded:
    path: str
    headers: dict  # lower-cased names
    body: object

    @property
    def prompt(self) -> str:
        """The text of the first user message (both formats send the serialized prompt that way)."""
        content = self.body["messages"][0]["content"]
        if isinstance(content, list):
            return "".join(block.get("text", "") for block in content)
        return content

    @property
    def instruction(self) -> str:
        """The text of the last block of the last message (where a live prefix's instruction goes)."""
        content = self.body["messages"][-1]["content"]
        return content[-1].get("text", "") if isinstance(content, list) else content


# The error bodies each provider really returns.
_ANTHROPIC_ERRORS = {
    "server": ("api_error", "Internal server error"),
    "rate_limit": ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    "context_length": ("invalid_request_error", "prompt is too long: 215873 tokens > 200000 maximum"),
    "auth": ("authentication_error", "invalid x-api-key"),
    "other": ("invalid_request_error", "bad request"),
}
_OPENAI_ERRORS = {
    "server": ("server_error", None, "The server had an error while processing your request."),
    "rate_limit": ("requests", "rate_limit_exceeded", "Rate limit reached for requests"),
    "context_length": ("invalid_request_error", "context_length_exceeded",
                       "This model's maximum context length is 128000 tokens. However, your messages "
                       "resulted in 131072 tokens. Please reduce the length of the messages."),
    "auth": ("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-bad."),
    "other": ("invalid_request_error", None, "bad request"),
}


def _error_body(anthropic: bool, reply: Reply) -> dict:
    kind = reply.error or "other"
    if anthropic:
        etype, message = _ANTHROPIC_ERRORS.get(kind, _ANTHROPIC_ERRORS["other"])
        return {"type": "error", "error": {"type": etype, "message": reply.message or message}}
    etype, code, message = _OPENAI_ERRORS.get(kind, _OPENAI_ERRORS["other"])
    message = reply.message or message
    param = "messages" if kind == "context_length" else None
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}


def _ok_body(anthropic: bool, model: str, text: str | None, usage: dict | None = None) -> dict:
    if anthropic:
        content = [] if text is None else [{"type": "text", "text": text}]
        return {"id": "msg_fake01", "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 11, "output_tokens": 7, **(usage or {})}}
    return {"id": "chatcmpl-fake01", "object": "chat.completion", "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18, **(usage or {})}}


class FakeServer:
    def __init__(self, default_text: str = "fake summary"):
        self.default_text = default_text
        self.requests: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> FakeServer:
        with self._lock:
            self._script.extend(replies)
        return self

    def _next(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else ok(self.default_text)

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with server._lock:
                    server.requests.append(Recorded(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                anthropic = self.path.rstrip("/").endswith("/messages") and "chat" not in self.path
                if not (anthropic or self.path.rstrip("/").endswith("/chat/completions")):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                reply = server._next()
                if reply.kind == "hang":
                    server._closing.wait(reply.seconds)
                    reply = ok(server.default_text)
                if reply.kind == "trickle":
                    model = body.get("model", "") if isinstance(body, dict) else ""
                    return self._trickle(_ok_body(anthropic, model, server.default_text), reply.seconds)
                if reply.kind == "ok":
                    model = body.get("model", "") if isinstance(body, dict) else ""
                    return self._send(200, _ok_body(anthropic, model, reply.text, reply.usage))
                return self._send(reply.status, _error_body(anthropic, reply), reply.headers)

            def _send(self, code: int, payload: dict, headers: dict | None = None):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

            def _trickle(self, payload: dict, interval: float):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    for byte in data:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        if server._closing.wait(interval):
                            return
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler
