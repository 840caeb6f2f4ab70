"""Batch scoring: every transcript under a runs directory, one result line each, and a summary.

Domains are loaded once and gold episodes replayed once per (domain, task, seed). A transcript
that cannot be scored (unreadable, too large, nested too deeply, not valid Unicode, unknown task,
broken task) becomes a result line with status `error` and its message (bounded, quoting at most
a prefix of any value), so one bad file never hides the others; every line can be written as
UTF-8. The summary gives, overall, per domain and per task: mean reward and pass rate over the
scored rollouts, and the counts and rates of infrastructure failures, incomplete transcripts and
errors over all of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simulator import Domain, TaskError, ToolgymError, TranscriptError, load_domain
from simulator.labels import Key

from .expected import expected_state
from .report import ScoreReport
from .rollout import Rollout
from .score import resolve_seed, resolve_task, score_rollout
from .transcripts import load_transcript
from .validation.manifest import Manifest

TRANSCRIPT_SUFFIXES = (".jsonl", ".json")
#: The longest error message a result line carries.
ERROR_CHARS = 2000


def bounded(text: str, limit: int = ERROR_CHARS) -> str:
    """A message cut to `limit` characters (saying how long it was)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} chars in all)"


def encodable(value: Any) -> Any:
    """A JSON value whose strings all encode as UTF-8 (lone surrogates shown as \\udXXX escapes)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value


def error_line(path: str | Path, message: str) -> dict[str, Any]:
    """The result line of a transcript that could not be scored."""
    return encodable({"transcript": str(path), "status": "error", "error": bounded(message), "reward": None})


def find_transcripts(runs: str | Path, exclude: Iterable[Path] = ()) -> list[Path]:
    """Every *.jsonl / *.json file under a directory, sorted (files in `exclude` left out)."""
    skip = {p.resolve() for p in exclude}
    root = Path(runs)
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in TRANSCRIPT_SUFFIXES and p.resolve() not in skip
    )


def require_validated(manifests: list[Manifest], domain: Domain, task_id: str) -> None:
    """Refuse a task that no manifest validated for this domain fingerprint (TaskError)."""
    mine = [m for m in manifests if m.domain == domain.ref]
    if not mine:
        raise TaskError(
            f"no validated manifest for {domain.ref} (given: {', '.join(m.domain for m in manifests) or 'none'})"
        )
    mine[0].check(domain, task_id)


def _served_path(rollout: Rollout) -> str | None:
    """The folder of a domain the server served by path, if it is still there."""
    path = rollout.domain_path
    return path if path is not None and (Path(path) / "domain.yaml").is_file() else None


class BatchScorer:
    """Scores transcripts, caching loaded domains; the expected states are the process's
    (`scoring.expected`, shared with everything else that scores)."""

    def __init__(
        self,
        domain: str | None = None,
        task: str | None = None,
        seed: int | None = None,
        manifests: list[Manifest] | None = None,
        key: Key | None = None,
        max_bytes: int | None = None,
    ):
        self.domain, self.task, self.seed = domain, task, seed
        self.manifests = manifests
        self.key, self.max_bytes = key, max_bytes
        self._domains: dict[str, Domain] = {}

    def load(self, ref: str) -> Domain:
        if ref not in self._domains:
            self._domains[ref] = load_domain(ref)
        return self._domains[ref]

    def report(self, path: str | Path) -> ScoreReport:
        """Score one transcript; raises ToolgymError (TranscriptError, TaskError, SpecError)."""
        rollout = load_transcript(path, key=self.key, max_bytes=self.max_bytes)
        ref = self.domain or _served_path(rollout) or rollout.domain
        if ref is None:
            raise TranscriptError(f"{path} names no domain: pass one (--domain)")
        domain = self.load(ref)
        task = resolve_task(domain, rollout, self.task)
        if self.manifests is not None:
            require_validated(self.manifests, domain, task.id)
        seed = resolve_seed(rollout, task, self.seed)
        excluded = not rollout.complete or rollout.hard_faults()
        expected = None if excluded else expected_state(domain, task, seed)
        return score_rollout(domain, rollout, task, seed, expected=expected)

    def score(self, path: str | Path) -> dict[str, Any]:
        """One result line: the ScoreReport as JSON, or {transcript, status: error, error}.

        Never raises for a bad file: beyond toolgym's own errors, a value nested too deeply for the
        interpreter or text that is not valid Unicode is that file's error line.
        """
        try:
            return encodable(self.report(path).model_dump(mode="json"))
        except ToolgymError as exc:
            return error_line(path, str(exc))
        except RecursionError:
            return error_line(path, f"{path}: a value is nested too deeply to score")
        except UnicodeError as exc:
            return error_line(path, f"{path}: text that is not valid Unicode ({type(exc).__name__})")

    def close(self) -> None:
        """Nothing to free: the expected states are the process's (scoring.expected)."""


def _stats(lines: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [r for r in lines if r["status"] == "scored"]
    rewards = [r["reward"] for r in scored]
    return {
        "transcripts": len(lines),
        "scored": len(scored),
        "failed_infra": sum(r["status"] == "failed-infra" for r in lines),
        "incomplete": sum(r["status"] == "incomplete" for r in lines),
        "errors": sum(r["status"] == "error" for r in lines),
        "mean_reward": round(sum(rewards) / len(rewards), 4) if rewards else None,
        "pass_rate": round(sum(x == 1.0 for x in rewards) / len(rewards), 4) if rewards else None,
        "mean_partial": round(sum(r["partial"] for r in scored) / len(scored), 4) if scored else None,
        "infra_rate": round(sum(r["status"] == "failed-infra" for r in lines) / len(lines), 4)
        if lines
        else None,
    }


def summarize(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Overall, per-domain and per-task (within each domain) statistics of result lines."""
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_task: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for line in lines:
        domain = line.get("domain") or "(unreadable)"
        by_domain[domain].append(line)
        by_task[domain][line.get("task") or "(unknown)"].append(line)
    return {
        "overall": _stats(lines),
        "domains": {d: _stats(v) for d, v in sorted(by_domain.items())},
        "tasks": {
            d: {t: _stats(v) for t, v in sorted(tasks.items())} for d, tasks in sorted(by_task.items())
        },
    }
