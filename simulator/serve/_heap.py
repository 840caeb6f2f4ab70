"""The garbage collector of a serving process: start-up objects frozen, young collections rarer.

    settle_heap()      # once, in a process that only serves (`DomainServer.run_async` calls it)

It freezes the start-up objects (`gc.freeze()`) and sets the collection thresholds
(`YOUNG_THRESHOLD`, `MIDDLE_THRESHOLD`, `OLD_THRESHOLD`) so that collector pauses stay short
with many live sessions. Only a process that does nothing but serve should call it (the CLI's
`toolgym serve`); an in-process server (tests, a trainer's own process) keeps its host's settings.
Design notes: docs/design/serving.md.
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
