"""An OpenEnv server for a toolgym domain: reset / step / state and OpenEnv's MCP actions.

    pip install -e ".[openenv]"
    python -m toolgym.adapters.openenv bank --port 8000      # or: create_app("bank")

Every OpenEnv session (one WebSocket connection) gets its own `ToolgymEnv`, with its own
in-memory episode; many run in one process (`max_sessions`). `step` takes `ListToolsAction` or
`CallToolAction`; a tool error is an `is_error` result, never a transport error. `submit_answer`
ends the episode with toolgym's reward. Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from scoring.tasks import load_domain
from simulator import Domain

from ..env import Environment


class ToolgymObservation(Observation):
    """What `reset` returns: the task and the tools."""

    task_id: str = ""
    seed: int = 0
    system_prompt: str = ""
    instruction: str = ""
    tools: list[dict[str, Any]] = Field(default_factory=list, description="the tools in OpenAI form")


class ToolgymState(State):
    """The session's episode: its task, seed, and once it is done, its score."""

    task_id: str | None = None
    seed: int | None = None
    done: bool = False
    reward: float | None = None
    partial: float | None = None
    status: str | None = None


class ToolgymEnv(OpenEnvEnvironment):
    """One OpenEnv session: an environment-API `Environment` with its own episode."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env: Environment):
        super().__init__()
        self.env = env
        self._state = ToolgymState(episode_id=None, step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        **kwargs: Any,
    ) -> ToolgymObservation:
        obs = self.env.reset(task_id=task_id, seed=seed)
        self._state = ToolgymState(
            episode_id=episode_id or uuid.uuid4().hex, step_count=0, task_id=obs.task_id, seed=obs.seed
        )
        return ToolgymObservation(
            task_id=obs.task_id,
            seed=obs.seed,
            system_prompt=obs.system_prompt,
            instruction=obs.instruction,
            tools=obs.tools["openai"],
        )

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        if isinstance(action, ListToolsAction):
            return ListToolsObservation(
                tools=[
                    Tool(name=t["name"], description=t.get("description", ""), input_schema=t["inputSchema"])
                    for t in self.env.tools["mcp"]
                ]
            )
        if not isinstance(action, CallToolAction):
            return CallToolObservation(
                tool_name="",
                error=ToolError(
                    error_type=ToolErrorType.INVALID_ARGS,
                    message=f"unsupported action {type(action).__name__}: send list_tools or call_tool",
                ),
            )
        if self._state.task_id is None:
            return CallToolObservation(
                tool_name=action.tool_name,
                error=ToolError(error_type=ToolErrorType.EXECUTION_ERROR, message="no episode: reset first"),
            )
        self._state.step_count += 1
        was_done = self.env.done
        step = self.env.step(action.tool_name, action.arguments)
        result: dict[str, Any] = {"data": step.result if step.ok else step.content, "content": step.content}
        result["is_error"] = not step.ok
        reward = None
        if step.done and not was_done:
            report = self.env.score()
            reward = report.reward
            self._state.done = True
            self._state.reward, self._state.partial, self._state.status = (
                report.reward,
                report.partial,
                report.status,
            )
            result["score"] = {
                "reward": report.reward,
                "partial": report.partial,
                "status": report.status,
                "explanation": report.explanation,
            }
        return CallToolObservation(tool_name=action.tool_name, result=result, done=step.done, reward=reward)

    @property
    def state(self) -> ToolgymState:
        return self._state

    def close(self) -> None:
        self.env.close()


def create_app(
    domain: Domain | str | Path,
    tasks: Iterable[str] | None = None,
    manifest: str | Path | None = None,
    max_sessions: int = 256,
) -> Any:
    """The OpenEnv FastAPI app of a domain (its tasks, or a manifest's validated ones)."""
    loaded = domain if isinstance(domain, Domain) else load_domain(domain)
    ids = list(tasks) if tasks is not None else None
    Environment(loaded, tasks=ids, manifest=manifest).close()  # check the choice once, now

    def factory() -> ToolgymEnv:
        return ToolgymEnv(Environment(loaded, tasks=ids, manifest=manifest))

    return create_fastapi_app(factory, CallToolAction, CallToolObservation, max_concurrent_envs=max_sessions)


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - console entry
    import uvicorn

    parser = argparse.ArgumentParser(description="Serve a toolgym domain as an OpenEnv environment.")
    parser.add_argument("domain", help="a bundled domain's name or a domain folder")
    parser.add_argument("--manifest", help="serve only this validated manifest's tasks")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-sessions", type=int, default=256)
    args = parser.parse_args(argv)
    app = create_app(args.domain, manifest=args.manifest, max_sessions=args.max_sessions)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":  # pragma: no cover
    main()
