"""Every bundled and fixture domain replays its gold calls exactly as pinned: outcomes, errors, digests.

The fixture (tests/fixtures/golden_replays.json) was recorded by scripts/golden_replays.py before the
language moved to one typed tree; a domain written against the documentation must keep replaying
identically. Re-record only for a deliberate, versioned change of a domain.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import golden_replays  # noqa: E402


def test_gold_replays_match_the_pinned_record() -> None:
    pinned = json.loads(golden_replays.FIXTURE.read_text(encoding="utf-8"))
    now = golden_replays.record()
    assert set(now) == set(pinned)
    for ref, tasks in pinned.items():
        assert set(now[ref]) == set(tasks), ref
        for task_id, runs in tasks.items():
            assert now[ref][task_id] == runs, f"{ref} {task_id}"
