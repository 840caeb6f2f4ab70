"""The MCP server: a loaded domain served over MCP (fastmcp), one isolated episode per session.

    server = DomainServer(load_domain("bank"), runs="runs")
    server.run("http", host="127.0.0.1", port=8000)  # or "stdio"; tests: fastmcp.Client(server.mcp)

Every domain tool is an MCP tool with the domain's name, description and input schema. Each
session (`?session=` in the URL, else the HTTP `mcp-session-id`) gets its own episode on its first
tool call; the agent sees the policy and its task's instruction, never gold calls or answers.
The agent-facing runtime: it never imports `scoring`. Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import fastmcp
from fastmcp import FastMCP
from fastmcp.exceptions import PromptError, ResourceError
from mcp_types import ToolAnnotations
from starlette.middleware import Middleware as StarletteMiddleware

from ..errors import SessionError, TaskError
from ..runtime.domain import Domain
from ._fastcall import DirectToolCalls, FastToolCalls
from ._handshakes import HandshakeGuard
from ._heap import settle_heap
from ._httpguard import body_limit, deadline_protocol, quiet_disconnects
from ._mcprequest import SessionMiddleware
from ._servercalls import ServerCalls
from ._turns import Turns
from .labels import Key, runs_key
from .mcptools import (
    SUBMIT_ANSWER,
    SUBMIT_ANSWER_DESCRIPTION,
    SUBMIT_ANSWER_SCHEMA,
    DomainTool,
    tool_annotations,
)
from .serving import ServeConfig, TaskCatalog, TaskView, connection_limit, per_client_limit, serving_domain
from .sessions import SessionRegistry

logger = logging.getLogger("toolgym.server")

NO_TASK = "No task is assigned to this session: help the user under the policy."

#: Seconds an idle HTTP connection is kept open (uvicorn's default is 5): an agent's session idles
#: between model turns for longer than that, and with 1,024 sessions the reconnections after a
#: pause came as a burst of ~1 ms of CPU each, in the latency tail.
KEEP_ALIVE_S = 120

#: What the reaper ends at a time (connections closed, sessions finished), and its pause between
#: batches: closing hundreds of idle handshakes in one go held the event loop ~150 ms (~0.25 ms each).
REAP_BATCH = 4
REAP_PAUSE_S = 0.01

#: Calls of sessions calling back to back that run at once while other sessions are calling, and
#: the rest after each, as a multiple of its time (`simulator.serve._turns`): a heavy client cannot fill
#: the CPU ahead of the agents calling now and then.
BUSY_TURNS = 1
BUSY_REST = 3.0


#: The listen queue, and how many connections the event loop accepts at a time (uvicorn's default is
#: 2,048): a connection past the cap is refused only once accepted, so a burst accepted at once held
#: sockets beyond `max_connections` until the loop refused them; in batches of this size, it is 16.
BACKLOG = 16


class DomainServer(ServerCalls):
    """A domain served over MCP; `mcp` is the FastMCP server, `sessions` the live episodes."""

    def __init__(
        self,
        domain: Domain,
        config: ServeConfig | None = None,
        *,
        key: Key | None = None,
        **options: Any,
    ):
        """Serve `domain` under `config`; keyword `options` (any `ServeConfig` field) change it.

        The server keeps views of the tasks it serves (`config.tasks`, default all) and a copy of
        the domain without tasks: nothing of gold calls, expected states or answer facts.
        Raises TaskError when the default task or a listed one is not the domain's, or not served.
        """
        config = (config if config is not None else ServeConfig()).with_options(**options)
        self.config = config
        self.tasks = TaskCatalog(domain, config.tasks)
        self.domain = serving_domain(domain)
        try:
            self.default_task = self.tasks.get(config.task) if config.task is not None else None
        except SessionError as exc:
            raise TaskError(str(exc)) from None
        self.default_seed = config.seed
        self.latency_s = max(0.0, config.latency_ms) / 1000.0
        self.idle_timeout = config.idle_timeout
        if key is None:
            key = runs_key(config.runs, create=True) if config.runs is not None else None
        self.key: Key = key if key is not None else Key.generate()
        self.error_backoff_s = max(0.0, config.error_backoff_ms) / 1000.0
        # client -> tool errors (and refused bodies) in a row of its sessions that never succeeded
        self._failing: dict[str, int] = {}
        self.sessions = SessionRegistry(self.domain, config, key=self.key)
        self.turns = Turns(BUSY_TURNS, BUSY_REST)  # HTTP calls' turns (in memory and stdio: one client)
        self.internal_errors = 0
        self.unguarded_errors = 0
        self.fast_answered = 0  # tool calls the HTTP fast path answered (simulator.serve._fastcall)
        self.handshake_guard: HandshakeGuard | None = None  # the HTTP app's (it closes connections)
        self._reap_now: asyncio.Event | None = None  # wakes the reaper (set while it runs)
        self.fast_calls = config.fast_calls
        # plain tool calls (a session's first included) skip fastmcp's tool lookup and run (simulator.serve._fastcall)
        self.direct = DirectToolCalls(self) if self.fast_calls else None
        self.mcp = FastMCP(
            domain.name,
            instructions=self.instructions(self.default_task),
            version=domain.version,
            mask_error_details=True,
            dereference_schemas=False,
            lifespan=self._lifespan,
            middleware=[*([self.direct] if self.direct is not None else []), SessionMiddleware(self)],
        )
        for compiled in domain.tools.values():
            spec = compiled.spec
            self.mcp.add_tool(
                DomainTool(
                    name=spec.name,
                    description=spec.description,
                    parameters=spec.input_schema,
                    annotations=tool_annotations(compiled),
                    call=self.call,
                )
            )
        self.mcp.add_tool(
            DomainTool(
                name=SUBMIT_ANSWER,
                description=SUBMIT_ANSWER_DESCRIPTION,
                parameters=SUBMIT_ANSWER_SCHEMA,
                annotations=ToolAnnotations(
                    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
                ),
                call=self.submit,
            )
        )
        self._add_task_surface()

    # -- what the agent reads ---------------------------------------------------------------

    def instructions(self, task: TaskView | None) -> str:
        """Server instructions: the domain policy, then the session's task instruction."""
        policy = self.domain.policy.strip() or self.domain.spec.description.strip()
        parts = [policy] if policy else []
        if task is not None:
            parts.append(f"## Your task\n\n{task.instruction.strip()}")
        return "\n\n".join(parts)

    def _add_task_surface(self) -> None:
        def instruction() -> str:
            task = self.request_task()
            return task.instruction if task is not None else NO_TASK

        @self.mcp.resource(
            "task://instruction",
            name="task_instruction",
            mime_type="text/plain",
            description="The instruction of this session's task.",
        )
        async def task_instruction() -> str:
            try:
                return instruction()
            except SessionError as exc:
                raise ResourceError(str(exc)) from None

        @self.mcp.resource(
            "domain://policy",
            name="policy",
            mime_type="text/markdown",
            description=f"The policy of the {self.domain.name} domain the agent must follow.",
        )
        async def policy() -> str:
            return self.domain.policy

        @self.mcp.prompt(name="task", description="This session's task: the instruction to carry out.")
        async def task_prompt() -> str:
            try:
                return instruction()
            except SessionError as exc:
                raise PromptError(str(exc)) from None

    # -- lifecycle ----------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _lifespan(self, server: FastMCP) -> AsyncIterator[dict[str, Any]]:
        # A plain task, not an anyio task group (fastmcp closes lifespans in a shielded scope).
        reaping = self.idle_timeout or self.config.handshake_timeout
        reaper = None
        if reaping:
            self._reap_now = asyncio.Event()
            self.sessions.finishing = []  # the reaper finishes reaped sessions, off the loop
            self.sessions.on_reap = self.wake_reaper  # (a reap when a slot is wanted: settled now)
            reaper = asyncio.create_task(self._reap_forever(self._reap_now))
        try:
            yield {"sessions": self.sessions}
        finally:
            if reaper is not None:
                reaper.cancel()
            self._reap_now = None
            self.sessions.on_reap = None
            # In memory and over stdio the lifespan ends when the connections do (no public hook
            # tells one connection's end sooner): their sessions ended with their connections.
            for key in [k for k in self.sessions.live if k.startswith("c:")]:
                self.sessions.release(key, "session ended")
            self.sessions.release_all("server stopped")

    def wake_reaper(self) -> None:
        """Have the reaper settle what the registry reaped now, not at its next round."""
        if self._reap_now is not None:
            self._reap_now.set()

    async def _reap_forever(self, wake: asyncio.Event) -> None:
        timeouts = [t for t in (self.idle_timeout, self.config.handshake_timeout) if t]
        interval = min(max(min(timeouts) / 4, 0.05), 30.0)
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), interval)
            wake.clear()
            for key in self.sessions.reap():
                logger.info("session %s reaped after %g s idle", key, self.idle_timeout)
            await self.settle_reaped()

    async def settle_reaped(self) -> None:
        """Finish the sessions and close the connections the registry reaped, `REAP_BATCH` at a time
        with `REAP_PAUSE_S` between batches: a mass reap (hundreds of idle handshakes at once) is
        spread over many turns of the event loop instead of holding it."""
        finishing = self.sessions.finishing
        while finishing:
            turn = finishing[:REAP_BATCH]
            del finishing[: len(turn)]
            for session in turn:
                await self.finish(session)
            await asyncio.sleep(REAP_PAUSE_S)
        if self.handshake_guard is not None:
            await self.handshake_guard.close_reaped(REAP_BATCH, REAP_PAUSE_S)

    def http_app(self, path: str = "/mcp") -> Any:
        """The streamable-HTTP ASGI app: stateful sessions that end after `idle_timeout` (None: never).

        The server, not the SDK, ends an idle connection (`SessionRegistry.reap`): it sends the SDK
        the DELETE its client would send, so the SDK runs with no idle timeout of its own."""
        quiet_disconnects()  # (the body deadline's closes would each log an SDK traceback)
        guards: dict[str, Any] = {
            "host_origin_protection": True,  # Host and Origin checked (DNS rebinding): localhost by default
            "allowed_hosts": list(self.config.allow_hosts),
            "allowed_origins": list(self.config.allow_origins),
            "middleware": [
                body_limit(self.config.max_body_bytes, on_refused=self.note_refusal),
                StarletteMiddleware(HandshakeGuard, server=self, path=path),
            ],
        }
        if self.fast_calls:  # behind the guards: see simulator.serve._fastcall
            guards["middleware"].append(StarletteMiddleware(FastToolCalls, server=self, path=path))
        # http_app reads "never" (None) from the settings, not from its argument
        saved = fastmcp.settings.http_session_idle_timeout
        fastmcp.settings.http_session_idle_timeout = None
        try:
            return self.mcp.http_app(path=path, stateless_http=False, **guards)
        finally:
            fastmcp.settings.http_session_idle_timeout = saved

    async def run_async(
        self,
        transport: str = "stdio",
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        *,
        own_process: bool = False,
    ) -> None:
        """Serve until stopped: `stdio`, or `http` (streamable HTTP) on host:port/path.

        `own_process`: the process does nothing else, so its garbage collector is set for serving
        (`simulator.serve._heap.settle_heap`: the start-up heap frozen, young collections rarer), which
        keeps full-collection pauses out of the latency tail with many live sessions.
        """
        if transport not in ("stdio", "http", "streamable-http"):
            raise ValueError(f"unknown transport {transport!r}: use stdio or http")
        if transport == "stdio":
            if own_process:
                settle_heap()
            await self.mcp.run_async(transport="stdio", show_banner=False)
            return
        import uvicorn

        config = self.uvicorn_config(host, port, path)
        if own_process:
            settle_heap()
        await uvicorn.Server(config).serve()

    def uvicorn_config(self, host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp") -> Any:
        """The uvicorn configuration of the HTTP server on host:port: keep-alive, read deadlines, the
        cap on open connections, and the per-client limit for that address
        (`simulator.serve.serving.per_client_limit`)."""
        import uvicorn

        self.sessions.max_per_client = per_client_limit(self.config, host)
        return uvicorn.Config(
            self.http_app(path),
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            access_log=False,
            timeout_keep_alive=KEEP_ALIVE_S,
            backlog=BACKLOG,
            http=deadline_protocol(
                self.config.header_timeout, self.config.body_timeout, connection_limit(self.config)
            ),
        )

    def run(
        self,
        transport: str = "stdio",
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        *,
        own_process: bool = False,
    ) -> None:
        asyncio.run(self.run_async(transport, host=host, port=port, path=path, own_process=own_process))
