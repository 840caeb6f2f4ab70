"""One answer, whatever the path: the HTTP fast path refuses exactly what the SDK refuses.

Two servers of the same domain run in this process, one with the fast path (`simulator.serve._fastcall`)
and one without; hypothesis generates malformed and plain `tools/call` requests (body encodings and
byte-order marks, lone surrogates in ids and arguments, id types, envelope shapes, nesting, batches,
repeated or odd Content-Type / Accept headers) and sends each to an established session on both.
The answers (HTTP status, JSON-RPC result or error code), the state digests after each request and
the transcripts at the end must be the same.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scoring import load_domain
from simulator import Domain
from simulator.serve.server import DomainServer
from tests.conftest import FIXTURES
from tests.helpers import calls_of
from tests.test_server_fastcall import Raw, serving

pytestmark = pytest.mark.timeout(300)

ACCEPT = "application/json, text/event-stream"
PLAIN = {"name": "set_note", "arguments": {"customer_id": "C-0001", "notes": "plain"}}


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


# A request is a plain call the fast path answers, with a few of these changed (so that every
# example sits at the edge of what the fast path takes).
TEXTS = ["ünï ✓", "a\ud800b", "\udfff", "\ud83d\ude00", "", "x" * 300]
IDS = [2**70, -(2**70), -1, 0, "7", "", "\ud800", "id\udc00x", 1.0, 1.5, True, None, [1], {"a": 1}]
CONTENT_TYPES = [
    "application/json; charset=utf-8",
    "application/json;charset=utf-16",
    "Application/JSON",
    "application/json ",
    "text/plain",
    "application/json, text/plain",
    "",
]
ACCEPTS = [
    "application/json",
    "*/*",
    "text/event-stream",
    "application/*, text/*",
    "TEXT/EVENT-STREAM, APPLICATION/JSON",
    "",
]
ENCODINGS = ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1"]


@dataclass
class Request:
    message: Any = field(
        default_factory=lambda: {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": json.loads(json.dumps(PLAIN)),
        }
    )
    ascii: bool = True
    encoding: str = "utf-8"
    before: str = ""
    after: str = ""
    headers: list[tuple[str, str]] = field(
        default_factory=lambda: [("content-type", "application/json"), ("accept", ACCEPT)]
    )

    def body(self) -> bytes:
        text = self.before + json.dumps(self.message, ensure_ascii=self.ascii) + self.after
        if self.encoding == "latin-1":  # (not UTF-8 once the text is not ASCII)
            return text.encode("latin-1", "replace")
        return text.encode(self.encoding, "surrogatepass")


def _arguments(request: Request, draw: Any) -> None:
    args = request.message["params"]["arguments"]
    if not isinstance(args, dict):
        return
    kind = draw(st.sampled_from(["notes", "key", "nested", "weird", "tool"]))
    if kind == "notes":
        args["notes"] = draw(st.sampled_from(TEXTS))
    elif kind == "key":
        args[draw(st.sampled_from(["\ud800", "x", "notes\udc00"]))] = 1
    elif kind == "nested":
        value: Any = "x"
        for _ in range(draw(st.sampled_from([20, 66, 150, 199, 250]))):
            value = [value]
        args["notes"] = value
    elif kind == "weird":
        request.message["params"]["arguments"] = draw(
            st.sampled_from([None, [], "x", {"customer_id": float("nan")}])
        )
    else:
        request.message["params"]["name"] = draw(
            st.sampled_from(["get_customer", "nope", "submit_answerx", ""])
        )


def _envelope(request: Request, draw: Any) -> None:
    message = request.message
    kind = draw(st.sampled_from(["id", "id", "jsonrpc", "method", "extra", "params", "meta", "drop"]))
    if kind == "id":
        message["id"] = draw(st.sampled_from(IDS))
    elif kind == "jsonrpc":
        message["jsonrpc"] = draw(st.sampled_from(["1.0", 2.0, "2.0 ", None]))
    elif kind == "method":
        message["method"] = draw(st.sampled_from(["tools/list", "Tools/call", "tools/call "]))
    elif kind == "extra":
        message["extra"] = 1
    elif kind == "params":
        message["params"] = draw(st.sampled_from([None, [], "set_note", {"arguments": {}}, {"name": 5}]))
    elif kind == "meta" and isinstance(message.get("params"), dict):
        message["params"]["_meta"] = draw(st.sampled_from([{}, {"progressToken": 1}]))
    else:
        message.pop(draw(st.sampled_from(["id", "params", "jsonrpc"])), None)


def _shape(request: Request, draw: Any) -> None:
    kind = draw(st.sampled_from(["batch", "encoding", "encoding", "text", "ascii"]))
    if kind == "batch":
        request.message = draw(st.sampled_from([[request.message], [request.message, request.message], []]))
    elif kind == "encoding":
        request.encoding = draw(st.sampled_from(ENCODINGS))
    elif kind == "text":
        request.before = draw(st.sampled_from(["", " ", "\ufeff", "\n"]))
        request.after = draw(st.sampled_from(["", " x", "}", "\n\n", "\x00"]))
    else:
        request.ascii = False


def _headers(request: Request, draw: Any) -> None:
    headers = request.headers
    kind = draw(st.sampled_from(["type", "accept", "twice", "twice", "drop", "version", "session"]))
    if kind in ("type", "accept", "twice"):
        name = {"type": "content-type", "accept": "accept"}.get(kind) or draw(
            st.sampled_from(["content-type", "accept"])
        )
        value = draw(st.sampled_from(CONTENT_TYPES if name == "content-type" else ACCEPTS))
        if kind == "twice":  # a repeated header: the same value again, or another, before or after
            value = draw(st.sampled_from([value, *(v for n, v in headers if n == name)]))
            headers.insert(draw(st.integers(0, len(headers))), (name, value))
        else:
            headers[:] = [(n, value if n == name else v) for n, v in headers]
    elif kind == "drop" and headers:
        del headers[draw(st.integers(0, len(headers) - 1))]
    elif kind == "version":
        headers.append(
            ("mcp-protocol-version", draw(st.sampled_from(["2025-11-25", "2026-07-28", "1999-01-01"])))
        )
    elif kind == "session":
        headers.append(("mcp-session-id", "0" * 32))  # a second session id (the SDK reads the first)


@st.composite
def requests(draw: Any) -> Request:
    request = Request()
    changes = [_arguments, _envelope, _headers, _shape]  # (in this order: a batch wraps the rest)
    for i in sorted(draw(st.lists(st.integers(0, len(changes) - 1), max_size=3))):
        changes[i](request, draw)
    return request


def post(raw: Raw, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, Any]:
    """(status, the JSON-RPC answer or the raw text) of one POST with exactly these headers."""
    conn: http.client.HTTPConnection = raw.conn
    conn.putrequest("POST", raw.path, skip_accept_encoding=True)
    conn.putheader("mcp-session-id", raw.sid or "")
    for name, value in headers:
        conn.putheader(name, value)
    conn.putheader("content-length", str(len(body)))
    conn.endheaders(body)
    response = conn.getresponse()
    payload = response.read()
    kind = response.getheader("content-type") or ""
    if kind.startswith("text/event-stream"):
        frames = [line[5:].strip() for line in payload.decode().splitlines() if line.startswith("data:")]
        answers = [json.loads(f) for f in frames if f]
        return response.status, next((m for m in answers if "id" in m), None)
    try:
        return response.status, json.loads(payload) if payload else None
    except ValueError:
        return response.status, payload.decode("latin-1")


def essence(answer: Any) -> Any:
    """What must be equal: a result whole, an error by its code (and the id)."""
    if isinstance(answer, dict) and "error" in answer:
        return {"id": answer.get("id"), "code": answer["error"].get("code")}
    if isinstance(answer, list):
        return [essence(a) for a in answer]
    return answer


def test_the_fast_path_refuses_what_the_sdk_refuses_and_answers_the_rest_alike(
    shop: Domain, tmp_path: Any
) -> None:
    fast = DomainServer(shop, runs=tmp_path / "fast", error_backoff_ms=0)
    slow = DomainServer(shop, runs=tmp_path / "slow", error_backoff_ms=0, fast_calls=False)
    with serving(fast) as fast_url, serving(slow) as slow_url:
        pair = [Raw(fast_url), Raw(slow_url)]
        for raw in pair:
            raw.open()
            assert not raw.call("get_customer", {"customer_id": "C-0001"})[2]["result"]["isError"]
        (one,), (two,) = fast.sessions.live.values(), slow.sessions.live.values()

        @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(request=requests())
        @example(request=Request())  # the plain call: the fast path answers it
        def same_answer(request: Request) -> None:
            body, headers = request.body(), request.headers
            try:
                (status, answer), (sdk_status, sdk_answer) = [post(raw, body, headers) for raw in pair]
                assert (status, essence(answer)) == (sdk_status, essence(sdk_answer)), (body[:200], headers)
                assert one.episode.digest() == two.episode.digest(), (body[:200], headers)
            finally:  # the same state again for the next example, whatever this one did
                for raw in pair:
                    raw.call("set_note", {"customer_id": "C-0001", "notes": "reset"})

        same_answer()
    assert fast.fast_answered > 0 and slow.fast_answered == 0  # the fast path did answer some
    (mine,), (theirs,) = (tmp_path / "fast").glob("*.jsonl"), (tmp_path / "slow").glob("*.jsonl")
    strip = ("duration_us", "signature")
    assert [{k: v for k, v in c.items() if k not in strip} for c in calls_of(mine)] == [
        {k: v for k, v in c.items() if k not in strip} for c in calls_of(theirs)
    ]
