"""Rollouts: policies acting on domains, scored, one results line each (`toolgym rollout`).

    from scoring.rollouts import run_rollouts
    summary = run_rollouts(["bank"], ["gold", "gold-corrupt:1", "random", "noop"], k=4, runs="runs")

`policies` has the baselines (noop, random, read-only, gold, gold-corrupt:N), `llm` the agent loop
against an OpenAI-compatible endpoint, `env` where a policy acts (in-process or over MCP),
`runner` planning, running, scoring and resuming.
"""

from typing import TYPE_CHECKING

from simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from .policies import parse_policy
    from .runner import Options, RolloutLine, RolloutSummary, run_rollouts

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Options": ".runner",
        "RolloutLine": ".runner",
        "RolloutSummary": ".runner",
        "parse_policy": ".policies",
        "run_rollouts": ".runner",
    },
)

__all__ = [
    "Options",
    "RolloutLine",
    "RolloutSummary",
    "parse_policy",
    "run_rollouts",
]
