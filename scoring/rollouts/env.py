"""Where a policy acts: an episode reached in-process or through the MCP server agents use.

`InProcessEnv` calls a session of the server's registry directly; `McpEnv` is a real MCP client
of a `DomainServer`. Both give a policy the same tools, domain policy, instruction, `call` and
`answer`, and both write the server's signed transcript. An `Observation` is one call's result.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fastmcp import Client

from simulator import Domain, InfraError, ToolError
from simulator.errors import INJECTED_FAULT, ErrorKind
from simulator.serve.labels import Key, read_label
from simulator.serve.mcptools import SUBMIT_ANSWER, SUBMIT_ANSWER_DESCRIPTION, SUBMIT_ANSWER_SCHEMA
from simulator.serve.resends import CALL_ID_META
from simulator.serve.server import DomainServer
from simulator.serve.serving import ServeConfig, TaskView, serving_domain
from simulator.serve.sessions import SessionRegistry

from ..tasks import Task


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the agent sees it."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool


@dataclass(frozen=True)
class Observation:
    """What one call gave the agent: its result (`value`, parsed), or an error text."""

    ok: bool
    text: str
    value: Any = None
    fault: str | None = None  # the server's label kind, when the failure is the server's own


ANSWER_TOOL = ToolInfo(SUBMIT_ANSWER, SUBMIT_ANSWER_DESCRIPTION, SUBMIT_ANSWER_SCHEMA, False)


class Env(Protocol):
    """What a policy sees and does."""

    tools: list[ToolInfo]
    policy: str
    instruction: str

    async def call(self, name: str, arguments: dict[str, Any]) -> Observation: ...

    async def answer(self, text: str) -> None: ...


def domain_tools(domain: Domain) -> list[ToolInfo]:
    """The domain's tools as the server lists them, then `submit_answer`."""
    return [
        *(
            ToolInfo(t.spec.name, t.spec.description, t.spec.input_schema, t.spec.kind == "read")
            for t in domain.tools.values()
        ),
        ANSWER_TOOL,
    ]


class InProcessEnv:
    """A session of the server's registry, called directly; `close()` writes the end record."""

    def __init__(self, registry: SessionRegistry, name: str, task: Task, seed: int):
        self.registry = registry
        self.name = name
        self.session = registry.open(name, name, TaskView.of(task), seed, transport="in-process")
        self.tools = domain_tools(registry.domain)
        self.policy = registry.domain.policy.strip()
        self.instruction = task.instruction.strip()
        self.transcript = self.session.transcript

    async def call(self, name: str, arguments: dict[str, Any]) -> Observation:
        episode = self.session.episode
        if self.session.ended is not None:
            return Observation(False, f"This session has ended ({self.session.ended}).")
        if self.registry.inject_fault(self.session):
            episode.fail(name, arguments, INJECTED_FAULT, injected=True)
            return Observation(False, INJECTED_FAULT, fault=ErrorKind.INJECTED.value)
        try:
            value = episode.call(name, arguments)
        except InfraError as exc:
            return Observation(False, str(exc), fault=exc.kind.value)
        except ToolError as exc:
            return Observation(False, str(exc))
        return Observation(True, json.dumps(value, ensure_ascii=False, default=str), value=value)

    async def answer(self, text: str) -> None:
        if self.session.ended is None:
            self.session.episode.say(text)
            self.registry.release(self.name, "answer submitted")

    def close(self, reason: str = "rollout ended") -> None:
        self.registry.release(self.name, reason)


def in_process_registry(
    domain: Domain, runs: Path, key: Key, fault_rate: float, fault_seed: int
) -> SessionRegistry:
    """The registry in-process rollouts of one domain share (the served copy of it: no tasks)."""
    config = ServeConfig(runs=runs, fault_rate=fault_rate, fault_seed=fault_seed, idle_timeout=None)
    return SessionRegistry(serving_domain(domain), config, key=key)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


class McpEnv:
    """A real MCP client session of a `DomainServer` (in memory); use `async with`."""

    def __init__(self, server: DomainServer):
        self.server = server
        self.client = Client(server.mcp, mode="legacy")
        self.tools: list[ToolInfo] = []
        self.policy = ""
        self.instruction = ""
        self.transcript: Path | None = None
        self.ended = False
        self._before: set[str] = set()

    async def __aenter__(self) -> McpEnv:
        self._before = set(self.server.sessions.ended)
        await self.client.__aenter__()
        listed = await self.client.list_tools()
        self.tools = [
            ToolInfo(
                t.name,
                t.description or "",
                dict(t.input_schema),
                bool(t.annotations is not None and t.annotations.read_only_hint),
            )
            for t in listed
        ]
        self.policy = (await self.client.read_resource("domain://policy"))[0].text.strip()  # type: ignore[union-attr]
        self.instruction = (await self.client.read_resource("task://instruction"))[0].text.strip()  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.__aexit__(*exc)

    def _note_session(self) -> None:
        """The transcript of this connection's session: the server's only live one (a worker uses
        a server for one connection at a time), or, once it ended, the one that ended since."""
        if self.transcript is not None:
            return
        live = list(self.server.sessions.live.values())
        if len(live) == 1:
            self.transcript = live[0].transcript
            return
        runs = self.server.config.runs
        ended = [k for k in self.server.sessions.ended if k not in self._before]
        if runs is not None and len(ended) == 1 and ended[0].startswith("c:"):
            path = runs / f"{ended[0][2:]}.jsonl"  # a connection's session is named by its id
            self.transcript = path if path.is_file() else None

    async def call(self, name: str, arguments: dict[str, Any]) -> Observation:
        if self.ended:
            return Observation(False, "This session has ended (answer submitted).")
        result = await self._call(name, arguments)
        self._note_session()
        text = _text(result)
        if result.is_error:
            label = read_label(text)
            kind = ErrorKind.read(label.kind) if label is not None else None
            return Observation(False, text, fault=kind.value if kind is not None and kind.is_infra else None)
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        return Observation(True, text, value=value)

    async def answer(self, text: str) -> None:
        if not self.ended:
            await self._call(SUBMIT_ANSWER, {"answer": text})
            self._note_session()
            self.ended = True

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        """One logical call, with its own call id (the one a resend of it would repeat)."""
        meta = {CALL_ID_META: uuid.uuid4().hex}
        return await self.client.call_tool(name, arguments, raise_on_error=False, meta=meta)
