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
import hmac
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
import fastmcp
from fastmcp import FastMCP
from fastmcp.exceptions import PromptError, ResourceError
from fastmcp.server.context import Context
from fastmcp.server.dependencies import fastmcp_request_ctx
from fastmcp.tools.base import ToolResult
from mcp_types import CallToolRequestParams, ToolAnnotations
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.middleware import Middleware as StarletteMiddleware

from .domain import Domain
from .errors import (
    INJECTED_FAULT,
    INTERNAL_ERROR,
    CapacityError,
    ErrorKind,
    InfraError,
    OperationError,
    SessionError,
    TaskError,
    ToolError,
    clip_name,
)
from .fastcall import DirectToolCalls, FastToolCalls
from .fastcall import unsupported as unsupported_fast_paths
from .handshakes import HandshakeGuard
from .heap import settle_heap
from .httpguard import body_limit, deadline_protocol, quiet_disconnects
from .labels import Key, label_token, runs_key
from .mcprequest import (
    SessionMiddleware,
    explicit_session,
    http_query,
    request_call,
    request_client,
    request_handle,
    session_id_of,
)
from .mcptools import (
    HANDLE_META,
    SUBMIT_ANSWER,
    SUBMIT_ANSWER_DESCRIPTION,
    SUBMIT_ANSWER_SCHEMA,
    DomainTool,
    error_result,
    ok_result,
    tool_annotations,
)
from .resends import CallRef, Resend, call_digest
from .serving import ServeConfig, TaskCatalog, TaskView, connection_limit, per_client_limit, serving_domain
from .sessions import Session, SessionRegistry, new_handle, resolve_task, yielding
from .turns import Turns

logger = logging.getLogger("toolgym.server")

NO_SESSION = (
    "This request belongs to no session. Connect with the MCP initialize handshake (official "
    "clients do so by default), or add ?session=<id> to the server URL."
)
NO_TASK = "No task is assigned to this session: help the user under the policy."

#: Seconds an idle HTTP connection is kept open (uvicorn's default is 5): an agent's session idles
#: between model turns for longer than that, and with 1,024 sessions the reconnections after a
#: pause came as a burst of ~1 ms of CPU each, in the latency tail.
KEEP_ALIVE_S = 120

#: Tool errors in a row after which a session's calls are slowed (see `DomainServer._back_off`).
ERROR_STREAK = 4
MAX_BACKOFF_S = 1.0

#: What the reaper ends at a time (connections closed, sessions finished), and its pause between
#: batches: closing hundreds of idle handshakes in one go held the event loop ~150 ms (~0.25 ms each).
REAP_BATCH = 4
REAP_PAUSE_S = 0.01

#: Calls of sessions calling back to back that run at once while other sessions are calling, and
#: the rest after each, as a multiple of its time (`simulator.turns`): a heavy client cannot fill
#: the CPU ahead of the agents calling now and then.
BUSY_TURNS = 1
BUSY_REST = 3.0


#: The listen queue, and how many connections the event loop accepts at a time (uvicorn's default is
#: 2,048): a connection past the cap is refused only once accepted, so a burst accepted at once held
#: sockets beyond `max_connections` until the loop refused them; in batches of this size, it is 16.
BACKLOG = 16

_CONNECTION_KEY = "toolgym.connection"
_HANDSHAKE = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)


# ---------------------------------------------------------------------------------------------
# the server


def _task(session: Session) -> str | None:
    """The id of a session's task (its labels are bound to it), or None."""
    return session.task.id if session.task is not None else None


def _slot(
    session: Session, name: str, arguments: dict[str, Any], ref: CallRef | None
) -> tuple[str | None, str | bytes | None]:
    """Where a call is kept in the session's memory of answers, and its digest (None, None: it
    cannot be recognised when resent)."""
    slot = ref.slot(session.stateful) if ref is not None else None
    return (slot, call_digest(slot, name, arguments)) if slot is not None else (None, None)


def _digest_and_call(
    session: Session, name: str, arguments: dict[str, Any], slot: str | None, into: list[Any] | None
) -> Any:
    """(In a worker thread) the call's digest appended to `into` (when given), then the call; its
    CPU time is left in `session.cost` (`simulator.turns`)."""
    started = time.thread_time()
    try:
        if slot is not None and into is not None:
            into.append(call_digest(slot, name, arguments))
        return session.episode.call(name, arguments)
    finally:
        session.cost = time.thread_time() - started


class DomainServer:
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
        self.fast_answered = 0  # tool calls the HTTP fast path answered (simulator.fastcall)
        self._endpoints: list[Any] = []  # the HTTP app's MCP endpoints (their SDK session managers)
        self.handshake_guard: HandshakeGuard | None = None  # the HTTP app's (it closes connections)
        self._reap_now: asyncio.Event | None = None  # wakes the reaper (set while it runs)
        self.mcp = FastMCP(
            domain.name,
            instructions=self.instructions(self.default_task),
            version=domain.version,
            mask_error_details=True,
            dereference_schemas=False,
            lifespan=self._lifespan,
            middleware=[SessionMiddleware(self)],
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
        # plain tool calls (a session's first included) skip fastmcp's per-call dispatch (simulator.fastcall)
        why_not = unsupported_fast_paths(self.mcp) if config.fast_calls else None
        if why_not is not None:
            logging.getLogger("toolgym.server").warning("fast tool-call paths off (%s)", why_not)
        self.fast_calls = config.fast_calls and why_not is None
        self.direct = DirectToolCalls(self) if self.fast_calls else None
        if self.direct is not None:
            self.mcp._mcp_server.add_request_handler("tools/call", CallToolRequestParams, self.direct)

    # -- what the agent reads ---------------------------------------------------------------

    def instructions(self, task: TaskView | None) -> str:
        """Server instructions: the domain policy, then the session's task instruction."""
        policy = self.domain.policy.strip() or self.domain.spec.description.strip()
        parts = [policy] if policy else []
        if task is not None:
            parts.append(f"## Your task\n\n{task.instruction.strip()}")
        return "\n\n".join(parts)

    def request_task(self) -> TaskView | None:
        """The task of the current request's session: the live session's, else the one the
        request asks for (`?task=` over HTTP), else the server's default. Raises SessionError for an
        unknown task."""
        try:
            key, _, _, query, conn = self._session_key()
        except SessionError:
            key, query, conn = None, http_query(), None
        session = self.sessions.live.get(key) if key is not None else None
        if session is not None:
            self.check_owner(session, query, session_id_of(conn), request_handle())
            return session.task
        if query is None:
            return self.default_task
        task, _ = resolve_task(
            self.tasks, query.get("task"), query.get("seed"), self.default_task, self.default_seed
        )
        return task

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

    # -- sessions -----------------------------------------------------------------------------

    def _session_key(self) -> tuple[str, str, bool, Any, Any]:
        """(key, name, reapable, HTTP query or None, connection or None) of the current request."""
        rctx = fastmcp_request_ctx.get()
        conn = getattr(rctx.session, "_connection", None) if rctx is not None else None
        query = http_query()
        if query is not None:
            key, name = self.key_for(query, conn.session_id if conn is not None else None)
            return key, name, True, query, conn
        if conn is not None and conn.protocol_version in _HANDSHAKE:
            cid = conn.state.get(_CONNECTION_KEY)
            if cid is None:
                cid = conn.state[_CONNECTION_KEY] = uuid.uuid4().hex
            return "c:" + cid, cid, False, None, conn
        return "local", "", False, None, conn

    def key_for(self, query: Any, connection_id: str | None) -> tuple[str, str]:
        """(key, name) of an HTTP request's session: its explicit `?session=` id, else its MCP
        session's id; SessionError when it has neither (or a malformed id)."""
        explicit = explicit_session(query)
        if explicit is not None:
            return "q:" + explicit, explicit
        if connection_id:
            return "s:" + connection_id, connection_id
        raise SessionError(NO_SESSION)

    def current_session(self) -> Session:
        """The session of the current request, created on first use (raises SessionError)."""
        key, name, reapable, query, conn = self._session_key()
        session = self.sessions.get(key)
        if session is not None:
            self.check_owner(session, query, session_id_of(conn), request_handle())
            return session
        task, seed = resolve_task(
            self.tasks,
            query.get("task") if query is not None else None,
            query.get("seed") if query is not None else None,
            self.default_task,
            self.default_seed,
        )
        # (no fastmcp Context is active on the direct path; a fresh one reads the transport it runs on)
        transport = "streamable-http" if query is not None else (Context(self.mcp).transport or "memory")
        if not name:
            name = f"{transport}-{uuid.uuid4().hex[:12]}"
        owner, handle = None, None
        handshake = (
            "s:" + conn.session_id if query is not None and conn is not None and conn.session_id else None
        )
        if key.startswith("q:"):  # an explicit id: bound to the connection, or to a handle we issue
            if conn is not None and conn.session_id:
                owner = "s:" + conn.session_id
            else:
                handle = new_handle()
                owner = "h:" + handle
        try:
            session = self.sessions.open(
                key,
                name,
                task,
                seed,
                transport=transport,
                reapable=reapable,
                client=request_client(),
                owner=owner,
                handshake=handshake,
            )
        except CapacityError as exc:  # its label names the session it would have been
            exc.session, exc.task = name, task.id if task is not None else None
            raise
        session.handle = handle
        session.errors_in_a_row = self._failing.get(session.client, 0)
        session.inline = self.config.inline_calls and transport != "streamable-http"
        session.stateful = key.startswith(("s:", "c:")) or (owner or "").startswith("s:")
        logger.info("session %s opened (task %s, seed %s)", session.name, task.id if task else None, seed)
        # End with the MCP session that created it (never per request: modern-era connections
        # last one request each and have no session id).
        if conn is not None and (conn.session_id or key.startswith("c:")):
            conn.exit_stack.push_async_callback(self._end, key, "session ended", handshake)
        return session

    def check_owner(
        self, session: Session, query: Any, connection_id: str | None, handle: str | None = None
    ) -> None:
        """Refuse (SessionError) a request that names a live session it does not own, or another
        task for it; `connection_id` is the request's MCP session id, `handle` the episode handle
        its `_meta` carries (else the URL's `&handle=` counts), if any."""
        owner = session.owner
        if owner is not None:
            if owner.startswith("s:"):
                ok = connection_id == owner[2:]
            else:
                given = handle if handle is not None else (query.get("handle") if query is not None else None)
                ok = isinstance(given, str) and hmac.compare_digest(given.encode(), owner[2:].encode())
            if not ok:
                how = (
                    "it is bound to the MCP session that opened it"
                    if owner.startswith("s:")
                    else f"pass the handle its first result returned in _meta[{HANDLE_META!r}] back in "
                    f"each request's _meta[{HANDLE_META!r}] (or as &handle= in the URL)"
                )
                raise SessionError(
                    f"Session {session.name!r} belongs to another connection: {how}. "
                    "To start your own episode, use a new session id."
                )
        wanted = query.get("task") if query is not None else None
        current = session.task.id if session.task is not None else None
        if wanted and wanted != current:
            raise SessionError(
                f"Session {session.name!r} is working on task {current!r}, not {clip_name(wanted)!r}; "
                "a session's task cannot change. Use a new session id for another task."
            )

    async def _end(self, key: str, reason: str = "session ended", handshake: str | None = None) -> None:
        """End the session `key`, and the connection `handshake` (when the connection ended); the
        session is finished (end record, database freed) off the event loop (`finish`)."""
        session = None
        try:
            session = self.sessions.release(key, reason, finish=False)
        except Exception:  # never let a problem here break the SDK's teardown
            logger.exception("error while ending session %s", key)
        if handshake is not None:
            self.sessions.end_handshake(handshake)
        if session is not None:
            await self.finish(session)
            logger.info("session %s ended after %d calls", session.name, session.episode.calls)

    async def finish(self, session: Session) -> None:
        """Write an ended session's end record and free its database: in a worker thread for an HTTP
        session (a database grown to its cap takes ~80 ms to digest), inline for the one client of
        memory and stdio. Never raises: a transcript problem is logged, not the SDK's teardown's."""
        try:
            if not session.inline:
                with anyio.CancelScope(shield=True):  # (also when the connection's teardown is cancelled)
                    await anyio.to_thread.run_sync(session.finish, yielding())
            session.finish()  # (a no-op once finished)
        except Exception:
            logger.exception("error while ending session %s", session.name)

    def _labelled(
        self,
        message: str,
        session: str,
        index: int,
        tool: str,
        arguments: Any,
        kind: str,
        task: str | None = None,
    ) -> str:
        """An infrastructure error's text with the server's label token, bound to the session, its
        task and the call's index (verifiable by scoring)."""
        return f"{message} {label_token(self.key, session, index, tool, arguments, kind, task)}"

    def capacity_refusal(
        self, message: str, name: str, arguments: Any, session: str = "", task: str | None = None
    ) -> ToolResult:
        """A call refused for want of capacity: the message with the server's signed label, as
        call 0 of the session it would have opened (a label naming no session is never believed)."""
        return error_result(self._labelled(message, session, 0, name, arguments, ErrorKind.CAPACITY, task))

    def _open_or_refuse(
        self, name: str, arguments: dict[str, Any], ref: CallRef | None
    ) -> Session | ToolResult:
        try:
            return self.current_session()
        except CapacityError as exc:
            return self.capacity_refusal(str(exc), name, arguments, exc.session, exc.task)
        except SessionError as exc:
            late = self._late_resend(name, arguments, ref)
            return late if late is not None else error_result(str(exc))
        except Exception:
            self.internal_errors += 1
            logger.exception("internal error while opening a session for %s", name)
            return error_result(INTERNAL_ERROR.format(tool=name))

    async def call(self, name: str, arguments: dict[str, Any], ref: CallRef | None = None) -> ToolResult:
        """Run one tool call in the current session; errors become `isError` results.

        Over HTTP the call runs in a worker thread, so one slow call never holds the event loop
        and the other sessions (the episode's own budget bounds it); in memory and over stdio,
        where one client process is served, it runs on the loop (`inline_calls`): a thread hop
        costs milliseconds of wake-up latency on a loaded machine. A `ToolError` is the agent's;
        an `InfraError` (a timeout the server imposed, a storage failure) carries the server's
        signed label; anything else is a bug, logged, counted and masked, but never labelled: it
        stays the agent's call. `ref` names the call for resends (default: read from the request).
        """
        if name not in self.domain.tools:
            name = clip_name(name)  # (a name the domain lacks is repeated, bounded)
        try:
            ref = request_call() if ref is None else ref
        except ValueError as exc:  # a malformed call id: nothing runs
            return error_result(str(exc))
        session = self._open_or_refuse(name, arguments, ref)
        if not isinstance(session, Session):
            return session
        return await self.call_in(session, name, arguments, ref)

    async def call_in(
        self, session: Session, name: str, arguments: dict[str, Any], ref: CallRef | None = None
    ) -> ToolResult:
        """Run one tool call in `session` (the SDK path and the HTTP fast path both end here); a
        resend of a recorded call (`ref`: `simulator.resends`) gets its answer and is not run again."""
        async with session.gate:  # one call of a session at a time: no session holds many workers
            slot = ref.slot(session.stateful) if ref is not None else None
            digest: str | bytes | None = None
            # a new call's digest is computed beside it in its worker thread (a 1 MB argument list
            # takes milliseconds to digest: not on the event loop); a possible resend's, here
            later: list[str | bytes | None] | None = None
            if slot is not None and (session.inline or slot in session.calls):
                digest = call_digest(slot, name, arguments)
                if (resend := session.calls.find(slot, digest)) is not None:
                    return self._resent(session, resend, name, ref)
            elif slot is not None:
                later = []
            before = session.episode.calls
            await self._back_off(session)
            if session.inline:
                result, server_fault = await self._run(session, name, arguments)
            else:
                async with self.turns.turn(session):
                    result, server_fault = await self._run(session, name, arguments, (slot, later))
            if slot is not None and later is not None:
                digest = later[0] if later else call_digest(slot, name, arguments)
            if not server_fault:
                self._note_outcome(session, failed=result.is_error)
            if session.handle is not None:  # a stateless session's first answer carries its handle, once
                result.meta = {**(result.meta or {}), HANDLE_META: session.handle}
                session.handle = None
            if slot is not None:
                index = session.episode.calls - 1 if session.episode.calls > before else None
                session.calls.keep(slot, digest, index, result)
        return result

    def _resent(self, session: Session, resend: Resend, name: str, ref: CallRef | None) -> ToolResult:
        """A resend's answer, noted in the transcript (as a resend, never as a call)."""
        assert ref is not None
        try:
            session.note(resend.record(name, ref))
        except OSError:  # the answer stands; only the note of the resend is lost
            logger.exception("could not record a resend in session %s", session.name)
        return resend.result

    def _late_resend(self, name: str, arguments: dict[str, Any], ref: CallRef | None) -> ToolResult | None:
        """The recorded answer of a resend to the request's session that has just ended (the answer
        to its `submit_answer`, say), or None. Not noted: the transcript is closed."""
        if ref is None:
            return None
        try:
            key, _, _, query, conn = self._session_key()
            session = self.sessions.recent.get(key)
            if session is None:
                return None
            self.check_owner(session, query, session_id_of(conn), request_handle())
        except SessionError:
            return None
        slot, digest = _slot(session, name, arguments, ref)
        resend = session.calls.find(slot, digest) if slot is not None else None
        return resend.result if resend is not None else None

    def _note_outcome(self, session: Session, failed: bool) -> None:
        """Keep the error streaks the back-off reads: the session's own, and its client's.

        A client's streak counts the tool errors of its sessions that never succeeded (and the
        request bodies refused as too large); a new session starts from it, so reconnecting does
        not wipe the slate, and a new session's first success clears it.
        """
        if not failed:
            session.errors_in_a_row = 0
            if not session.succeeded:
                session.succeeded = True
                self._failing.pop(session.client, None)
            return
        session.errors_in_a_row += 1
        if not session.succeeded:
            self.note_refusal(session.client)

    def note_refusal(self, client: str) -> None:
        """One more failure of a client that has not succeeded lately (bounded memory)."""
        if len(self._failing) > 100_000:
            self._failing.clear()
        self._failing[client] = self._failing.get(client, 0) + 1

    async def _back_off(self, session: Session) -> None:
        """Slow a session that keeps failing: after `ERROR_STREAK` tool errors in a row, each further
        call waits `error_backoff_s` x 2^k (at most `MAX_BACKOFF_S`) before it runs, k counting the
        errors past the streak. Its own calls wait; nothing of the server does, so a client looping
        hostile calls gets little of the server while others keep theirs. Results are unchanged."""
        await self.back_off(session.errors_in_a_row)

    async def back_off(self, streak: int) -> None:
        over = streak - ERROR_STREAK
        if self.error_backoff_s > 0 and over >= 0:
            await asyncio.sleep(min(MAX_BACKOFF_S, self.error_backoff_s * 2 ** min(over, 16)))

    async def _run(
        self,
        session: Session,
        name: str,
        arguments: dict[str, Any],
        digest: tuple[str | None, list[str | bytes | None] | None] = (None, None),
    ) -> tuple[ToolResult, bool]:
        """The call's result, and whether it is a failure the server labelled as its own; `digest`
        (slot, list): the call's digest is appended to the list in its worker thread, first."""
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if session.ended is not None:
            return error_result(f"This session has ended ({session.ended}). Start a new session."), False
        episode = session.episode
        if self.sessions.inject_fault(session):
            episode.fail(name, arguments, INJECTED_FAULT, injected=True)
            text = self._labelled(
                INJECTED_FAULT,
                session.name,
                episode.calls - 1,
                name,
                arguments,
                ErrorKind.INJECTED,
                _task(session),
            )
            return error_result(text), True
        try:
            if session.inline:
                value = episode.call(name, arguments)
            else:
                value = await anyio.to_thread.run_sync(_digest_and_call, session, name, arguments, *digest)
        except InfraError as exc:
            text = self._labelled(
                str(exc), session.name, episode.calls - 1, name, arguments, exc.kind, _task(session)
            )
            if exc.kind is ErrorKind.STORAGE:  # the transcript cannot be trusted to go on
                logger.error("storage failure in session %s: %s", session.name, exc)
                await self._end(session.key, "storage failure")
            return error_result(text), True
        except OperationError as exc:  # the agent's error, but one no precise check caught: log it
            self.unguarded_errors += 1
            logger.warning("unguarded error in %s (session %s)", name, session.name, exc_info=exc.__cause__)
            return error_result(str(exc)), False
        except ToolError as exc:
            return error_result(str(exc)), False
        except Exception:
            self.internal_errors += 1
            logger.exception("internal error in %s (session %s)", name, session.name)
            return error_result(INTERNAL_ERROR.format(tool=name)), False
        return ok_result(value), False

    async def submit(self, name: str, arguments: dict[str, Any], ref: CallRef | None = None) -> ToolResult:
        """The answer channel: record the agent's final answer as its message and end the session."""
        try:
            ref = request_call() if ref is None else ref
        except ValueError as exc:
            return error_result(str(exc))
        session = self._open_or_refuse(name, arguments, ref)
        if not isinstance(session, Session):
            return session
        return await self.submit_in(session, name, arguments, ref)

    async def submit_in(
        self, session: Session, name: str, arguments: dict[str, Any], ref: CallRef | None = None
    ) -> ToolResult:
        """Record `session`'s final answer and end it (a resend gets the recorded answer)."""
        async with session.gate:
            slot, digest = _slot(session, name, arguments, ref)
            if slot is not None and (resend := session.calls.find(slot, digest)) is not None:
                return self._resent(session, resend, name, ref)
            result, submitted = self._submit(session, arguments)
            if slot is not None:  # (before the end: an ended session keeps what it remembers)
                session.calls.keep(slot, digest, None, result)
            if submitted:
                await self._end(session.key, "answer submitted")
        return result

    def _submit(self, session: Session, arguments: dict[str, Any]) -> tuple[ToolResult, bool]:
        """The answer to a `submit_answer` call, and whether it recorded the answer."""
        if session.ended is not None:
            return error_result(f"This session has ended ({session.ended}). Start a new session."), False
        answer = arguments.get("answer") if isinstance(arguments, dict) else None
        extra = set(arguments) - {"answer"} if isinstance(arguments, dict) else set()
        if not isinstance(answer, str) or extra or len(answer) > 20000:
            message = (
                f"Invalid arguments for {SUBMIT_ANSWER}: give exactly one argument, `answer`, a string "
                "of at most 20000 characters."
            )
            return error_result(message), False
        with session.episode.lock:
            session.episode.say(answer)
        done = {"status": "submitted", "message": "Your answer was recorded; this session has ended."}
        return ok_result(done), True

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
        """The streamable-HTTP ASGI app: stateful sessions that end after `idle_timeout` (None: never)."""
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
        if self.fast_calls:  # behind the guards: see simulator.fastcall
            guards["middleware"].append(StarletteMiddleware(FastToolCalls, server=self, path=path))
        if self.idle_timeout:
            app = self.mcp.http_app(
                path=path, stateless_http=False, session_idle_timeout=self.idle_timeout, **guards
            )
        else:
            # http_app reads "never" (None) from the settings, not from its argument
            saved = fastmcp.settings.http_session_idle_timeout
            fastmcp.settings.http_session_idle_timeout = None
            try:
                app = self.mcp.http_app(path=path, stateless_http=False, **guards)
            finally:
                fastmcp.settings.http_session_idle_timeout = saved
        self._endpoints = [
            endpoint
            for route in app.router.routes
            if hasattr(endpoint := getattr(route, "endpoint", None), "session_manager")
        ]
        return app

    @property
    def session_manager(self) -> Any | None:
        """The SDK's streamable-HTTP session manager of the running HTTP app, if any."""
        for endpoint in self._endpoints:
            if endpoint.session_manager is not None:
                return endpoint.session_manager
        return None

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
        (`simulator.heap.settle_heap`: the start-up heap frozen, young collections rarer), which
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
        (`simulator.serving.per_client_limit`)."""
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
