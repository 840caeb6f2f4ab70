from __future__ import annotations

import pytest

from simulator import ToolError
from simulator.runtime.transcript import MemorySink


def test_read_and_filters(shop):
    ep = shop.episode()
    mugs = ep.call("search_products", {"query": "MUG", "max_price": 40})
    assert [p["sku"] for p in mugs] == ["SKU-001", "SKU-006", "SKU-007"]
    assert all(isinstance(p["tags"], list) for p in mugs)
    assert len(ep.call("search_products", {})) == 5  # max_limit caps an unbounded list
    assert len(ep.call("search_products", {"limit": 2})) == 2


def test_multi_step_write_and_change_log(shop):
    ep = shop.episode(seed=3)
    order = ep.call(
        "place_order",
        {
            "customer_id": "C-0003",
            "items": [{"sku": "SKU-002", "quantity": 1}, {"sku": "SKU-003", "quantity": 2}],
        },
    )
    assert order["total"] == 28.0 and order["items"] == 2 and order["status"] == "pending"
    assert ep.row("customers", "C-0003")["balance"] == 272.0
    assert ep.row("products", "SKU-003")["stock"] == 1
    changed = ep.changes()
    assert ("orders", order["order_id"]) in changed and ("customers", "C-0003") in changed
    assert ep.now() == "2026-01-01T09:01:00Z"


def test_failed_call_changes_nothing(shop):
    ep = shop.episode()
    before, log = ep.digest(), ep.changes()
    with pytest.raises(ToolError, match="Only 0 of SKU-007 left"):
        # the first item succeeds (stock and order row written) before the second fails: all rolled back
        ep.call(
            "place_order",
            {
                "customer_id": "C-0003",
                "items": [{"sku": "SKU-002", "quantity": 1}, {"sku": "SKU-007", "quantity": 1}],
            },
        )
    assert ep.digest() == before and ep.changes() == log
    assert ep.now() == "2026-01-01T09:00:00Z"


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("get_customer", {}, "Invalid arguments for get_customer: 'customer_id' is a required property"),
        (
            "get_customer",
            {"customer_id": "C-0001", "x": 1},
            "Additional properties are not allowed ('x' was unexpected)",
        ),
        (
            "place_order",
            {"customer_id": "C-0001", "items": [{"sku": "SKU-001", "quantity": 0}]},
            "items.0.quantity: 0 is less than the minimum of 1",
        ),
        (
            "cancel_order",
            {"order_id": "O-0001"},
            "Order O-0001 is shipped; only pending orders can be cancelled.",
        ),
        ("cancel_order", {"order_id": "O-404"}, "No orders record with order_id O-404."),
        ("add_customer", {"name": "A", "email": "c1@example.com"}, "another row already has this email"),
        ("nope", {}, "Unknown tool 'nope'. Available tools: add_customer, cancel_order"),
    ],
)
def test_errors_say_what_was_wrong(shop, tool, args, message):
    ep = shop.episode()
    with pytest.raises(ToolError) as info:
        ep.call(tool, args)
    assert message in str(info.value)


def test_generated_ids_depend_on_seed_only(shop):
    a = shop.episode(seed=1).call("add_customer", {"name": "A", "email": "a@a"})
    b = shop.episode(seed=1).call("add_customer", {"name": "A", "email": "a@a"})
    c = shop.episode(seed=2).call("add_customer", {"name": "A", "email": "a@a"})
    assert a["customer_id"] == b["customer_id"] != c["customer_id"]
    assert a["customer_id"].startswith("C-") and len(a["customer_id"]) == 10


def test_transcript_records_calls_results_and_errors(shop):
    sink = MemorySink()
    ep = shop.episode(seed=4, transcript=sink)
    ep.call("get_customer", {"customer_id": "C-0001"})
    with pytest.raises(ToolError):
        ep.call("cancel_order", {"order_id": "O-0001"})
    ep.say("done")
    ep.end()
    kinds = [r["type"] for r in sink.records]
    assert kinds == ["header", "call", "call", "message", "end"]
    assert sink.records[0]["domain"] == "shop" and sink.records[0]["seed"] == 4
    assert sink.records[1]["ok"] and sink.records[1]["result"]["customer_id"] == "C-0001"
    assert not sink.records[2]["ok"] and sink.records[2]["error_kind"] == "tool"


def test_export_hides_bookkeeping(shop):
    ep = shop.episode()
    ep.call("add_customer", {"name": "A", "email": "a@a"})
    tables = ep.export()
    assert set(tables) == {"customers", "products", "orders", "order_items"}
    assert len(tables["customers"]) == 21


def test_a_write_outside_calls_is_noticed(shop):
    with shop.episode() as ep:
        assert not ep.written_outside_calls
        ep.call("place_order", {"customer_id": "C-0003", "items": [{"sku": "SKU-002", "quantity": 1}]})
        ep.digest()  # (saving the change log is the episode's own write)
        assert not ep.written_outside_calls
        ep.conn.execute("UPDATE customers SET balance = 0")
        assert ep.written_outside_calls
