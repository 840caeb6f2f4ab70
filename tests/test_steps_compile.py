"""A step list run as one generated function (`simulator.plan.runsteps.compile_steps`) does what `run_steps` and
`run_body` do: the same value, the same bindings left in the environment, the same `return`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from simulator.errors import ToolError
from simulator.plan.runsteps import (
    LetRun,
    RequireRun,
    ReturnRun,
    ReturnSignal,
    Run,
    compile_steps,
    run_body,
    run_steps,
)

ACTED: list[int] = []  # the steps `run_unread` ran (kept out of the environment, which is compared)


NO_RUNTIME: Any = None  # (these steps use none)


@dataclass
class Fixed(Run):
    """A step giving a fixed value (or raising a `return` from inside, as a loop's would)."""

    value: Any
    bind: str | None
    yields: bool | None
    signals: bool = False

    def run(self, rt: Any, env: Any) -> Any:
        env.setdefault("effects", []).append(id(self))  # (what `run_unread` must do too)
        if self.signals:
            raise ReturnSignal(("returned", self.value))
        return self.value

    def run_unread(self, rt: Any, env: Any) -> None:
        self.run(rt, env)
        ACTED.append(id(self))


FIXED = st.builds(
    Fixed,
    value=st.one_of(st.none(), st.integers(0, 3)),
    bind=st.sampled_from([None, "a", "b", "it's"]),
    yields=st.sampled_from([True, None, False]),
    signals=st.sampled_from([False, False, False, True]),
)
# `let` and `require` are written out by `compile_steps`: the same bindings, values and errors
LETS = st.builds(
    lambda v, name: LetRun(lambda env: (v, env.get("a")), name),
    st.integers(0, 3),
    st.sampled_from(["a", "b"]),
)
REQUIRES = st.builds(
    lambda key: RequireRun(lambda env: key not in env, lambda env: f"{key} is bound: {env[key]}"),
    st.sampled_from(["a", "b", "nothing"]),
)
STEPS = st.one_of(FIXED, FIXED, LETS, REQUIRES)


def _lists() -> st.SearchStrategy[list[Run]]:
    last = st.one_of(
        st.none(), st.builds(lambda v: ReturnRun(lambda env: ("last", v, dict(env))), st.integers())
    )
    return st.tuples(st.lists(STEPS, max_size=6), last).map(lambda t: [*t[0], *([t[1]] if t[1] else [])])


def outcome(fn: Any, steps: list[Run], env: dict[str, Any]) -> Any:
    ACTED.clear()
    try:
        result: tuple[Any, ...] = ("value", fn(steps, None, env))
    except ReturnSignal as signal:
        result = ("signal", signal.value)
    except ToolError as exc:
        result = ("error", str(exc))
    for step in steps:  # a step whose value was not built is one whose value nothing read
        if id(step) in ACTED:
            assert isinstance(step, Fixed) and not step.bind
    return (*result, env)


@given(steps=_lists())
def test_straight_is_run_body(steps: list[Run]) -> None:
    body = compile_steps(steps, whole=True)
    assert outcome(lambda s, rt, env: body(rt, env), steps, {"x": 1}) == outcome(run_body, steps, {"x": 1})


@given(steps=st.lists(STEPS, max_size=6))
def test_straight_is_run_steps(steps: list[Run]) -> None:
    body = compile_steps(steps)
    assert outcome(lambda s, rt, env: body(rt, env), steps, {"x": 1}) == outcome(run_steps, steps, {"x": 1})


def test_a_value_nothing_reads_is_not_built() -> None:
    first, second, third = (Fixed(i, None, True) for i in range(3))
    env: dict[str, Any] = {}
    ACTED.clear()
    assert compile_steps([first, Fixed(9, "x", False), second, third])(NO_RUNTIME, env) == 2
    assert ACTED == [id(first), id(second)]
    assert env["effects"] == [id(first), env["effects"][1], id(second), id(third)]


class Plain:
    """A step of no Run class: only `run`, `bind` and `yields`."""

    bind = None
    yields = False

    def run(self, rt: Any, env: Any) -> Any:
        env["plain"] = True


def test_a_step_of_another_class_is_run() -> None:
    env: dict[str, Any] = {}
    assert compile_steps([Plain(), Fixed(1, None, True)], whole=True)(NO_RUNTIME, env) == 1  # type: ignore[list-item]
    assert env["plain"] is True
