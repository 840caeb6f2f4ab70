"""Property tests of the core invariants: atomicity, determinism, isolation, verbatim values."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import ToolError
from tests.conftest import FIXTURES, ROOT

customer_ids = st.sampled_from(
    [f"C-{i:04d}" for i in (1, 2, 3, 7, 20)] + ["C-0404", "'; DROP TABLE customers; --"]
)
skus = st.sampled_from([f"SKU-{i:03d}" for i in (1, 2, 3, 6, 7, 13)] + ["SKU-999"])
order_ids = st.sampled_from([f"O-{i:04d}" for i in (1, 2, 3, 4)] + ["O-404"])
nasty_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40
) | st.sampled_from(
    [
        "'",
        '"',
        "'; DROP TABLE customers; --",
        "Robert'); DELETE FROM orders;--",
        "SELECT * FROM x WHERE 1=1",
        "%_\\",
        "{args.x}",
        "$args.notes",
    ]
)

calls = st.one_of(
    st.tuples(st.just("get_customer"), st.fixed_dictionaries({"customer_id": customer_ids})),
    st.tuples(
        st.just("search_products"),
        st.fixed_dictionaries(
            {}, optional={"query": nasty_text, "max_price": st.integers(-5, 200), "limit": st.integers(-1, 9)}
        ),
    ),
    st.tuples(
        st.just("add_customer"),
        st.fixed_dictionaries(
            {"name": nasty_text, "email": st.sampled_from(["a@a", "b@b", "c1@example.com", "x"])}
        ),
    ),
    st.tuples(
        st.just("place_order"),
        st.fixed_dictionaries(
            {
                "customer_id": customer_ids,
                "items": st.lists(
                    st.fixed_dictionaries({"sku": skus, "quantity": st.integers(-1, 4)}), max_size=3
                ),
            }
        ),
    ),
    st.tuples(st.just("cancel_order"), st.fixed_dictionaries({"order_id": order_ids})),
    st.tuples(st.just("set_note"), st.fixed_dictionaries({"customer_id": customer_ids, "notes": nasty_text})),
    st.tuples(
        st.sampled_from(["nope", "get_customer"]),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    ),
)


def run(ep, sequence: list[tuple[str, dict[str, Any]]]) -> list[bool]:
    oks = []
    for name, args in sequence:
        try:
            ep.call(name, args)
            oks.append(True)
        except ToolError:
            oks.append(False)
    return oks


@given(st.lists(calls, max_size=12), st.integers(0, 3))
def test_failed_calls_leave_no_trace(shop, sequence, seed):
    ep = shop.episode(seed=seed)
    for name, args in sequence:
        before = (
            ep.digest(),
            ep.changes(),
            ep.now(),
            ep.conn.execute("SELECT * FROM _toolgym_meta ORDER BY key").fetchall(),
        )
        try:
            ep.call(name, args)
        except ToolError:
            after = (
                ep.digest(),
                ep.changes(),
                ep.now(),
                ep.conn.execute("SELECT * FROM _toolgym_meta ORDER BY key").fetchall(),
            )
            assert after == before


@given(st.lists(calls, max_size=10), st.lists(calls, max_size=10), st.integers(0, 3))
def test_episodes_never_see_each_other(shop, first, second, seed):
    a, b = shop.episode(seed=seed), shop.episode(seed=seed)
    # interleave the two sequences call by call
    for i in range(max(len(first), len(second))):
        if i < len(first):
            run(a, [first[i]])
        if i < len(second):
            run(b, [second[i]])
    alone_a, alone_b = shop.episode(seed=seed), shop.episode(seed=seed)
    run(alone_a, first)
    run(alone_b, second)
    assert a.digest() == alone_a.digest()
    assert b.digest() == alone_b.digest()


@given(nasty_text, nasty_text)
def test_values_are_stored_verbatim(shop, name, note):
    ep = shop.episode()
    created = ep.call("add_customer", {"name": name, "email": "new@x", "notes": note})
    back = ep.call("get_customer", {"customer_id": created["customer_id"]})
    assert back["name"] == name and back["notes"] == note
    ep.call("set_note", {"customer_id": "C-0002", "notes": note})
    assert ep.row("customers", "C-0002")["notes"] == note
    assert len(ep.export()["customers"]) == 21  # nothing dropped, nothing injected


_CHILD = """
import json, sys
from simulator import load_domain, ToolError
seq, seed = json.loads(sys.stdin.read())
ep = load_domain(sys.argv[1]).episode(seed=seed)
for name, args in seq:
    try:
        ep.call(name, args)
    except ToolError:
        pass
print(ep.digest())
"""


@settings(max_examples=6)
@given(st.lists(calls, min_size=1, max_size=10), st.integers(0, 5))
def test_same_seed_and_calls_give_same_digest_in_another_process(shop, sequence, seed):
    ep = shop.episode(seed=seed)
    run(ep, sequence)
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(FIXTURES / "shop")],
        input=json.dumps([sequence, seed]),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={"PYTHONHASHSEED": "random", "PATH": "", "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout.strip() == ep.digest()


@given(st.lists(calls, max_size=10), st.lists(calls, max_size=10), st.integers(0, 2))
def test_change_log_digest_agrees_with_full_digest(shop, first, second, seed):
    a, b = shop.episode(seed=seed), shop.episode(seed=seed)
    run(a, first)
    run(b, second)
    assert (a.digest() == b.digest()) == (a.full_digest() == b.full_digest())


def test_a_row_changed_and_changed_back_leaves_the_digest_of_the_seed(shop):
    fresh = shop.episode()
    ep = shop.episode()
    before = ep.row("customers", "C-0002")["notes"]
    assert before is None
    ep.call("set_note", {"customer_id": "C-0002", "notes": "x"})
    assert ep.digest() != fresh.digest()
    ep.conn.execute(
        "UPDATE customers SET notes = NULL WHERE customer_id = 'C-0002'"
    )  # back to the seed value
    assert ep.digest() == fresh.digest() and ep.full_digest() == fresh.full_digest()
