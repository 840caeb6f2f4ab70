"""The environment API for RL loops, and a domain's tools in the OpenAI, Anthropic and MCP forms.

    from toolgym.env import Environment
    env = Environment("bank")
    obs = env.reset(task_id="bank-001")
    env.step("find_customers", {"email": "maria.okafor@example.com"})
    env.score().reward

It sits above `simulator` and `scoring` (it scores), beside the CLI; the framework adapters
(`toolgym.adapters`) are built on it.
"""

from .environment import Environment, Observation, StepResult, policy_prompt
from .tools import FORMATS, ToolFormat, all_formats, has_answer_tasks, mcp_tools, tool_list

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
