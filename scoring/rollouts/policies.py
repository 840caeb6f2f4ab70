"""Policies: who acts in a rollout; baselines that need no model, and a chat model.

Baselines: `noop`, `random`, `read-only`, `gold` and `gold-corrupt:N`; `openai:MODEL@URL` is a
chat model behind any OpenAI-compatible endpoint (`scoring.rollouts.llm`). Every policy ends by
handing in its answer through `submit_answer`.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from simulator import Domain
from simulator.errors import ErrorKind
from simulator.serve.mcptools import SUBMIT_ANSWER

from ..calls import NO_RESULT, resolve_arguments
from ..errors import CallReferenceError
from ..facts import fact_text
from ..validation.fuzz import seen_pools, strategy
from ..validation.mutate import key_values, mutations
from ..validation.validate import gold_message
from .base import Context, Ended, Policy
from .env import Env
from .llm import OpenAIPolicy

#: calls a random policy makes at most (at least one)
MAX_RANDOM_CALLS = 6
#: times gold retries a call that hit an injected (transient) fault
RETRIES = 5


# -- drawing arguments -------------------------------------------------------------------------


def draw(values: st.SearchStrategy[Any], seed: int) -> Any:
    """One value of a strategy, the same for the same seed (hypothesis's generation, seeded);
    None when hypothesis cannot draw one (a schema it cannot satisfy)."""
    got: list[Any] = []

    @settings(
        max_examples=2,  # hypothesis tries the simplest value first: keep the second
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(values)
    def take(value: Any) -> None:
        got.append(value)

    try:
        take()
    except Exception:
        return None
    return got[-1] if got else None


@dataclass
class Noop:
    name: str = "noop"

    async def run(self, env: Env, ctx: Context) -> Ended:
        await env.answer("")
        return Ended(turns=1)


@dataclass
class RandomCalls:
    """Random schema-valid calls; identifiers from earlier results (`read_only`: reads only)."""

    name: str = "random"
    read_only: bool = False
    max_calls: int = MAX_RANDOM_CALLS

    async def run(self, env: Env, ctx: Context) -> Ended:
        tools = [t for t in env.tools if t.name != SUBMIT_ANSWER and (t.read_only or not self.read_only)]
        seen: list[Any] = []
        turns = 0
        for _ in range(ctx.rng.randint(1, self.max_calls) if tools else 0):
            tool = ctx.rng.choice(tools)
            arguments = draw(strategy(tool.schema, None, seen_pools(seen)), ctx.rng.getrandbits(32))
            if not isinstance(arguments, dict):
                continue
            turns += 1
            observed = await env.call(tool.name, arguments)
            if observed.ok:
                seen.append(observed.value)
        await env.answer("")
        return Ended(turns=turns + 1)


@dataclass
class Gold:
    """The gold calls and answer; `corrupt` > 0: that many seeded single-call corruptions."""

    name: str = "gold"
    corrupt: int = 0

    def _plan(self, ctx: Context) -> tuple[dict[int, str], list[Any]]:
        """Which calls to corrupt (index -> "drop" or "mutate") and the answer facts to state."""
        task = ctx.task
        writes = [
            i for i, c in enumerate(task.calls) if ctx.domain.tools[c.name].writes and not c.expect_error
        ]
        facts = list(task.answer_facts)
        if not self.corrupt:
            return {}, facts
        if not writes:  # nothing to corrupt in the state: the answer loses facts instead
            for _ in range(min(self.corrupt, len(facts))):
                facts.pop(ctx.rng.randrange(len(facts)))
            return {}, facts
        chosen = sorted(ctx.rng.sample(writes, min(self.corrupt, len(writes))))
        return {i: ctx.rng.choice(("drop", "mutate")) for i in chosen}, facts

    async def run(self, env: Env, ctx: Context) -> Ended:
        task = ctx.task
        plan, facts = self._plan(ctx)
        results: list[Any] = []
        turns = 0
        for i, call in enumerate(task.calls):
            try:
                arguments = resolve_arguments(call.arguments, results, task.id, i)
            except CallReferenceError:  # a call it needs failed (a fault hit it): stop here
                break
            if plan.get(i) == "mutate":
                options = mutations(ctx.domain, call.name, arguments, call.free, ctx.keys)
                if options:
                    arguments = ctx.rng.choice(options).arguments
                else:
                    plan[i] = "drop"
            if plan.get(i) == "drop":
                results.append(NO_RESULT)
                continue
            for _ in range(RETRIES + 1):  # a transient fault says "Retry it": a competent agent does
                turns += 1
                observed = await env.call(call.name, arguments)
                if observed.fault != ErrorKind.INJECTED:
                    break
            results.append(observed.value if observed.ok else NO_RESULT)
        if facts == list(task.answer_facts):
            message = gold_message(task)
        else:
            message = " ; ".join(fact_text(f) for f in facts)
        await env.answer(message)
        return Ended(turns=turns + 1)


def parse_policy(text: str) -> Policy:
    """A policy by name: noop, random, read-only, gold, gold-corrupt:N, openai:MODEL@URL.

    ValueError (naming the choices) for anything else.
    """
    makers: dict[str, Callable[[], Policy]] = {
        "noop": Noop,
        "random": RandomCalls,
        "read-only": lambda: RandomCalls(name="read-only", read_only=True),
        "gold": Gold,
    }
    if text in makers:
        return makers[text]()
    head, sep, rest = text.partition(":")
    if head == "gold-corrupt" and sep:
        if not rest.isdigit() or int(rest) < 1:
            raise ValueError(f"policy {text!r}: gold-corrupt:N needs a whole number N >= 1")
        return Gold(name=text, corrupt=int(rest))
    if head == "openai" and sep:
        return OpenAIPolicy.parse(text)
    raise ValueError(
        f"unknown policy {text!r}: choose noop, random, read-only, gold, gold-corrupt:N or openai:MODEL@URL"
    )


def corruption_keys(domain: Domain) -> dict[Any, list[Any]]:
    """The key index mutations swap identifiers within (computed once per domain)."""
    return key_values(domain)
