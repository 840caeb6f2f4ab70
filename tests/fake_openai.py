"""A small, real OpenAI-compatible chat endpoint for tests: an HTTP server in a thread on 127.0.0.1.

Tests of everything that talks to a language model (the `openai:` rollout policy, `generate --llm`,
the verifiers adapter) point the real client code at it instead of a hosted API:

    with FakeOpenAI(reply=scripted([call("get_user", {"user_id": "u1"}), say("done")])) as llm:
        run_agent(base_url=llm.url)          # llm.url == "http://127.0.0.1:PORT/v1"
        assert llm.requests[0]["model"] == "fake"

It serves `POST /v1/chat/completions` (also without the `/v1` prefix) in the Chat Completions
form, streaming (`"stream": true`, server-sent events ending in `data: [DONE]`) or not, and
`GET /v1/models`. `reply` gets the request's JSON body and returns the assistant message
(`{"content": ..., "tool_calls": [...]}`); what it raises becomes an HTTP 500 with the text.
`fail_first=N` answers the first N requests with `fail_status` (e.g. 500 or 429) to exercise
retries. Every request body is kept in `.requests` (thread-safe append).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

Message = dict[str, Any]
Reply = Callable[[dict[str, Any]], Message]

_ids = count(1)


def call(name: str, arguments: dict[str, Any] | None = None, *more: tuple[str, dict[str, Any]]) -> Message:
    """An assistant message making one tool call (`more`: further (name, arguments) calls in the same turn)."""
    calls = [(name, arguments or {}), *more]
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": n, "arguments": json.dumps(a)},
            }
            for n, a in calls
        ],
    }


def say(text: str) -> Message:
    """An assistant message with text only (an agent loop's final answer)."""
    return {"role": "assistant", "content": text}


def scripted(turns: Sequence[Message]) -> Reply:
    """Reply with `turns[k]` where k is the number of assistant messages already in the conversation.

    Stateless (the turn is read from the request), so concurrent conversations each follow the
    script from its start; past the end of the script it says "done".
    """

    def reply(request: dict[str, Any]) -> Message:
        k = sum(1 for m in request.get("messages", []) if m.get("role") == "assistant")
        return dict(turns[k]) if k < len(turns) else say("done")

    return reply


class FakeOpenAI:
    """The endpoint; a context manager that starts the server on a free port and stops it."""

    def __init__(
        self, reply: Reply, *, model: str = "fake", fail_first: int = 0, fail_status: int = 500
    ) -> None:
        self.reply = reply
        self.model = model
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (`.../v1`)."""
        assert self._server is not None, "the endpoint is not running (use it as a context manager)"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _take(self, body: dict[str, Any]) -> bool:
        """Record a request; whether it must fail (one of the first `fail_first`)."""
        with self._lock:
            self.requests.append(body)
            return len(self.requests) <= self.fail_first

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion object for a request."""
        message = {"role": "assistant", "content": None, **self.reply(body)}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        limit, content = body.get("max_tokens"), message.get("content")
        if isinstance(limit, int) and isinstance(content, str) and len(content.split()) > limit:
            message["content"] = " ".join(content.split()[:limit])  # (a word for a token)
            finish = "length"
        return {
            "id": f"chatcmpl-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


def _chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """A completion as stream chunks: the whole delta (tool calls with their index), then the finish."""
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **tc} for i, tc in enumerate(message["tool_calls"])]
    base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    return [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]


def _handler(endpoint: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, payload: Any, content_type: str = "application/json") -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": endpoint.model, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.rfile.read(length)
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError as exc:
                self._send(400, {"error": {"message": f"bad JSON: {exc}"}})
                return
            if endpoint._take(body):
                self._send(endpoint.fail_status, {"error": {"message": "injected failure"}})
                return
            try:
                completion = endpoint.completion(body)
            except Exception as exc:  # a test's reply function failing is the endpoint's 500
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})
                return
            if not body.get("stream"):
                self._send(200, completion)
                return
            events = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in _chunks(completion))
            self._send(200, events + b"data: [DONE]\n\n", "text/event-stream")

    return Handler
