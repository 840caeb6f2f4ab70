"""Files → Plan: ingest, normalize, relate, cluster, and the summary people and machines read.

    generate(paths, min_tools=5, max_tools=40, seed=0, workers=0, progress=None,
             require_specs=False) -> Generated

The one composition of the stages, used by `toolgym generate` and `benchmarks/toolgen.py`. The
plan holds every operation once (in a domain, or in `skipped` with the reason) and every
unreadable file in `failed_files`; `summarize(generated)` is its summary, as a dict.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

from .cluster import cluster
from .model import Operation, Plan
from .relate import relate

#: progress(done, total, what): called as files are read (total None while unknown).
Progress = Callable[..., None]


@dataclass
class Generated:
    """What one run made: the plan, the operations it clusters, the ingest statistics."""

    plan: Plan
    operations: list[Operation]
    raw_operations: int
    stats: dict[str, Any] = field(default_factory=dict)


def _stages() -> tuple[Callable[..., Any], Callable[..., Any]]:
    try:
        from .ingest import read_paths
        from .normalize import normalize
    except ImportError as exc:
        raise RuntimeError(
            f"the generator is not complete in this checkout: {exc} (toolgen.ingest.read_paths and "
            "toolgen.normalize.normalize are needed)"
        ) from None
    return read_paths, normalize


def _as_dict(stats: Any) -> dict[str, Any]:
    if stats is None:
        return {}
    if isinstance(stats, dict):
        return dict(stats)
    if hasattr(stats, "model_dump"):
        return dict(stats.model_dump())
    if is_dataclass(stats) and not isinstance(stats, type):
        return asdict(stats)
    return dict(vars(stats))


def generate(
    paths: Sequence[str | Path],
    *,
    min_tools: int = 5,
    max_tools: int = 40,
    seed: int = 0,
    workers: int = 0,
    progress: Progress | None = None,
    require_specs: bool = False,
) -> Generated:
    """Read the specs under `paths`, normalize their operations and cluster them into a plan.

    With `require_specs`, a file named in `paths` that holds no API spec is a failed file."""
    if min_tools < 1 or max_tools < min_tools:
        raise ValueError(
            f"need 1 <= min_tools <= max_tools, got min_tools {min_tools}, max_tools {max_tools}"
        )
    read_paths, normalize = _stages()
    raw, failed, stats = read_paths(
        list(paths), workers=workers, progress=progress, require_specs=require_specs
    )
    normalized, not_normalized = normalize(raw)
    operations = relate(normalized)
    plan = cluster(operations, min_tools=min_tools, max_tools=max_tools, seed=seed)
    plan.skipped = sorted([*plan.skipped, *not_normalized], key=lambda s: s.id)
    plan.failed_files = sorted(failed, key=lambda f: (f.path, f.reason))
    return Generated(plan=plan, operations=operations, raw_operations=len(raw), stats=_as_dict(stats))


def distribution(values: Sequence[int]) -> dict[str, float]:
    """min / median / p90 (nearest rank) / max of `values` (zeros when empty)."""
    if not values:
        return {"min": 0, "median": 0, "p90": 0, "max": 0}
    ordered = sorted(values)
    return {
        "min": ordered[0],
        "median": statistics.median(ordered),
        "p90": ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)],
        "max": ordered[-1],
    }


def summarize(generated: Generated) -> dict[str, Any]:
    """The run in numbers: specs read / failed, operations by kind, domains, tools per domain."""
    plan = generated.plan
    sizes = [len(d.operations) for d in plan.domains]
    total = sum(sizes) + len(plan.skipped)
    kinds = Counter(op.kind for op in generated.operations)
    failed_paths = {f.path for f in plan.failed_files}
    return {
        "specs": {
            **{k: v for k, v in generated.stats.items() if isinstance(v, int | float) and k != "operations"},
            "failed": len(failed_paths),
        },
        "operations": {
            "read": generated.raw_operations,
            "normalized": len(generated.operations),
            "by_kind": {kind: kinds[kind] for kind in sorted(kinds)},
        },
        "domains": len(plan.domains),
        "tools_per_domain": distribution(sizes),
        "single_api_share": (
            sum(1 for d in plan.domains if len(d.apis) == 1) / len(plan.domains) if plan.domains else 0.0
        ),
        "skipped": len(plan.skipped),
        "skipped_share": len(plan.skipped) / total if total else 0.0,
    }
