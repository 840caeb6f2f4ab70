"""An optional language model (`--llm URL`): requests written as a person's, descriptions filled.

    llm = ChatModel(LLMOptions("http://127.0.0.1:8000/v1", model="m", cache=cache_dir))
    text = llm.chat([{"role": "user", "content": "..."}])     # None when the endpoint failed

Any OpenAI-compatible chat endpoint, deterministic: temperature 0, replies cached on disk. Errors
are retried, then `chat` returns None and the caller keeps its template text. A request the model
wrote is kept only when it states exactly the template's values (`stated_values`), names no tool,
passes the instruction checks and leaves the task valid.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from scoring.tasks import Task
from scoring.validation.validate import check_loaded_task, domain_ids
from simulator import Domain
from simulator.builders import DomainBuilder
from toolgen.model import PlannedDomain
from toolgen.naming import words

from .checks import instruction_problems
from .schema import DomainSchema
from .tasks import call_results
from .tools import Toolset

__all__ = [
    "ChatModel",
    "LLMOptions",
    "default_cache",
    "description_prompt",
    "fill_descriptions",
    "lacks_description",
    "rephrasing_problem",
    "scenario_prompt",
    "stated_values",
    "write_scenarios",
]

#: HTTP statuses worth another try (rate limits, the server's own failures)
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: the longest description kept from the model
MAX_DESCRIPTION = 300

_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_WITH_DIGIT = re.compile(r"[\w.:@/+#-]*\d[\w.:@/+#-]*")
_LITERAL = re.compile(r"\b(true|false|null)\b")


@dataclass(frozen=True)
class LLMOptions:
    """What `--llm` sets up: the endpoint, the model, the cache, the retries (picklable for workers)."""

    url: str
    model: str = "default"
    cache: str | None = None
    retries: int = 3
    backoff: float = 0.5
    timeout: float = 60.0
    #: the longest reply asked for, in tokens: a request or a description is a few sentences, and a
    #: model that rambles (or a server whose default is its whole context) must not stall the run
    max_tokens: int = 400


def default_cache() -> Path:
    """`$XDG_CACHE_HOME/toolgym/llm` (or `~/.cache/toolgym/llm`)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "toolgym" / "llm"


@dataclass
class ChatModel:
    """A chat endpoint with a disk cache, retries and counters (`sent`, `cached`, `errors`, and
    `failures`: the requests that got no reply, by why)."""

    options: LLMOptions
    sent: int = 0
    cached: int = 0
    errors: int = 0
    last_error: str | None = None
    failures: dict[str, int] = field(default_factory=dict)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def request(self, messages: Sequence[dict[str, str]], max_tokens: int | None = None) -> dict[str, Any]:
        """The request body: the messages at temperature 0, the reply at most `max_tokens` long
        (the options' unless given)."""
        return {
            "model": self.options.model,
            "messages": list(messages),
            "temperature": 0,
            "max_tokens": max_tokens or self.options.max_tokens,
        }

    def _cache_file(self, body: dict[str, Any]) -> Path | None:
        if self.options.cache is None:
            return None
        key = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        return Path(self.options.cache).expanduser() / key[:2] / f"{key}.json"

    def chat(self, messages: Sequence[dict[str, str]], max_tokens: int | None = None) -> str | None:
        """The assistant's text for `messages`, from the cache or the endpoint; None after the
        endpoint failed every try (counted in `errors`, the reason in `last_error`)."""
        body = self.request(messages, max_tokens)
        cached = self._cache_file(body)
        if cached is not None and cached.is_file():
            try:
                reply = json.loads(cached.read_text(encoding="utf-8"))["reply"]
            except (OSError, ValueError, KeyError, TypeError):
                reply = None  # a damaged entry is asked for again
            if isinstance(reply, str):
                self.cached += 1
                return reply
        reply = self._post(body)
        if reply is None:
            self.errors += 1
            why = self.last_error or "no reply"
            self.failures[why] = self.failures.get(why, 0) + 1
            return None
        self.sent += 1
        if cached is not None:
            try:
                _write_atomic(cached, json.dumps({"request": body, "reply": reply}, ensure_ascii=False))
            except OSError as exc:  # the cache is a convenience: a full disk loses it, not the reply
                self.last_error = f"could not cache a reply in {cached.parent}: {exc}"
        return reply

    def _post(self, body: dict[str, Any]) -> str | None:
        url = self.options.url.rstrip("/") + "/chat/completions"
        for attempt in range(self.options.retries + 1):
            if attempt:
                time.sleep(self.options.backoff * 2 ** (attempt - 1))
            try:
                with httpx2.Client(timeout=self.options.timeout, headers=self._headers()) as client:
                    response = client.post(url, json=body)
            except httpx2.HTTPError as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUSES:
                self.last_error = f"HTTP {response.status_code} from {url}"
                continue
            if response.status_code != 200:
                self.last_error = f"HTTP {response.status_code} from {url}: {response.text[:200]}"
                return None  # (a 4xx other than a rate limit: asking again gives the same)
            try:
                choice = response.json()["choices"][0]
                content = choice["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                self.last_error = f"not a chat completion from {url}: {response.text[:200]}"
                return None
            if not isinstance(content, str):
                self.last_error = f"no text in the reply from {url}"
                return None
            if choice.get("finish_reason") == "length":  # (asking again gives the same cut reply)
                self.last_error = f"the reply from {url} was cut at {body.get('max_tokens')} tokens"
                return None
            return content.strip()
        return None


def _write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file, so that a concurrent reader sees all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


# -- what a rephrasing must keep ----------------------------------------------------------------


def stated_values(text: str) -> list[str]:
    """The values an instruction states, as they must appear: each quoted string's text, each
    word with a digit in it (numbers, ids, dates), each true / false / null; in order, once."""
    out: list[str] = []
    rest = text
    for quoted in _QUOTED.findall(text):
        try:
            value = json.loads(quoted)
        except ValueError:
            value = quoted[1:-1]
        out.append(str(value))
        rest = rest.replace(quoted, " ")
    out += [m.strip(".:-/#") for m in _WITH_DIGIT.findall(rest)]
    out += _LITERAL.findall(rest)
    return list(dict.fromkeys(v for v in out if v))


def rephrasing_problem(original: str, rephrased: str | None, tools: Iterable[str]) -> str | None:
    """Why `rephrased` may not replace `original` (None: it may): empty, a value dropped or
    added, or a tool named."""
    if rephrased is None or not rephrased.strip():
        return "empty"
    kept = stated_values(original)
    missing = [v for v in kept if v not in rephrased]
    if missing:
        return f"dropped a value: {missing[0]!r}"
    added = [v for v in stated_values(rephrased) if v not in original]
    if added:
        return f"added a value: {added[0]!r}"
    named = [t for t in tools if re.search(rf"(?<![\w]){re.escape(t)}(?![\w])", rephrased)]
    if named:
        return f"names a tool: {named[0]!r}"
    return None


def scenario_prompt(instruction: str, service: str) -> list[dict[str, str]]:
    """The messages asking for the request a person who uses `service` would send, written from
    the template's goal and facts (`stated_values`): who they are and why, then what they need."""
    facts = "\n".join(f"- {v}" for v in stated_values(instruction)) or "- (none)"
    return [
        {
            "role": "system",
            "content": "You write the message a person sends to an assistant that works "
            f"{service} for them. Decide who would ask for this (a customer, an admin, a teacher, "
            "a dispatcher, ...) and write their message in their own words: in a sentence, who "
            "they are or why they need it, then what they want done. State every fact listed "
            "exactly as written (quotation marks may go). Add no other number, id, date, email or "
            "name, and no detail the goal does not give. Never name a tool, a function, a field's "
            "internal name or the API. Reply with the message only.",
        },
        {"role": "user", "content": f"Goal: {instruction}\n\nFacts:\n{facts}"},
    ]


def lacks_description(description: str | None, name: str) -> bool:
    """Whether a description is missing, or only the name's words (what normalization falls back to)."""
    if not description or not description.strip():
        return True
    return description.strip().lower() == " ".join(words(name)).lower()


def description_prompt(kind: str, name: str, context: str) -> list[dict[str, str]]:
    """The messages asking for a one-sentence description of a tool or a table."""
    return [
        {
            "role": "system",
            "content": "You write API reference documentation. Reply with one plain sentence (at most "
            "40 words) describing the item, without markdown and without inventing behaviour the "
            "context does not show.",
        },
        {"role": "user", "content": f"Describe the {kind} `{name}`.\n\n{context}"},
    ]


def clean_description(text: str | None) -> str | None:
    """A model's description, one line and bounded; None when nothing usable came back."""
    if text is None:
        return None
    line = " ".join(text.replace("`", "").split())
    if not line:
        return None
    return line if len(line) <= MAX_DESCRIPTION else line[: MAX_DESCRIPTION - 1].rstrip() + "…"


# -- the steps of a domain ----------------------------------------------------------------------


def fill_descriptions(
    model: ChatModel, builder: DomainBuilder, plan: PlannedDomain, schema: DomainSchema, toolset: Toolset
) -> dict[str, int]:
    """Descriptions the spec lacked (a tool's that is only its name's words, a table's that is
    only `<entity> records`) written by the model into `builder`; ({"filled": n, "errors": n})."""
    counts = {"filled": 0, "errors": 0}
    apis = ", ".join(plan.apis) or "an API"
    raws = {raw["name"]: raw for raw in builder.tools}
    for tool in toolset.tools:
        op = schema.operations[tool.op_id]
        raw = raws.get(tool.name)
        if raw is None or not lacks_description(raw.get("description"), op.name):
            continue
        props = tool.input_schema.get("properties") or {}
        args = ", ".join(
            f"{k} ({v.get('type', 'any')}{': ' + str(v['description'])[:80] if v.get('description') else ''})"
            for k, v in list(props.items())[:15]
            if isinstance(v, dict)
        )
        context = f"It is a {tool.kind} operation of {apis} on {op.entity or 'records'}. Arguments: {args or 'none'}."
        _fill(model, raw, description_prompt("tool", tool.name, context), counts)
    for name, table in schema.tables.items():
        if table.description or name not in builder.tables:
            continue
        columns = ", ".join(list(table.columns)[:20])
        context = f"It is a table of {apis} holding {table.entity} records, with the columns {columns}."
        _fill(model, builder.tables[name], description_prompt("table", name, context), counts)
    return counts


def _fill(
    model: ChatModel, raw: dict[str, Any], prompt: list[dict[str, str]], counts: dict[str, int]
) -> None:
    text = clean_description(model.chat(prompt))
    if text is None:
        counts["errors"] += 1
        return
    raw["description"] = text
    counts["filled"] += 1


def write_scenarios(model: ChatModel, builder: DomainBuilder, domain: Domain, service: str) -> dict[str, int]:
    """Each kept task's request written again by the model as a person's (`scenario_prompt`),
    kept only when `rephrasing_problem` and the instruction checks (`instruction_problems`) find
    nothing and the task is still `valid` with the new words; otherwise the template stays.
    Returns {"scenarios": n, "<why the template stayed>": n}."""
    counts: dict[str, int] = {}
    tools = list(domain.tools)
    schemas = {name: tool.spec.input_schema for name, tool in domain.tools.items()}
    ids = domain_ids(domain)
    for raw in builder.tasks:
        original = raw["instruction"]
        reply = model.chat(scenario_prompt(original, service))
        if reply is None:
            why = "endpoint error"
        elif (problem := rephrasing_problem(original, reply, tools)) is not None:
            why = problem
        else:
            reply = " ".join(reply.split())
            task = Task.model_validate({**raw, "instruction": reply})
            problems = instruction_problems(
                reply, raw.get("calls") or [], schemas, call_results(domain, task)
            )
            verdict = None if problems else check_loaded_task(domain, task, ids=ids)
            if verdict is not None and verdict.valid:
                raw["instruction"] = reply
                counts["scenarios"] = counts.get("scenarios", 0) + 1
                continue
            why = f"instruction {problems[0][0]}" if problems else f"not valid: {verdict and verdict.status}"
        kind = why.split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    return counts
