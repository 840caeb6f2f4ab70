"""An error the agent's arguments cause inside an operation is the agent's precise tool error.

Never an infrastructure failure, never an escaped exception: a 64-bit overflow, a division by
zero, a limit that is not a number, NaN or infinity, a date-time out of range, text that is not
valid Unicode. Each failed call leaves the state exactly as it was. The engine's backstop
(`OperationError`) catches what no precise check does; on the bundled domains, hostile
schema-valid arguments reach no backstop at all.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import load_domain
from scoring.tasks import Task
from scoring.validation.fuzz import pools, strategy
from scoring.validation.gold import replay_gold
from simulator import ToolError, list_domain_dirs
from simulator.errors import OperationError, TaskError
from simulator.plan.runsteps import CompiledTool, Run
from tests.test_language import make, tool

BIG = 2**63  # one past SQLite's largest integer
OUT_OF_RANGE = "is out of range: integers must be between -2^63 and 2^63-1"
BANK_ACCOUNT = {"customer_id": "CUS-090075c2", "account_id": "ACC-1205479a"}


def failure(ep, name: str, args: dict[str, Any]) -> ToolError:
    """Call a tool that must fail with a precise tool error; the state must not change."""
    before = ep.digest()
    with pytest.raises(ToolError) as info:
        ep.call(name, args)
    assert not getattr(info.value, "unguarded", False), str(info.value)
    assert info.value.kind == "tool"
    assert ep.digest() == before
    return info.value


@pytest.mark.parametrize("amount", [BIG, -BIG - 1, 10**30])
def test_overflowing_filter_value_names_the_argument(amount):
    bank = load_domain("bank")
    with bank.episode() as ep:
        for name in ("list_account_transfers", "list_card_transactions"):
            args = {**BANK_ACCOUNT, "min_amount": amount}
            if name == "list_card_transactions":
                args = {"customer_id": "CUS-090075c2", "card_id": _first_card(bank), "min_amount": amount}
            assert str(failure(ep, name, args)) == f"min_amount {OUT_OF_RANGE}"
        # the largest integer SQLite holds is fine
        assert ep.call("list_account_transfers", {**BANK_ACCOUNT, "min_amount": BIG - 1})["outgoing"] == []


def _first_card(bank) -> str:
    return next(r["card_id"] for r in bank.seed_rows["cards"] if r["account_id"] == "ACC-1205479a")


def test_division_by_zero_and_overflow_in_expressions(tmp_path):
    d = make(
        tmp_path,
        [
            tool("ratio", {"return": {"div": ["$args.a", "$args.b"]}}, props={"a": {}, "b": {}}),
            tool("times", {"return": {"mul": ["$args.a", "$args.b"]}}, props={"a": {}, "b": {}}),
            tool("plus", {"return": {"add": ["$args.a", "$args.b"]}}, props={"a": {}, "b": {}}),
            tool("rounded", {"return": {"round": ["$args.a", "$args.b"]}}, props={"a": {}, "b": {}}),
            tool("later", {"return": {"datetime_add": ["$args.a", "$args.b"]}}, props={"a": {}, "b": {}}),
            tool("biggest", {"return": {"max": "$args.a"}}, props={"a": {}}),
        ],
    )
    with d.episode() as ep:
        assert ep.call("ratio", {"a": 1, "b": 4}) == 0.25
        assert str(failure(ep, "ratio", {"a": 1, "b": 0})) == "div: cannot divide by zero"
        assert str(failure(ep, "ratio", {"a": 10**400, "b": 3})) == "div: a number is out of range (overflow)"
        assert (
            str(failure(ep, "times", {"a": 1e300, "b": 1e300}))
            == "mul: the result is out of range (overflow)"
        )
        assert str(failure(ep, "times", {"a": 10**300, "b": 10**300})) == (
            "mul: the result is out of range (overflow)"
        )
        assert (
            str(failure(ep, "plus", {"a": 1e308, "b": 1e308})) == "add: the result is out of range (overflow)"
        )
        assert (
            str(failure(ep, "plus", {"a": float("nan"), "b": 1})) == "add: expected a finite number, got nan"
        )
        assert str(failure(ep, "plus", {"a": "1", "b": 1})) == 'add: expected a number, got "1"'
        assert str(failure(ep, "rounded", {"a": float("inf"), "b": 0})) == (
            "round: expected a finite number, got inf"
        )
        assert ep.call("rounded", {"a": 2.5, "b": 10**30}) == 2.5
        assert str(failure(ep, "rounded", {"a": 2.5, "b": "x"})) == 'round: expected a whole number, got "x"'
        assert str(failure(ep, "later", {"a": "9999-12-31T23:59:59Z", "b": 1})) == (
            "datetime_add: the resulting date-time is out of range (years 1 to 9999)"
        )
        assert str(failure(ep, "later", {"a": "2026-13-45", "b": 1})) == (
            'datetime_add: "2026-13-45" is not an ISO-8601 date-time'
        )
        assert str(failure(ep, "biggest", {"a": ["a", 1]})) == "max: cannot work on these values (an array)"


def test_a_limit_or_offset_that_is_not_a_whole_number(tmp_path):
    listing = {"list": "people", "limit": "$args.limit", "offset": "$args.skip", "order_by": ["name"]}
    d = make(tmp_path, [tool("people", listing, props={"limit": {}, "skip": {}})])
    with d.episode() as ep:
        assert [p["name"] for p in ep.call("people", {"limit": 2})] == ["Ada", "Bo"]
        assert [p["name"] for p in ep.call("people", {"limit": "1", "skip": 2.0})] == ["Cy"]
        assert str(failure(ep, "people", {"limit": "abc"})) == 'limit must be a whole number, got "abc"'
        assert str(failure(ep, "people", {"limit": [3]})) == "limit must be a whole number, got [3]"
        assert str(failure(ep, "people", {"skip": 1.5})) == "skip must be a whole number, got 1.5"
        # past SQLite's range a limit means "all" and an offset means "none left"
        assert len(ep.call("people", {"limit": 10**30})) == 3
        assert ep.call("people", {"skip": 10**30}) == []


def test_values_sqlite_cannot_store_are_the_agents_errors(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "find",
                {"list": "people", "where": [{"column": "name", "value": "$args.name"}]},
                props={"name": {}},
            ),
            tool("one", {"get": "people", "key": {"id": "$args.id"}}, props={"id": {}}),
            tool(
                "hire",
                {
                    "create": "people",
                    "values": {"name": "$args.name", "team": "Ops", "salary": "$args.pay", "joined": "$now"},
                },
                kind="write",
                props={"name": {}, "pay": {}},
            ),
            tool(
                "tag",
                {"create": "notes", "values": {"n": "$args.n", "person": "P-1", "text": "hi"}},
                kind="write",
                props={"n": {}},
            ),
            tool(
                "among",
                {"list": "people", "where": [{"column": "salary", "op": "in", "value": "$args.pay"}]},
                props={"pay": {}},
            ),
        ],
    )
    bad_text = "A\ud800"
    with d.episode() as ep:
        assert str(failure(ep, "find", {"name": bad_text})) == (
            "name holds characters that are not valid Unicode text (unpaired surrogates)"
        )
        assert str(failure(ep, "find", {"name": {"a": 1}})) == (
            "name must be a single value (a string, number, boolean or null), not an object"
        )
        assert str(failure(ep, "one", {"id": ["P-1"]})) == (
            "id must be a single value (a string, number, boolean or null), not an array"
        )
        assert str(failure(ep, "one", {"id": BIG})) == f"id {OUT_OF_RANGE}"
        assert str(failure(ep, "one", {"id": bad_text})) == (  # (a lookup by key binds it positionally)
            "id holds characters that are not valid Unicode text (unpaired surrogates)"
        )
        assert str(failure(ep, "hire", {"name": bad_text, "pay": 1})) == (
            "name holds characters that are not valid Unicode text (unpaired surrogates)"
        )
        assert str(failure(ep, "hire", {"name": "Di", "pay": BIG})) == (
            f"invalid value: people.salary: the value {OUT_OF_RANGE}"
        )
        assert (
            str(failure(ep, "tag", {"n": float(BIG)})) == f"invalid value: notes.n: the value {OUT_OF_RANGE}"
        )
        assert str(failure(ep, "among", {"pay": [1, float("nan")]})) == (
            "pay holds a number that is not finite (NaN or Infinity)"
        )
        assert ep.call("among", {"pay": [BIG, 50.5]})[0]["name"] == "Bo"  # a comparison, not a store
        assert ep.call("tag", {"n": BIG - 1})["n"] == BIG - 1


class _Raises(Run):
    """A step that fails the way an unguarded engine bug would."""

    def __init__(self, exc: Exception):
        self.exc = exc

    def run(self, rt: Any, env: Any) -> Any:
        rt.conn.execute("UPDATE people SET name = 'changed'")
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (OverflowError("Python int too large"), "a number is out of range (OverflowError)"),
        (KeyError("secret_internal_key"), "a value has the wrong type or shape (KeyError)"),
        (RuntimeError("boom"), "the operation failed on these values (RuntimeError)"),
    ],
)
def test_the_backstop_turns_any_other_exception_into_the_agents_tool_error(tmp_path, exc, kind):
    d = make(
        tmp_path, [tool("rename", {"update": "people", "key": {"id": "P-1"}, "set": {"name": "X"}}, "write")]
    )
    compiled = d.tools["rename"]
    d.tools["rename"] = CompiledTool(compiled.spec, [_Raises(exc)], False, True)
    with d.episode() as ep:
        before = ep.digest()
        with pytest.raises(OperationError) as info:
            ep.call("rename", {})
        assert str(info.value) == f"rename could not run on these arguments: {kind}. Nothing changed."
        assert info.value.unguarded and info.value.kind == "tool"
        assert info.value.original_type == type(exc).__name__
        assert "secret_internal_key" not in str(info.value)
        assert ep.digest() == before
        assert ep.row("people", "P-1")["name"] == "Ada"


def test_a_gold_call_that_hits_an_engine_error_is_a_task_error(tmp_path):
    d = make(tmp_path, [tool("ratio", {"return": {"div": ["$args.a", "$args.b"]}}, props={"a": {}, "b": {}})])
    task = Task(id="t-1", instruction="divide", calls=[{"name": "ratio", "arguments": {"a": 1, "b": 0}}])
    with d.episode() as ep, pytest.raises(TaskError) as info:
        replay_gold(ep, task)
    assert str(info.value) == "task t-1: gold call 0 (ratio) failed: div: cannot divide by zero"


def test_an_expected_error_that_is_an_unguarded_one_is_still_a_broken_gold_call(tmp_path):
    d = make(
        tmp_path, [tool("rename", {"update": "people", "key": {"id": "P-1"}, "set": {"name": "X"}}, "write")]
    )
    compiled = d.tools["rename"]
    d.tools["rename"] = CompiledTool(compiled.spec, [_Raises(ValueError("x"))], False, True)
    task = Task(id="t-2", instruction="x", calls=[{"name": "rename", "expect_error": True}])
    with d.episode() as ep, pytest.raises(TaskError) as info:
        replay_gold(ep, task)
    assert str(info.value).startswith(
        "task t-2: gold call 0 (rename) hit an unguarded engine error: rename could"
    )


# -- every tool of every bundled domain, with hostile schema-valid arguments ---------------------

HOSTILE: dict[str, list[Any]] = {
    "integer": [BIG, -BIG - 1, BIG - 1, -BIG, 10**30, 0, -1],
    "number": [BIG, -BIG - 1, 10**30, 1e308, -1e308, 5e-324, -0.0, 0.5],
    "string": [
        "\ud800",
        "",
        "x" * 3000,
        "9223372036854775808",
        "1e999",
        "NaN",
        "2026-13-45T99:00:00Z",
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:59-14:00",
        "%_'\";--",
        "\x00",
    ],
    "array": [[], [BIG], ["\ud800"], [{}]],
    "object": [{}, {"a": BIG}],
    "boolean": [True, False],
}


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    if path:
        yield path, value


def _with(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    at = out
    for part in path[:-1]:
        at = at[part]
    at[path[-1]] = new
    return out


def _hostile_arguments(domain, name: str) -> Iterator[dict[str, Any]]:
    """Schema-valid variants of the tool's gold arguments (or of {}): each leaf and each property
    replaced in turn by every hostile value."""
    bases: list[dict[str, Any]] = []
    for task in domain.tasks:
        for call in task.calls:
            if (
                call.name == name
                and "$calls." not in json.dumps(call.arguments)
                and call.arguments not in bases
            ):
                bases.append(call.arguments)
    bases = bases[:2] or [{}]
    props = domain.tools[name].spec.input_schema.get("properties") or {}
    everything = [v for values in HOSTILE.values() for v in values]
    for base in bases:
        paths = [p for p, _ in _leaves(base)] + [(k,) for k in props if k not in base]
        for path in paths:
            for value in everything:
                yield (
                    base
                    if not path
                    else (_with(base, path, value) if path[0] in base else {**base, path[0]: value})
                )


@pytest.mark.parametrize("folder", list_domain_dirs(), ids=lambda p: p.name)
def test_hostile_schema_valid_arguments_give_only_precise_tool_errors(folder):
    domain = load_domain(folder)
    tried = 0
    with domain.episode() as ep:
        for name in sorted(domain.tools):
            validator = domain.validators[name]
            for args in _hostile_arguments(domain, name):
                if not validator.is_valid(args):
                    continue
                tried += 1
                before = ep.digest()
                try:
                    ep.call(name, args)
                except ToolError as exc:
                    assert not getattr(exc, "unguarded", False), (name, args, str(exc))
                    assert ep.digest() == before, (name, args)
    assert tried > 50 * len(domain.tools) // 10


_HOSTILE_VALUES = st.sampled_from([v for values in HOSTILE.values() for v in values])


@pytest.mark.parametrize("name", ["bank", "office", "logistics", "tau2-retail"])
def test_drawn_arguments_with_a_hostile_value_give_only_precise_tool_errors(name):
    """Hypothesis draws schema-valid arguments (validation's fuzz strategy, ids from the seed and
    the gold calls), swaps a drawn property for a hostile value when the schema still allows it,
    and calls: the result is a value or a precise tool error, and a failed call changes nothing."""
    domain = load_domain(name)
    known = pools(domain)
    strategies = {t: strategy(domain.tools[t].spec.input_schema, None, known) for t in sorted(domain.tools)}
    ep = domain.episode()

    @given(st.data())
    def check(data):
        tool_name = data.draw(st.sampled_from(sorted(strategies)))
        args = data.draw(strategies[tool_name])
        if args and data.draw(st.booleans()):
            key = data.draw(st.sampled_from(sorted(args)))
            hostile = {**args, key: data.draw(_HOSTILE_VALUES)}
            if domain.validators[tool_name].is_valid(hostile):
                args = hostile
        before = ep.digest()
        try:
            ep.call(tool_name, args)
        except ToolError as exc:
            assert not getattr(exc, "unguarded", False), (tool_name, args, str(exc))
            assert ep.digest() == before

    try:
        check()
    finally:
        ep.close()


def test_a_sum_past_the_64_bit_range_is_the_agents_error(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "tag",
                {"create": "notes", "values": {"n": "$args.n", "person": "P-1", "text": "hi"}},
                kind="write",
                props={"n": {}},
            ),
            tool("total", {"sum": "notes", "column": "n"}),
        ],
    )
    with d.episode() as ep:
        ep.call("tag", {"n": 2**62})
        assert ep.call("total", {}) == 2**62
        ep.call("tag", {"n": 2**62 + 1})
        assert str(failure(ep, "total", {})) == "the sum of notes.n over these rows is out of range"
