"""The server's sessions as requests name them: a request's session key (`?session=`, the MCP
session, the stdio process), the check that it owns that session, a session opened on its first
call with its task, and ended with its connection (`end_connection`). A part of
`simulator.serve.server.DomainServer`.
"""

from __future__ import annotations

import hmac
import logging
import uuid
from typing import Any

import anyio.to_thread
from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.dependencies import fastmcp_request_ctx, get_context
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from ..errors import CapacityError, SessionError, clip_name
from ..runtime.domain import Domain
from ._mcprequest import explicit_session, http_query, request_client, request_handle
from .mcptools import HANDLE_META
from .serving import ServeConfig, TaskCatalog, TaskView
from .sessions import Session, SessionRegistry, new_handle, resolve_task, yielding

logger = logging.getLogger("toolgym.server")

NO_SESSION = (
    "This request belongs to no session. Connect with the MCP initialize handshake (official "
    "clients do so by default), or add ?session=<id> to the server URL."
)

_HANDSHAKE = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)


class ServerSessions:
    """Which session a request belongs to, and its start and end."""

    # set by DomainServer.__init__
    config: ServeConfig
    domain: Domain
    tasks: TaskCatalog
    default_task: TaskView | None
    default_seed: int | None
    sessions: SessionRegistry
    mcp: FastMCP
    _failing: dict[str, int]

    def request_task(self) -> TaskView | None:
        """The task of the current request's session: the live session's, else the one the
        request asks for (`?task=` over HTTP), else the server's default. Raises SessionError for an
        unknown task."""
        try:
            key, _, _, query, sid = self._session_key()
        except SessionError:
            key, query, sid = None, http_query(), None
        session = self.sessions.live.get(key) if key is not None else None
        if session is not None:
            self.check_owner(session, query, sid, request_handle())
            return session.task
        if query is None:
            return self.default_task
        task, _ = resolve_task(
            self.tasks, query.get("task"), query.get("seed"), self.default_task, self.default_seed
        )
        return task

    def _session_key(self) -> tuple[str, str, bool, Any, str | None]:
        """(key, name, reapable, HTTP query or None, MCP session id or None) of the current request.

        A handshake-era connection has an id for its whole life (fastmcp's `Context.session_id`):
        over HTTP its `mcp-session-id`, over stdio and in memory one made for it. A 2026-07-28
        request is a connection of its own, with no id."""
        rctx = fastmcp_request_ctx.get()
        cid = self._connection_id() if rctx is not None and rctx.protocol_version in _HANDSHAKE else None
        query = http_query()
        if query is not None:
            key, name = self.key_for(query, cid)
            return key, name, True, query, cid
        if cid is not None:
            return "c:" + cid, cid, False, None, None
        return "local", "", False, None, None

    def _context(self) -> Context:
        """The fastmcp `Context` of the current request (a fresh one reads the same request)."""
        try:
            return get_context()
        except RuntimeError:
            return Context(self.mcp)

    def _connection_id(self) -> str | None:
        try:
            return self._context().session_id
        except RuntimeError:  # no MCP session (yet)
            return None

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
        key, name, reapable, query, sid = self._session_key()
        session = self.sessions.get(key)
        if session is not None:
            self.check_owner(session, query, sid, request_handle())
            return session
        task, seed = resolve_task(
            self.tasks,
            query.get("task") if query is not None else None,
            query.get("seed") if query is not None else None,
            self.default_task,
            self.default_seed,
        )
        transport = "streamable-http" if query is not None else (self._context().transport or "memory")
        if not name:
            name = f"{transport}-{uuid.uuid4().hex[:12]}"
        owner, handle = None, None
        # over HTTP a handshake-era session ends with its connection (simulator.serve._handshakes); over
        # stdio and in memory with the server's lifespan, which those connections' ends end
        handshake = "s:" + sid if query is not None and sid else None
        if key.startswith("q:"):  # an explicit id: bound to the connection, or to a handle we issue
            if handshake is not None:
                owner = handshake
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
                connection=handshake,
            )
        except CapacityError as exc:  # its label names the session it would have been
            exc.session, exc.task = name, task.id if task is not None else None
            raise
        session.handle = handle
        session.errors_in_a_row = self._failing.get(session.client, 0)
        session.inline = self.config.inline_calls and transport != "streamable-http"
        session.stateful = key.startswith(("s:", "c:")) or (owner or "").startswith("s:")
        logger.info("session %s opened (task %s, seed %s)", session.name, task.id if task else None, seed)
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

    async def _end(self, key: str, reason: str = "session ended") -> None:
        """End the session `key`; it is finished (end record, database freed) off the event loop."""
        session = None
        try:
            session = self.sessions.release(key, reason, finish=False)
        except Exception:  # never let a problem here break the caller's teardown
            logger.exception("error while ending session %s", key)
        if session is not None:
            await self.finish(session)
            logger.info("session %s ended after %d calls", session.name, session.episode.calls)

    async def end_connection(self, key: str) -> None:
        """The HTTP connection `key` (`s:<mcp-session-id>`) ended: end its sessions and free its slot."""
        try:
            ended = self.sessions.end_connection(key)
        except Exception:  # never let a problem here break the caller's teardown
            logger.exception("error while ending connection %s", key)
            return
        for session in ended:
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
