"""toolgym domains as a verifiers taskset (`vf-eval toolgym-verifiers ...`).

The dataset is a domain's validated tasks, the tools are a toolgym MCP server's (one episode per
rollout: each rollout's agent opens its own MCP session, `?task=ID&seed=N`), and the reward is
toolgym's: the rollout's chat transcript scored by `toolgym score` (partial credit as the
`toolgym_partial` metric). toolgym itself runs in its own virtual environment (verifiers pins an
older MCP SDK): give its command with `--env.taskset.toolgym` and its server
(`toolgym serve DOMAIN --transport http`) with `--env.taskset.url`.
"""

from .taskset import (
    ToolgymData,
    ToolgymTask,
    ToolgymTaskConfig,
    ToolgymTaskset,
    ToolgymTasksetConfig,
    ToolgymTools,
)

__all__ = [
    "ToolgymData",
    "ToolgymTask",
    "ToolgymTaskConfig",
    "ToolgymTaskset",
    "ToolgymTasksetConfig",
    "ToolgymTools",
]
