"""Batch scoring: every transcript under a runs directory, one result line each, and a summary.

Domains are loaded once and gold episodes replayed once per (domain, task, seed). A transcript
that cannot be scored becomes a result line with status `error`, so one bad file never hides the
others. The summary gives rewards, pass rates and failures overall, per domain and per task.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simulator import Domain, TaskError, ToolgymError
from simulator.serve.labels import Key

from .errors import TranscriptError
from .expected import expected_state
from .report import ScoreReport
from .rollout import TRANSIENT_FAULTS, Rollout
from .rollouts.layout import RESULTS, TRANSCRIPTS
from .score import resolve_seed, resolve_task, score_calls
from .stream import open_transcript
from .tasks import load_domain
from .validation.manifest import Manifest

TRANSCRIPT_SUFFIXES = (".jsonl", ".json")
#: The longest error message a result line carries.
ERROR_CHARS = 2000
#: The width of the one-line explanation of a rollout that did not pass.
WHY_CHARS = 100


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
    """Every *.jsonl / *.json file under a directory, sorted (files in `exclude` left out, and the
    results file of a `toolgym rollout` runs folder, which holds results lines, not a transcript)."""
    root = Path(runs)
    skip = {p.resolve() for p in exclude}
    if (root / TRANSCRIPTS).is_dir():
        skip.add((root / RESULTS).resolve())
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
        """Score one transcript, read a line at a time and replayed as it is read (`scoring.stream`);
        raises ToolgymError (TranscriptError, TaskError, SpecError)."""
        rollout, calls = open_transcript(path, key=self.key, max_bytes=self.max_bytes)
        try:
            ref = self.domain or _served_path(rollout) or rollout.domain
            if ref is None:
                raise TranscriptError(f"{path} names no domain: pass one (--domain)")
            domain = self.load(ref)
            task = resolve_task(domain, rollout, self.task)
            if self.manifests is not None:
                require_validated(self.manifests, domain, task.id)
            seed = resolve_seed(rollout, task, self.seed)
            excluded = not rollout.complete or any(c.fault not in TRANSIENT_FAULTS for _, c in calls.faults)
            expected = None if excluded else expected_state(domain, task, seed)
            return score_calls(domain, rollout, calls, task, seed, expected=expected)
        finally:
            calls.close()

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


def one_line(sentence: str, width: int = WHY_CHARS) -> str:
    """A sentence as one line of at most `width` characters (cut at a word, ending in "…")."""
    text = " ".join(sentence.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ,;:") + "…"


def why(line: dict[str, Any]) -> str:
    """The first sentence of a result line's explanation (or its error), as one line."""
    said = line.get("explanation") or [line.get("error") or f"status {line.get('status')}"]
    first = str(said[0])
    head, sep, rest = first.partition(": ")
    if sep and head.startswith("Reward "):  # the reward is shown beside it
        first = rest[:1].upper() + rest[1:]
    return one_line(first)


def not_passed(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scored rollouts whose reward is below 1.0 and those not scored (infra-failed,
    incomplete), each with `why` (one line) and its whole `explanation`; errors are left out."""
    keep = ("transcript", "domain", "task", "status", "reward", "partial", "explanation")
    return [
        {**{k: line.get(k) for k in keep}, "why": why(line)}
        for line in sorted(
            lines, key=lambda r: (r.get("domain") or "", r.get("task") or "", r.get("transcript") or "")
        )
        if line["status"] in ("failed-infra", "incomplete")
        or (line["status"] == "scored" and (line.get("reward") or 0.0) < 1.0)
    ]


def summarize(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Overall, per-domain and per-task (within each domain) statistics of result lines, and the
    rollouts that did not pass (`not_passed`)."""
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
        "not_passed": not_passed(lines),
    }
