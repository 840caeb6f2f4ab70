"""toolgym: synthetic tool environments over SQLite, served over MCP, scored by replay.

The names a user needs, imported on first use (so `toolgym --help` stays fast):

    from toolgym import Environment, load_domain, score_rollout, load_transcript, ToolgymError
"""

from typing import TYPE_CHECKING

from simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from scoring import load_transcript, score_rollout
    from scoring.tasks import load_domain
    from simulator import Domain, Episode, ToolError, ToolgymError

    from .env import Environment, Observation, StepResult

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Domain": "simulator",
        "Environment": "toolgym.env",
        "Episode": "simulator",
        "Observation": "toolgym.env",
        "StepResult": "toolgym.env",
        "ToolError": "simulator",
        "ToolgymError": "simulator",
        "load_domain": "scoring.tasks",
        "load_transcript": "scoring",
        "score_rollout": "scoring",
    },
)

__all__ = [
    "Domain",
    "Environment",
    "Episode",
    "Observation",
    "StepResult",
    "ToolError",
    "ToolgymError",
    "load_domain",
    "load_transcript",
    "score_rollout",
]
