"""An episode's state as a plain SQLite file (for `sqlite3`, sqlite-utils, Datasette).

The file holds the domain's tables as the simulator declares them (column types, primary keys,
composite ones too, foreign keys, indexes) and their rows as stored (booleans as 0/1, JSON as
text), without toolgym's own bookkeeping tables. The state is the seed's, the one a task's gold
calls leave (`expected_episode`, the grading side's gold replay), or the one a transcript's calls
leave when replayed as scoring replays them (`replay_rollout`).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from simulator import Domain, Episode
from simulator.errors import TranscriptError

from .replay import expected_episode, replay_rollout
from .score import names_domain
from .transcripts import load_transcript

#: toolgym's internal tables (clock, id counters, change log): never part of an export
INTERNAL_PREFIX = "_toolgym_"


def write_state(episode: Episode, path: str | Path) -> Path:
    """Write the episode's current state to `path` as a SQLite file (replacing it if it exists).

    The file is written beside `path` under a temporary name and moved into place, so a failure
    leaves no half-written file and an existing one untouched.
    """
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    with episode.lock:
        image = episode.conn.serialize()
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.deserialize(image)
        conn.execute("PRAGMA foreign_keys=OFF")
        internal = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name.startswith(INTERNAL_PREFIX)
        ]
        for name in internal:
            conn.execute(f'DROP TABLE "{name}"')
        conn.execute("VACUUM INTO ?", (str(temporary),))
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        conn.close()
    os.replace(temporary, target)
    return target


def state_episode(
    domain: Domain,
    task: str | None = None,
    transcript: str | Path | None = None,
    seed: int | None = None,
) -> Episode:
    """The episode whose state is exported: the seed state, after `task`'s gold calls, or after a
    transcript's calls replayed. The seed is the given one, else the transcript's, else the task's
    (the one the transcript or `task` names), else 0. The caller closes the episode."""
    if task is not None and transcript is not None:
        raise ValueError("give --task or --transcript, not both")
    if transcript is not None:
        rollout = load_transcript(transcript)
        if rollout.domain is not None and not names_domain(rollout.domain, domain, rollout.fingerprint):
            raise TranscriptError(
                f"{transcript} is a transcript of domain {rollout.domain[:80]!r}, not {domain.name!r}"
            )
        if seed is None:
            seed = rollout.seed if rollout.seed is not None else 0
        episode, _ = replay_rollout(domain, rollout, seed)
        return episode
    if task is not None:
        return expected_episode(domain, task, seed)
    return domain.episode(seed=seed or 0)


def export_state(
    domain: Domain,
    out: str | Path,
    task: str | None = None,
    transcript: str | Path | None = None,
    seed: int | None = None,
) -> Path:
    """Write the chosen state (see `state_episode`) of `domain` to `out` as a SQLite file."""
    episode = state_episode(domain, task, transcript, seed)
    try:
        return write_state(episode, out)
    finally:
        episode.close()
