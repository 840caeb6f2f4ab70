"""One call can never stall a server: per-call budgets, and what is rejected before it runs.

Each finding of issue 10's "one call stalls every session" is reproduced here as the call that
used to run for seconds or hours; the tests assert outcomes (never times: benchmarks/ measures).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import load_domain
from simulator import InfraError, ToolError
from simulator.codegen.fastschema import (
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LENGTH,
    input_validator,
    search_pattern,
)
from simulator.errors import CallTimeout, WorkLimitError
from simulator.lang.calc import calc
from simulator.lang.expressions import Scope, compile_expr
from simulator.runtime.budget import Budget, count_of, member
from simulator.runtime.transcript import MemorySink

from .conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent
EXCHANGE = "exchange_delivered_order_items"


@pytest.fixture(scope="module")
def retail():
    return load_domain("tau2-retail")


@pytest.fixture(scope="module")
def bundled(retail):
    from simulator import list_domain_dirs

    return [retail if folder.name == "tau2-retail" else load_domain(folder) for folder in list_domain_dirs()]


def _exchange_args(task):
    return next(c.arguments for c in task.calls if c.name == EXCHANGE)


def _gold_until_exchange(domain, ep):
    task = domain.task("0")
    for call in task.calls:
        if call.name == EXCHANGE:
            return call.arguments
        ep.call(call.name, call.arguments)
    raise AssertionError("task 0 has an exchange")


# -- the budget --------------------------------------------------------------------------------


def test_over_the_evaluation_budget_is_the_agents_tool_error_and_rolls_back(retail):
    sink = MemorySink()
    with retail.episode(transcript=sink) as ep:
        args = _gold_until_exchange(retail, ep)
        before = ep.digest()
        ep.meter.budget = Budget(eval_steps=3)
        with pytest.raises(WorkLimitError) as caught:
            ep.call(EXCHANGE, args)
        assert caught.value.kind == "tool" and not isinstance(caught.value, InfraError)
        assert str(caught.value).startswith("This call needs more work than one call may do (")
        assert "nothing changed. Ask for less, e.g. a smaller limit or fewer ids." in str(caught.value)
        assert ep.digest() == before
        assert sink.records[-1]["error_kind"] == "tool"
        ep.meter.budget = Budget()
        ep.call(EXCHANGE, args)  # the same call, within budget, goes through (the rollback was clean)
        assert ep.digest() != before


def test_over_the_sqlite_budget_is_interrupted_and_named(retail):
    with retail.episode(budget=Budget(sqlite_steps=1000)) as ep:
        with pytest.raises(WorkLimitError, match="database steps"):
            ep.call("find_user_id_by_email", {"email": "nobody@example.com"})
        assert ep.meter.sqlite_steps > 1000
        ep.meter.budget = Budget()
        with pytest.raises(ToolError, match="not found|User"):  # the connection still works
            ep.call("find_user_id_by_email", {"email": "nobody@example.com"})


@pytest.mark.parametrize("where", ["sqlite", "evaluation"])
def test_past_the_wall_clock_is_a_timeout_the_server_imposed(retail, where):
    sink = MemorySink()
    with retail.episode(transcript=sink, budget=Budget(wall_seconds=1e-9)) as ep:
        if where == "sqlite":
            call, args = "find_user_id_by_email", {"email": "nobody@example.com"}
        else:  # 1,000 ids: evaluation steps past the clock check, and no SQL scan
            call, args = EXCHANGE, _exchange_args(retail.task("0"))
            ep.meter.budget = Budget()
            _gold_until_exchange(retail, ep)
            ep.meter.budget = Budget(wall_seconds=1e-9)
            args = {**args, "item_ids": ["1"] * 1000, "new_item_ids": ["1"] * 1000}
        before = ep.digest()
        with pytest.raises(CallTimeout) as caught:
            ep.call(call, args)
        assert isinstance(caught.value, InfraError) and caught.value.kind == "timeout"
        assert ep.digest() == before
        assert sink.records[-1]["error_kind"] == "timeout"


def test_budgets_are_configurable_per_domain_and_episode(retail):
    assert retail.episode().meter.budget == Budget()
    assert retail.episode(budget=Budget(eval_steps=7)).meter.budget.eval_steps == 7
    with pytest.raises(Exception, match="positive"):
        Budget(sqlite_steps=0)


def test_every_bundled_gold_call_runs_far_inside_the_default_budget(bundled):
    from scoring.validation.gold import replay_gold

    budget = Budget()
    for domain in bundled:
        for task in domain.tasks:
            with domain.episode() as ep:

                def inside(i, outcome, ep=ep, task=task):
                    assert ep.meter.sqlite_steps * 100 <= budget.sqlite_steps, (task.id, outcome.name)
                    assert ep.meter.eval_steps * 100 <= budget.eval_steps, (task.id, outcome.name)

                replay_gold(ep, task, after=inside)


_CALLS = [
    ("find_user_id_by_email", {"email": "nobody@example.com"}),
    ("find_user_id_by_name_zip", {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"}),
    ("get_order_details", {"order_id": "#W2378156"}),
    ("calculate", {"expression": "(2 + 3) * 4"}),
    (
        EXCHANGE,
        {
            "order_id": "#W2378156",
            "item_ids": ["1151293680", "4983901480"] * 40,
            "new_item_ids": ["7706410293", "7747408585"] * 40,
            "payment_method_id": "credit_card_9513926",
        },
    ),
]


def _verdict(domain, budget, index):
    """The call's outcome and counts on a new connection (a reused one may count up to one
    interval more per statement: tests/test_pool_budget.py)."""
    name, args = _CALLS[index]
    domain.pool().close()
    with domain.episode(budget=budget) as ep:
        try:
            ep.call(name, args)
            outcome = "ok"
        except WorkLimitError:
            outcome = "over"
        except ToolError:
            outcome = "error"
        return outcome, ep.meter.sqlite_steps, ep.meter.eval_steps


@settings(max_examples=25)
@given(
    index=st.integers(0, len(_CALLS) - 1),
    sqlite_steps=st.integers(1, 5000),
    eval_steps=st.integers(1, 400),
)
def test_the_step_budgets_verdict_is_deterministic(retail, index, sqlite_steps, eval_steps):
    budget = Budget(sqlite_steps=sqlite_steps, eval_steps=eval_steps, wall_seconds=3600)
    assert _verdict(retail, budget, index) == _verdict(retail, budget, index)


def test_the_step_counts_agree_in_another_process(retail):
    budget = Budget(wall_seconds=3600)
    here = [_verdict(retail, budget, i) for i in range(len(_CALLS))]
    script = (
        "import json, sys; sys.path.insert(0, '.'); from tests.test_budget import _verdict, _CALLS;"
        "from simulator import load_domain; from simulator.runtime.budget import Budget;"
        "d = load_domain('tau2-retail');"
        "print(json.dumps([_verdict(d, Budget(wall_seconds=3600), i) for i in range(len(_CALLS))]))"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [list(v) for v in here]
    assert any(v[1] > 0 for v in here) and any(v[2] > 0 for v in here)  # both counters counted


# -- rejected before it runs -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "((9**999)**999)**999",
        "((9**999)**999)**5",
        "(9**999)**999",
        "(2**8000)*(2**9000)",
        "9**999*9**999*9**999*9**999*9**999*9**999",
        "1" * 5000,  # more digits than Python parses (used to escape as ValueError)
    ],
)
def test_calc_refuses_huge_integers_before_computing(text):
    assert calc(text) is None


def test_calc_still_computes_what_fits():
    assert calc("2**1000") == 2**1000
    assert calc("9**999//9**998") == 9
    assert calc("(2**500)*(2**500)") == 2**1000
    assert calc("-(2)**3") == -8 and calc("2**-2") == 0.25


def test_the_nested_power_is_a_tool_error_for_the_agent(retail):
    with retail.episode() as ep:
        with pytest.raises(ToolError) as caught:
            ep.call("calculate", {"expression": "((9**999)**999)**999"})
        assert caught.value.kind == "tool"
        assert ep.call("calculate", {"expression": "1+1"}) == "2.0"  # tau2 formats its result


def _walk_arrays(schema):
    if isinstance(schema, dict):
        if schema.get("type") == "array" or "items" in schema:
            yield schema
        for value in schema.values():
            yield from _walk_arrays(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk_arrays(value)


def test_every_input_array_of_every_bundled_tool_is_bounded(bundled):
    arrays = [
        a
        for domain in bundled
        for tool in domain.tool_specs()
        for a in _walk_arrays(tool.input_schema.get("properties", {}))
    ]
    assert arrays and all(isinstance(a.get("maxItems"), int) for a in arrays)


@pytest.fixture
def guarded(tmp_path):
    """The shop fixture plus a tool whose schema has a catastrophic pattern and bounded arrays."""
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "seed").symlink_to(FIXTURES / "shop" / "seed")
    spec = yaml.safe_load((FIXTURES / "shop" / "domain.yaml").read_text())
    spec["tools"].append(
        {
            "name": "find_by_code",
            "description": "Look up a product by its code.",
            "kind": "read",
            "input_schema": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "pattern": "^(a+)+$", "maxLength": 1_000_000},
                    "skus": {"type": "array", "items": {"type": "string"}},
                    "free": {"type": "string"},
                    "few": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                    "kind": {"type": "string", "enum": ["book", "game"]},
                },
                "required": ["code"],
            },
            "operation": {"get": "products", "key": {"sku": "$args.code"}, "error": "No product {args.code}"},
        }
    )
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_domain(folder)


def test_a_catastrophic_pattern_runs_in_linear_time(guarded):
    with guarded.episode() as ep:
        with pytest.raises(ToolError, match=r"does not match '\^\(a\+\)\+\$'"):
            ep.call("find_by_code", {"code": "a" * 23 + "!"})
        with pytest.raises(ToolError, match="No product"):
            ep.call("find_by_code", {"code": "a" * 100_000})  # matches; no such product


def test_author_bounds_are_kept_and_missing_ones_added(guarded):
    props = guarded.tools["find_by_code"].spec.input_schema["properties"]
    assert props["skus"]["maxItems"] == DEFAULT_MAX_ITEMS and props["few"]["maxItems"] == 3
    # free text gets a default maxLength (items of arrays too); an author's, an enum's, are kept
    assert props["free"]["maxLength"] == props["skus"]["items"]["maxLength"] == DEFAULT_MAX_LENGTH
    assert props["code"]["maxLength"] == 1_000_000 and "maxLength" not in props["kind"]
    with guarded.episode() as ep:
        with pytest.raises(ToolError, match="4 items, at most 3 allowed"):
            ep.call("find_by_code", {"code": "a", "few": ["x"] * 4})
        with pytest.raises(ToolError, match="free: .* is too long"):
            ep.call("find_by_code", {"code": "a", "free": "x" * (DEFAULT_MAX_LENGTH + 1)})


def test_error_messages_quote_a_bounded_prefix_of_a_value(guarded):
    with guarded.episode() as ep:
        for args in (
            {"code": "a", "kind": "x" * 900_000},
            {"code": "b" * 900_000},
            {"code": "a", "skus": ["y" * 1000] * 100_000},
            {"code": "a", "few": [{"k": "z" * 10_000}] * 50},
        ):
            with pytest.raises(ToolError) as caught:
                ep.call("find_by_code", args)
            assert len(str(caught.value)) < 2000, str(caught.value)[:300]
            assert "…" in str(caught.value) or "..." in str(caught.value)


def test_lone_surrogates_are_matched_not_crashed_on():
    validator = input_validator({"type": "string", "pattern": "^a"})
    assert validator.is_valid("a\ud800") and not validator.is_valid("\ud800a")
    assert search_pattern("^a")("a\ud800")


# -- the quadratic exchange --------------------------------------------------------------------


@pytest.mark.parametrize("n", [100, 300, 1000])
def test_the_exchange_is_linear_in_its_ids(retail, n):
    args = {**_exchange_args(retail.task("0")), "item_ids": ["1151293680"] * n, "new_item_ids": ["1"] * n}
    with retail.episode() as ep:
        with pytest.raises(ToolError, match="Number of 1151293680 not found"):
            ep.call(EXCHANGE, args)
        assert ep.meter.eval_steps <= 12 * n + 50  # a quadratic count would charge n * n


def test_the_hundred_thousand_id_exchange_is_refused_before_it_runs(retail):
    ids = ["1151293680", "4983901480"] * 50_000
    args = {**_exchange_args(retail.task("0")), "item_ids": ids, "new_item_ids": ids}
    with retail.episode() as ep:
        before = ep.digest()
        with pytest.raises(ToolError, match="100,000 items, at most 1,000 allowed") as caught:
            ep.call(EXCHANGE, args)
        assert len(str(caught.value)) < 2000
        assert ep.digest() == before and ep.meter.eval_steps == 0


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 2.5])
    | st.text("ab", max_size=2)
)
values = (
    scalars | st.lists(scalars, max_size=2) | st.dictionaries(st.text("ab", max_size=1), scalars, max_size=2)
)


@given(st.lists(values, max_size=80), values)
def test_indexed_count_and_membership_agree_with_lists(retail, items, value):
    with retail.episode() as ep, ep.meter.run(ep.conn):
        for _ in range(2):  # the second time from the call's index
            assert count_of(items, value) == items.count(value)
            assert member(items, value) == (value in items)


@given(st.lists(values, max_size=40))
def test_unique_keeps_first_occurrences_as_a_scan_does(items):
    unique = compile_expr({"unique": "$args.xs"}, Scope(["xs"]))
    expected: list = []
    for v in items:
        if v not in expected:
            expected.append(v)
    got = unique({"args": {"xs": items}})
    assert got == expected and [type(v) for v in got] == [type(v) for v in expected]


def test_work_outside_calls_is_not_counted_against_the_budget(retail):
    """The progress handler stays on the connection between calls (set once) and counts nothing
    there: a full scan outside calls is neither counted nor interrupted, the next call is counted
    from zero, and a later episode on the same (pooled) connection meters its own calls."""
    order = retail.episode().conn.execute("SELECT order_id FROM orders LIMIT 1").fetchone()[0]
    with retail.episode(budget=Budget(sqlite_steps=20_000)) as ep:
        ep.call("get_order_details", {"order_id": order})
        ep.full_digest()  # (hundreds of thousands of steps)
        ep.export()
        assert ep.meter.sqlite_steps <= 20_000
        ep.call("get_order_details", {"order_id": order})
    with retail.episode(budget=Budget(sqlite_steps=1000)) as ep:
        with pytest.raises(WorkLimitError, match="database steps"):
            ep.call("find_user_id_by_email", {"email": "nobody@example.com"})
