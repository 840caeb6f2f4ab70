"""The garbage collector of a serving process: start-up objects frozen, young collections rarer.

    settle_heap()      # once, in a process that only serves (`DomainServer.run_async` calls it)

**Why.** With 1,024 live HTTP sessions a server process holds ~520,000 objects the cyclic
garbage collector tracks: ~200,000 from start-up (modules, the loaded domain, compiled tools,
pydantic models) and ~350 per session (the MCP SDK's per-session task group, memory streams,
tasks and events; toolgym's own session adds ~45). CPython's full collection walks all of them:
measured 265-720 ms per pause on this 2-core machine at load 1-2, every 1-6 s while 700 calls/s
arrive, because every young collection promotes whatever requests are in flight at that moment
and a full collection follows once promotions reach a quarter of the old generation. A pause
stalls every session; paced at 70% of what the CPU allows, the backlog a pause leaves takes
pause / 0.3 to drain, so one 700 ms pause is a 2.3 s call — the tail of issue #14's
"1,024 sessions, p99 <= 1 s" (paced p99 1.1 s at load 2.2 before this; 2.3 s at load 10-15).

**What.** `gc.freeze()` after start-up moves the start-up objects to the permanent generation:
no collection walks them again (they live as long as the process anyway), so a full collection
costs what the sessions hold, not what the process imported. A young-generation threshold of
`YOUNG_THRESHOLD` (CPython's default is 700) makes young collections ~14x rarer, so far fewer
in-flight objects are promoted and full collections become rare (none in a 20 s paced run at
1,024 sessions, against 5-10 before). Young cyclic garbage waits a little longer to be freed
(at most `YOUNG_THRESHOLD` objects more: a few MiB); nothing else changes. Measured with
`benchmarks/sessions.py`; the figures are in README's Speed paragraph.

**The middle generation.** With young collections that rare, each one promotes up to
`YOUNG_THRESHOLD` objects that are still alive (a burst of new connections: ~350 objects each), and
CPython's middle generation, collected every 10 young collections, held ~100,000 of them: a
19-37 ms pause each time, under a burst of a few hundred handshakes (`benchmarks/siege.py`).
Collected every `MIDDLE_THRESHOLD` young collections instead, it holds a third as many, so the
pauses are a third as long (and three times as frequent: the same work); full collections stay as
rare as before, being considered every `MIDDLE_THRESHOLD` x `OLD_THRESHOLD` young collections
(CPython: 10 x 10).

Only a process that does nothing but serve should call it (the CLI's `toolgym serve`); an
in-process server (tests, a trainer's own process) keeps its host's collector settings.
"""

from __future__ import annotations

import gc

#: objects allocated (net) before a young collection; CPython's default is 700
YOUNG_THRESHOLD = 10_000
#: young collections before a middle-generation one (CPython: 10) ...
MIDDLE_THRESHOLD = 3
#: ... and middle-generation ones before a full collection is considered (CPython: 10)
OLD_THRESHOLD = 33


def settle_heap() -> None:
    """Collect once, freeze what survives (the start-up heap), make young collections rarer and
    middle-generation ones smaller.

    Idempotent in effect; a young threshold already above `YOUNG_THRESHOLD` is kept.
    """
    gc.collect()
    gc.freeze()
    young = gc.get_threshold()[0]
    gc.set_threshold(max(young, YOUNG_THRESHOLD), MIDDLE_THRESHOLD, OLD_THRESHOLD)
