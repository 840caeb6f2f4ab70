"""One tool call or final answer in a server session: a resend answered from memory, the back-off of
a failing session, turns for busy ones, injected faults, the call run inline or in a worker
thread, and every error made an `isError` result (the server's own signed). A part of
`simulator.serve.server.DomainServer`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import anyio.to_thread
from fastmcp.tools.base import ToolResult

from ..errors import (
    INJECTED_FAULT,
    INTERNAL_ERROR,
    CapacityError,
    ErrorKind,
    InfraError,
    OperationError,
    SessionError,
    ToolError,
    clip_name,
)
from ._mcprequest import request_call, request_handle
from ._serversessions import ServerSessions
from ._turns import Turns
from .labels import Key, label_token
from .mcptools import HANDLE_META, SUBMIT_ANSWER, error_result, ok_result
from .resends import CallRef, Resend, call_digest
from .sessions import Session

logger = logging.getLogger("toolgym.server")

#: Tool errors in a row after which a session's calls are slowed (see `DomainServer._back_off`).
ERROR_STREAK = 4
MAX_BACKOFF_S = 1.0


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
    CPU time is left in `session.cost` (`simulator.serve._turns`)."""
    started = time.thread_time()
    try:
        if slot is not None and into is not None:
            into.append(call_digest(slot, name, arguments))
        return session.episode.call(name, arguments)
    finally:
        session.cost = time.thread_time() - started


class ServerCalls(ServerSessions):
    """Tool calls and `submit_answer` in the request's session."""

    # set by DomainServer.__init__
    key: Key
    turns: Turns
    latency_s: float
    error_backoff_s: float
    internal_errors: int
    unguarded_errors: int

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
        resend of a recorded call (`ref`: `simulator.serve.resends`) gets its answer and is not run again."""
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
            key, _, _, query, sid = self._session_key()
            session = self.sessions.recent.get(key)
            if session is None:
                return None
            self.check_owner(session, query, sid, request_handle())
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
