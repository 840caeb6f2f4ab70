"""The environment API for RL loops, and a domain's tools in the OpenAI, Anthropic and MCP forms.

    from toolgym.env import Environment
    env = Environment("bank")
    obs = env.reset(task_id="bank-001")
    env.step("find_customers", {"email": "maria.okafor@example.com"})
    env.score().reward

It sits above `simulator` and `scoring`; the framework adapters (`toolgym.adapters`) use it.
"""

from typing import TYPE_CHECKING

from simulator.lazy import lazy_exports

if TYPE_CHECKING:
    from .environment import Environment, Observation, StepResult, policy_prompt
    from .tools import FORMATS, ToolFormat, all_formats, has_answer_tasks, mcp_tools, tool_list

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Environment": ".environment",
        "FORMATS": ".tools",
        "Observation": ".environment",
        "StepResult": ".environment",
        "ToolFormat": ".tools",
        "all_formats": ".tools",
        "has_answer_tasks": ".tools",
        "mcp_tools": ".tools",
        "policy_prompt": ".environment",
        "tool_list": ".tools",
    },
)

__all__ = [
    "FORMATS",
    "Environment",
    "Observation",
    "StepResult",
    "ToolFormat",
    "all_formats",
    "has_answer_tasks",
    "mcp_tools",
    "policy_prompt",
    "tool_list",
]
