"""The environment API for RL loops: reset, step, score, one in-process episode at a time.

    env = Environment("bank")            # or tasks=[...] / manifest="manifests/bank.json"
    obs = env.reset(task_id="bank-001")  # policy, instruction, obs.tools["openai"] (or "mcp", ...)
    step = env.step("find_customers", {"email": "maria.okafor@example.com"})  # .content/.error
    env.step("submit_answer", {"answer": "12650.00"})  # the answer channel: ends the episode
    report = env.score()                 # reward, partial credit, explanation

Scored as `toolgym score` scores the same calls. Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring import Rollout, RolloutCall, ScoreReport, score_rollout
from scoring.rollout import read_arguments
from scoring.tasks import Task, graded, load_domain
from scoring.validation.manifest import load_manifest
from simulator import Domain, Episode
from simulator.errors import CallFailed, InfraError, TaskError
from simulator.runtime.budget import Budget
from simulator.serve.mcptools import SUBMIT_ANSWER, ok_result

from .tools import all_formats, has_answer_tasks

#: how a tool error reads in a tool message (chat logs carry no error flag; readers look for it)
ERROR_PREFIX = "Error: "
#: what `submit_answer` returns (the MCP server's words)
SUBMITTED = {"status": "submitted", "message": "Your answer was recorded; this session has ended."}


@dataclass(frozen=True)
class Observation:
    """What `reset` gives the model: the policy, the task's instruction and the tools.

    `tools` maps "openai", "anthropic" and "mcp" to the tool list in that form (shared by every
    episode of the environment: do not change it). `messages` is the OpenAI-form start of the
    conversation: the system prompt, then the instruction as the user's message.
    """

    task_id: str
    seed: int
    system_prompt: str
    instruction: str
    tools: dict[str, list[dict[str, Any]]]

    @property
    def messages(self) -> list[dict[str, Any]]:
        start = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return [*start, {"role": "user", "content": self.instruction}]


@dataclass(frozen=True)
class StepResult:
    """One call's outcome: `content` is what the model reads (the result as JSON text, or
    "Error: " and the error text); `done` is whether the episode is over (`submit_answer` ends it)."""

    content: str
    ok: bool
    done: bool
    result: Any = None
    error: str | None = None


@dataclass
class _Turn:
    """One recorded step of the episode (a tool call, or an assistant text)."""

    call: RolloutCall | None = None
    call_id: str = ""
    text: str | None = None
    content: str = ""
    #: the arguments as the model wrote them (JSON text), kept verbatim for the transcript
    arguments: str = "{}"


@dataclass
class _EpisodeState:
    task: Task
    seed: int
    episode: Episode
    turns: list[_Turn] = field(default_factory=list)
    calls: list[RolloutCall] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    final_message: str | None = None
    done: bool = False


def policy_prompt(domain: Domain) -> str:
    """The system prompt of every episode: the domain policy (else its description), as the server
    gives it in its instructions."""
    return domain.policy.strip() or domain.spec.description.strip()


def _result_text(value: Any) -> str:
    """A result as the MCP server sends it (its JSON text)."""
    content = ok_result(value).content[0]
    return str(getattr(content, "text", ""))


class Environment:
    """Episodes of one domain's tasks for an RL loop (see the module docstring).

    `tasks` (ids) or `manifest` (a validated manifest of `toolgym validate --manifest-dir`; the
    domain must be the validated one) choose the tasks served; default: all of the domain's.
    `rng` seeds the choice of task when `reset` is given none.
    """

    def __init__(
        self,
        domain: Domain | str | Path,
        tasks: Iterable[str] | None = None,
        manifest: str | Path | None = None,
        *,
        budget: Budget | None = None,
        rng: int | None = 0,
    ):
        self.domain = graded(domain) if isinstance(domain, Domain) else load_domain(domain)
        ids = list(tasks) if tasks is not None else None
        if manifest is not None:
            validated = load_manifest(manifest)
            validated.check(self.domain, None)
            ids = [
                t for t in (ids if ids is not None else validated.valid_tasks) if t in validated.valid_tasks
            ]
        self.tasks: list[Task] = (
            list(self.domain.tasks) if ids is None else [self.domain.task(t) for t in ids]
        )
        if not self.tasks:
            raise TaskError(f"no tasks to serve for {self.domain.ref}")
        self._served = {t.id for t in self.tasks}
        self.budget = budget
        self.system_prompt = policy_prompt(self.domain)
        self.answer_tool = has_answer_tasks(self.domain)
        self.tools = all_formats(self.domain, self.answer_tool)
        self.domain.snapshot()  # built now, not in the first reset
        self._rng = random.Random(rng)
        self._state: _EpisodeState | None = None

    # -- the loop ---------------------------------------------------------------------------

    def reset(self, task_id: str | None = None, seed: int | None = None) -> Observation:
        """Start a fresh episode of `task_id` (default: a task drawn by the environment's rng) on
        its own copy of the seed state; `seed` is the episode seed (default: the task's)."""
        if task_id is None:
            task = self._rng.choice(self.tasks)
        elif task_id in self._served:
            task = self.domain.task(task_id)
        else:
            self.domain.task(task_id)  # an unknown id: TaskError naming the domain's tasks
            raise TaskError(f"task {task_id!r} of {self.domain.ref} is not among this environment's tasks")
        self.close()
        episode_seed = task.seed if seed is None else seed
        episode = self.domain.episode(seed=episode_seed, task=task, budget=self.budget)
        self._state = _EpisodeState(task, episode_seed, episode)
        return Observation(task.id, episode_seed, self.system_prompt, task.instruction, self.tools)

    def step(self, tool_name: str, arguments: dict[str, Any] | str | None = None) -> StepResult:
        """Call a tool (arguments as a dict or the JSON text a model wrote). A tool error comes back
        as `error` text for the model, never raised; `submit_answer` records the answer and ends
        the episode, after which every call is refused (done)."""
        state = self._live()
        call_id = f"call_{len(state.calls) + 1}"
        if state.done:
            text = "This episode has ended (an answer was submitted). Reset to start a new one."
            return StepResult(f"{ERROR_PREFIX}{text}", ok=False, done=True, error=text)
        if arguments is None:
            arguments = {}
        written = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        args, problem = read_arguments(arguments)
        if tool_name == SUBMIT_ANSWER:
            answer = args.get("answer")
            if problem is not None or not isinstance(answer, str):
                error = (
                    f"Invalid arguments for {SUBMIT_ANSWER}: give exactly one argument, `answer`, a string."
                )
                return self._failed(state, tool_name, args, error, call_id, written, malformed=problem)
            state.done = True
            if answer.strip():
                state.messages.append(answer)
                state.final_message = answer
            content = _result_text(SUBMITTED)
            call = RolloutCall(name=SUBMIT_ANSWER, arguments=args)
            state.turns.append(_Turn(call=call, call_id=call_id, content=content, arguments=written))
            return StepResult(content, ok=True, done=True, result=dict(SUBMITTED))
        if problem is not None:
            return self._failed(state, tool_name, {}, problem, call_id, written, malformed=problem)
        try:
            value = state.episode.call(tool_name, args)
        except CallFailed as exc:
            fault = exc.kind if isinstance(exc, InfraError) else None
            return self._failed(state, tool_name, args, str(exc), call_id, written, fault=fault)
        content = _result_text(value)
        call = RolloutCall(name=tool_name, arguments=args, outcome="ok", result=value, has_result=True)
        state.calls.append(call)
        state.turns.append(_Turn(call=call, call_id=call_id, content=content, arguments=written))
        return StepResult(content, ok=True, done=False, result=value)

    def say(self, text: str) -> None:
        """Record an assistant message without tool calls (the final message, unless calls follow)."""
        state = self._live()
        if text.strip():
            state.messages.append(text)
            state.final_message = text
        state.turns.append(_Turn(text=text))

    def answer(self, text: str) -> StepResult:
        """Submit the final answer (`submit_answer`): the episode ends."""
        return self.step(SUBMIT_ANSWER, {"answer": text})

    @property
    def done(self) -> bool:
        return self._state is not None and self._state.done

    def score(self, truncated: bool = False) -> ScoreReport:
        """The episode's score: reward (1.0 or 0.0), partial credit, diff and explanation, as
        `toolgym score` gives for the same calls (`truncated`: the loop cut it off, reward 0.0)."""
        state = self._live()
        return score_rollout(self.domain, self.rollout(truncated), state.task, state.seed)

    # -- what happened ------------------------------------------------------------------------

    def rollout(self, truncated: bool = False) -> Rollout:
        """The episode so far as a scoring `Rollout`."""
        state = self._live()
        return Rollout(
            format="toolgym",
            domain=self.domain.name,
            version=self.domain.version,
            fingerprint=self.domain.fingerprint(),
            task=state.task.id,
            seed=state.seed,
            calls=[c.model_copy() for c in state.calls],
            messages=list(state.messages),
            final_message=state.final_message,
            truncated=truncated,
        )

    def messages(self) -> list[dict[str, Any]]:
        """The episode's chat messages in OpenAI's form: system, user, assistant tool calls, tool results."""
        messages: list[dict[str, Any]] = self.transcript()["messages"]
        return messages

    def transcript(self, truncated: bool = False) -> dict[str, Any]:
        """The episode as an OpenAI chat transcript that `toolgym score` reads: {"domain", "task",
        "seed", "messages": [system, user, assistant tool_calls, tool results, ...]}."""
        state = self._live()
        out: list[dict[str, Any]] = [
            *Observation(state.task.id, state.seed, self.system_prompt, state.task.instruction, {}).messages
        ]
        for turn in state.turns:
            if turn.call is None:
                out.append({"role": "assistant", "content": turn.text or ""})
                continue
            function = {"name": turn.call.name, "arguments": turn.arguments}
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": turn.call_id, "type": "function", "function": function}],
                }
            )
            out.append({"role": "tool", "tool_call_id": turn.call_id, "content": turn.content})
        transcript: dict[str, Any] = {
            "domain": self.domain.name,
            "version": self.domain.version,
            "task": state.task.id,
            "seed": state.seed,
            "messages": out,
        }
        if truncated:
            transcript["truncated"] = True
        return transcript

    @property
    def episode(self) -> Episode:
        """The live episode (its state: `digest()`, `export()`, `changes()`)."""
        return self._live().episode

    def close(self) -> None:
        """End the live episode (reset does it too)."""
        if self._state is not None:
            self._state.episode.close()
            self._state = None

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inside -------------------------------------------------------------------------------

    def _live(self) -> _EpisodeState:
        if self._state is None:
            raise RuntimeError("no episode: call reset() first")
        return self._state

    def _failed(
        self,
        state: _EpisodeState,
        name: str,
        args: dict[str, Any],
        error: str,
        call_id: str,
        written: str,
        malformed: str | None = None,
        fault: Any = None,
    ) -> StepResult:
        call = RolloutCall(
            name=name,
            arguments=args,
            outcome="fault" if fault is not None else "tool-error",
            fault=fault,
            error=error,
            malformed=malformed,
            result=error,
            has_result=True,
        )
        # (a refused `submit_answer` too: replayed, it fails as a call of no tool of the domain)
        state.calls.append(call)
        content = f"{ERROR_PREFIX}{error}"
        state.turns.append(_Turn(call=call, call_id=call_id, content=content, arguments=written))
        return StepResult(content, ok=False, done=False, error=error)
