"""Scoring: transcript import, replay, state diff, rewards.

    from scoring import load_transcript, score_rollout
    report = score_rollout(domain, load_transcript("run.jsonl"))

Public surface: `load_transcript`, `score_rollout` / `score_transcript` (-> `ScoreReport`),
`expected_episode`, `replay`, `diff_states` (-> `StateDiff`), `find_facts`; the tasks themselves
(`load_domain` -> `GradedDomain`, `check_domain`, `Task`, `Call`) and the grading errors
(`TranscriptError`, `CallReferenceError`).
Design notes: docs/design/scoring.md.
"""

from typing import TYPE_CHECKING

from simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from .diff import diff_states
    from .errors import CallReferenceError, TranscriptError
    from .facts import find_facts
    from .replay import expected_episode, replay
    from .report import ScoreReport, StateDiff
    from .rollout import Rollout, RolloutCall
    from .score import score_rollout, score_transcript
    from .tasks import Call, GradedDomain, Task, check_domain, load_domain
    from .transcripts import load_transcript, parse_transcript

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Call": ".tasks",
        "CallReferenceError": ".errors",
        "GradedDomain": ".tasks",
        "Rollout": ".rollout",
        "RolloutCall": ".rollout",
        "ScoreReport": ".report",
        "StateDiff": ".report",
        "Task": ".tasks",
        "TranscriptError": ".errors",
        "check_domain": ".tasks",
        "diff_states": ".diff",
        "expected_episode": ".replay",
        "find_facts": ".facts",
        "load_domain": ".tasks",
        "load_transcript": ".transcripts",
        "parse_transcript": ".transcripts",
        "replay": ".replay",
        "score_rollout": ".score",
        "score_transcript": ".score",
    },
)

__all__ = [
    "Call",
    "CallReferenceError",
    "GradedDomain",
    "Rollout",
    "RolloutCall",
    "ScoreReport",
    "StateDiff",
    "Task",
    "TranscriptError",
    "check_domain",
    "diff_states",
    "expected_episode",
    "find_facts",
    "load_domain",
    "load_transcript",
    "parse_transcript",
    "replay",
    "score_rollout",
    "score_transcript",
]
