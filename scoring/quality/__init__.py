"""Environment quality: difficulty, trainability, discriminative power and health from rollouts.

    from scoring.quality import quality
    report = quality(rows)          # rows: RUNS/results.jsonl lines of several policies

`metrics` computes the report and the manifests of unflagged domains; `html` renders the page.
"""

from .html import render_html
from .metrics import QualityReport, manifests, quality

__all__ = ["QualityReport", "manifests", "quality", "render_html"]
