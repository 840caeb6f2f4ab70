"""Turns for tool calls: sessions that call back to back make way for the others.

    turns = Turns(slots=1)
    async with turns.turn(session):        # waits only when it must make way
        ...                                # the call's work (its worker thread included)

A *busy* session sends costly calls back to back; while other sessions' calls keep arriving,
busy sessions' calls run `slots` at a time and rest after each. Nothing is refused, only paced.
Used from one event loop. Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import AsyncIterator
from typing import Protocol

#: A call arriving sooner than this after its session's previous answer is a busy session's.
BUSY_GAP_S = 0.05
#: ... and its previous call took this much CPU (a cheap lookup takes ~0.3 ms).
BUSY_COST_S = 0.001
#: Busy sessions make way while another session's call arrived this recently.
LIGHT_WINDOW_S = 1.0
#: The longest rest after a busy call.
MAX_REST_S = 0.1


class Paced(Protocol):
    """What turns read and write of a session (monotonic seconds)."""

    answered: float  # when its last call ended (0: none yet)
    served: float  # when its last busy call got its turn
    cost: float  # the CPU seconds its last call took


class Turns:
    """Busy sessions' calls `slots` at a time while other sessions are calling; the rest run at once."""

    def __init__(self, slots: int = 1, pause: float = 0.0):
        if slots < 1 or pause < 0:
            raise ValueError("slots must be at least 1, and pause not negative")
        self.slots = slots
        self.pause = pause
        self.running = 0  # busy calls holding a turn
        self.light_at = -LIGHT_WINDOW_S  # when the last call of a session that was not busy arrived
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()  # (equal priorities: first come, first served)

    @property
    def waiting(self) -> int:
        """Busy calls waiting for a turn."""
        return sum(not f.done() for _, _, f in self._waiting)

    @contextlib.asynccontextmanager
    async def turn(self, session: Paced) -> AsyncIterator[None]:
        """Run the block as `session`'s call: at once, or after waiting for a turn when the session
        is busy and others are calling; `session.answered` is set when it ends."""
        now = time.monotonic()
        held = False
        if now - session.answered >= BUSY_GAP_S or session.cost < BUSY_COST_S:
            self.light_at = now
        elif now - self.light_at < LIGHT_WINDOW_S:
            await self._take(session.served)
            session.served, held = time.monotonic(), True
        try:
            yield
        finally:
            session.answered = time.monotonic()
            if held:
                rest = min(MAX_REST_S, (session.answered - session.served) * self.pause)
                if rest > 0:  # (the turn stays held while it rests)
                    asyncio.get_running_loop().call_later(rest, self._next)
                else:
                    self._next()

    async def _take(self, priority: float) -> None:
        if self.running < self.slots:  # (then no call waits: a turn passes on while one does)
            self.running += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (priority, next(self._order), waiter))
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():  # handed the turn, then cancelled
                self._next()
            else:
                waiter.cancel()  # (skipped when its turn would come)
            raise

    def _next(self) -> None:
        """A turn ends: it passes to the first waiter still waiting, else it is free."""
        while self._waiting:
            _, _, waiter = heapq.heappop(self._waiting)
            if not waiter.done():
                waiter.set_result(None)  # (the turn passes on: `running` stays the same)
                return
        self.running -= 1
