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

Only a process that does nothing but serve should call it (the CLI's `toolgym serve`); an
in-process server (tests, a trainer's own process) keeps its host's collector settings.
"""

from __future__ import annotations

import gc

#: objects allocated (net) before a young collection; CPython's default is 700
YOUNG_THRESHOLD = 10_000


def settle_heap() -> None:
    """Collect once, freeze what survives (the start-up heap), and make young collections rarer.

    Idempotent in effect; a threshold already above `YOUNG_THRESHOLD` is kept.
    """
    gc.collect()
    gc.freeze()
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)
