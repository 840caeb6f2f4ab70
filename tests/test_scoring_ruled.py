"""What a task rules out is the same whether a column is read from the process's seed-column cache
(tables the gold calls left as seeded) or probed in SQL on the episode (changed tables, or an
episode written outside a call): SQLite's NOCASE folds ASCII only, numbers compare by value across
int and float."""

from __future__ import annotations

import json
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from scoring import facts, load_domain
from scoring.facts import RuledOut, _json, _tokens_of, fact_text, find_ruled_out, stated, tokens
from scoring.tasks import Task
from tests.conftest import FIXTURES


def _shop_with_accents() -> Path:
    """The shop fixture plus customers whose names have non-ASCII capitals (NOCASE keeps them)
    or a NUL (NOCASE compares up to it)."""
    folder = Path(tempfile.mkdtemp(prefix="ruled-")) / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    with (folder / "seed" / "customers.jsonl").open("a") as f:
        for i, name in enumerate(["Zoë Ünal", "ZOË ÜNAL", "Ärger 7", "straße"]):
            row = {"customer_id": f"C-9{i}", "name": name, "email": f"z{i}@example.com", "balance": 1}
            f.write(json.dumps(row) + "\n")
        row = {"customer_id": "C-99", "name": "Nul", "email": "n@example.com", "notes": "Nul\x00Name"}
        f.write(json.dumps(row) + "\n")
    return folder


DOMAIN = load_domain(_shop_with_accents())
with DOMAIN.episode() as _ep:
    SEED = _ep.export()
SCALARS = sorted(
    {
        v
        for rows in SEED.values()
        for row in rows
        for v in row.values()
        if isinstance(v, str | int | float) and not isinstance(v, bool)
    },
    key=repr,
)


def _variants(value: Any) -> list[Any]:
    """The value as an answer fact might carry it: other case (ASCII and not), int as float, text."""
    if isinstance(value, str):
        return [value, value.upper(), value.swapcase(), value.replace("u", "ü"), value.lower(), value + "x"]
    out = [value, str(value), float(value), -value]
    if isinstance(value, float) and value.is_integer():
        out.append(int(value))
    return out


FACT = st.one_of(
    st.sampled_from(SCALARS).flatmap(lambda v: st.sampled_from(_variants(v))),
    st.booleans(),
    st.integers(-5, 600),
    st.text(alphabet="abcAB -ü1", max_size=6),
)


def _task(facts: list[Any]) -> Task:
    return Task.model_validate(
        {"id": "q", "instruction": "Which one is it, Customer 1?", "calls": [], "answer_facts": facts}
    )


#: calls that change rows: a created customer, an order cancelled (its status, the customer's
#: balance), a note that takes another row's value
WRITES: list[list[tuple[str, dict[str, Any]]]] = [
    [],
    [("add_customer", {"name": "Customer 1 Renamed", "email": "NEW@example.com"})],
    [("cancel_order", {"order_id": "O-0002"}), ("set_note", {"customer_id": "C-0003", "notes": "Lamp 2"})],
    [("cancel_order", {"order_id": "O-0004"}), ("add_customer", {"name": "Zoë ünal", "email": "z@x.io"})],
]


@given(facts=st.lists(FACT, min_size=1, max_size=3), write=st.integers(0, len(WRITES) - 1))
@example(facts=["zoë ünal"], write=0)  # NOCASE leaves Ü and ü apart
@example(facts=["ärger 7", 7.0], write=0)
@example(facts=["NUL\x00zzzz"], write=0)  # NOCASE stops comparing at a NUL
@example(facts=["CUSTOMER 3", 300], write=1)
@example(facts=[200.0, "PENDING"], write=2)  # C-0002's balance moved off 200
@example(facts=[40, "zoë ünal", "lamp 2"], write=3)
def test_seed_cache_and_sql_probe_agree(facts, write):
    task = _task(facts)
    with DOMAIN.episode() as cached, DOMAIN.episode() as probed:
        for name, args in WRITES[write]:  # rows the calls change: read as changed in both
            cached.call(name, args)
            probed.call(name, args)
        # a write outside any call (the same value back): every table is probed in SQL
        probed.conn.execute("UPDATE products SET title = title WHERE sku = 'SKU-001'")
        assert find_ruled_out(cached, task) == find_ruled_out(probed, task)


def test_a_changed_table_is_read_as_changed():
    """A column of a table the calls changed is read from the episode, not the seed cache."""
    task = _task(["Customer 1 Renamed"])
    with DOMAIN.episode() as ep:
        find_ruled_out(ep, _task(["Customer 2"]))  # customers.name now in the seed cache
        assert "customers.name" not in find_ruled_out(ep, task).columns
        ep.call("add_customer", {"name": "Customer 1 Renamed", "email": "new@example.com"})
        ruled = find_ruled_out(ep, task)
    assert "customers.name" in ruled.columns
    assert "Customer 2" in ruled.values and "Customer 1 Renamed" not in ruled.values


@cache
def _ruled() -> RuledOut:
    with DOMAIN.episode() as ep:
        return find_ruled_out(ep, _task(["Customer 1", 7.0, "shipped"]))


@given(picks=st.lists(st.integers(0, 10_000), max_size=12), noise=st.text(alphabet="ab 7,.$-", max_size=8))
def test_stated_is_every_ruled_out_value_the_text_holds_in_ruled_order(picks, noise):
    ruled = _ruled()
    chosen = [fact_text(ruled.values[i % len(ruled.values)]) for i in picks]
    text = noise + " " + " ; ".join(reversed(chosen))
    runs = [tokens(text)]
    naive = [
        v
        for v, shape in zip(ruled.values, ruled.shapes, strict=True)
        if any(tuple(t[i : i + len(shape)]) == shape for t in runs for i in range(len(t) - len(shape) + 1))
    ]
    assert stated([text, None], ruled) == naive
    assert set(chosen) <= {fact_text(v) for v in naive}


@given(value=st.one_of(st.integers(), st.text(alphabet="abcXYZ", min_size=1), st.text(max_size=8)))
def test_a_value_is_shaped_as_its_fact_text_tokens(value):
    """(The shortcuts for ints and single ASCII words give what the tokenizer gives.)"""
    assert _tokens_of(value) == tuple(tokens(fact_text(value)))


@given(value=st.one_of(st.integers(), st.floats(), st.text(max_size=8), st.booleans(), st.none()))
def test_a_values_sort_key_is_its_json(value):
    assert _json(value) == json.dumps(value, default=str)


def test_a_table_too_large_to_keep_is_probed_in_sql(monkeypatch):
    task = _task(["Customer 3", 7.0, "shipped"])
    with DOMAIN.episode() as ep:
        ep.call("cancel_order", {"order_id": "O-0002"})
        kept = find_ruled_out(ep, task)
        monkeypatch.setattr(facts, "_SEED_MAX", 1)
        monkeypatch.setattr(facts, "_SEED", {})
        assert find_ruled_out(ep, task) == kept and kept.columns
        assert facts._SEED == {}
