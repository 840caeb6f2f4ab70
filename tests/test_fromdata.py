"""toolgen.fromdata and `toolgym generate --data`: a tool list bound to real records.

A small shop (customers with nested names, addresses and cards; orders with item lists and a
status) and a tool list in OpenAI's function format: reads give records in the data's shape,
writes check the states their names and descriptions state and set what their arguments name,
and what the compiler cannot express is listed as not modelled.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from scoring.export import SnapshotDiff, snapshot_state
from simulator import ToolError
from simulator.errors import SpecError
from toolgen.fromdata import generate_domain
from toolgym.cli import app

DATA: dict[str, Any] = {
    "customers": {
        "ann_lee_1": {
            "customer_id": "ann_lee_1",
            "name": {"first_name": "Ann", "last_name": "Lee"},
            "address": {"street": "1 Elm Street", "city": "Austin", "zip": "78701"},
            "email": "ann@example.com",
            "cards": {
                "card_11": {"card_id": "card_11", "brand": "visa", "last_four": "1111"},
                "gift_12": {"card_id": "gift_12", "balance": 40.0},
            },
        },
        "bo_kim_2": {
            "customer_id": "bo_kim_2",
            "name": {"first_name": "Bo", "last_name": "Kim"},
            "address": {"street": "9 Oak Road", "city": "Boston", "zip": "02108"},
            "email": "bo@example.com",
            "cards": {"card_21": {"card_id": "card_21", "brand": "amex", "last_four": "2121"}},
        },
    },
    "products": {
        "p1": {"product_id": "p1", "name": "Lamp", "sku_list": ["a", "b"]},
        "p2": {"product_id": "p2", "name": "Desk", "sku_list": ["c"]},
    },
    "orders": {
        "#O1": {
            "order_id": "#O1",
            "customer_id": "ann_lee_1",
            "status": "pending",
            "items": [{"product_id": "p1", "price": 20.5}, {"product_id": "p2", "price": 99.0}],
        },
        "#O2": {
            "order_id": "#O2",
            "customer_id": "ann_lee_1",
            "status": "shipped",
            "items": [{"product_id": "p2", "price": 99.0}],
        },
        "#O3": {"order_id": "#O3", "customer_id": "bo_kim_2", "status": "pending", "items": []},
    },
}


def _tool(name: str, description: str, props: dict[str, Any], write: bool | None = None) -> dict[str, Any]:
    fn = {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": props, "required": list(props)},
    }
    entry: dict[str, Any] = {"type": "function", "function": fn}
    if write is not None:
        entry["mutates_state"] = write
    return entry


S = {"type": "string"}
TOOLS = [
    _tool("get_order_details", "Get the status and items of an order.", {"order_id": S}, False),
    _tool("get_customer_details", "Get a customer, with their cards.", {"customer_id": S}, False),
    _tool("find_customer_id_by_email", "Find a customer's id by email.", {"email": S}, False),
    _tool(
        "cancel_pending_order",
        "Cancel a pending order. The order status will be changed to 'cancelled'. "
        "The payment will be refunded to the original card.",
        {"order_id": S, "reason": S},
        True,
    ),
    _tool(
        "update_customer_address",
        "Update the address of a customer.",
        {"customer_id": S, "street": S, "city": S, "zip": S},
        True,
    ),
    _tool(
        "pay_pending_order",
        "Pay a pending order with one of the customer's cards.",
        {"order_id": S, "card_id": S},
        True,
    ),
    _tool("list_all_products", "List the name and product id of every product.", {}, False),
    _tool("calculate", "Calculate a mathematical expression.", {"expression": S}, False),
    _tool("send_feedback", "Send feedback to the team.", {"text": S}, True),
]


def write_shop(root: Path) -> tuple[Path, Path]:
    """tools.json and db.json of the shop in `root`."""
    (root / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (root / "db.json").write_text(json.dumps(DATA), encoding="utf-8")
    return root / "tools.json", root / "db.json"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_shop(tmp_path_factory.mktemp("shop"))


@pytest.fixture(scope="module")
def made(shop: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Any:
    return generate_domain(*shop, tmp_path_factory.mktemp("out") / "shop", name="shop")


def test_every_tool_keeps_its_name_or_is_listed(made: Any) -> None:
    domain = load_domain(made.folder)
    names = {t for t in domain.tools}
    assert names == {t["function"]["name"] for t in TOOLS} - {"send_feedback"}
    assert set(made.not_compiled) == {"send_feedback"}
    assert "Send feedback to the team." in made.not_compiled["send_feedback"]
    readme = (made.folder / "README.md").read_text()
    assert "send_feedback" in readme and "not modelled: The payment will be refunded" in readme


def test_reads_give_records_in_the_data_shape(made: Any) -> None:
    with load_domain(made.folder).episode(seed=0) as ep:
        assert ep.call("get_order_details", {"order_id": "#O1"}) == DATA["orders"]["#O1"]
        assert ep.call("get_customer_details", {"customer_id": "ann_lee_1"}) == DATA["customers"]["ann_lee_1"]
        assert ep.call("find_customer_id_by_email", {"email": "bo@example.com"}) == "bo_kim_2"
        assert ep.call("list_all_products", {}) == [
            {"product_id": "p1", "name": "Lamp"},
            {"product_id": "p2", "name": "Desk"},
        ]
        assert ep.call("calculate", {"expression": "0.1 + 0.2"}) == 0.3
        for tool, args in (
            ("get_order_details", {"order_id": "#O9"}),
            ("find_customer_id_by_email", {"email": "nobody@example.com"}),
            ("calculate", {"expression": "1 / 0"}),
        ):
            with pytest.raises(ToolError):
                ep.call(tool, args)


def test_writes_check_stated_states_and_change_what_they_name(made: Any) -> None:
    domain = load_domain(made.folder)
    with domain.episode(seed=0) as start:
        diff = SnapshotDiff(domain, start.export())
    with domain.episode(seed=0) as ep:
        with pytest.raises(ToolError, match="not pending"):
            ep.call("cancel_pending_order", {"order_id": "#O2", "reason": "no longer needed"})
        done = ep.call("cancel_pending_order", {"order_id": "#O1", "reason": "no longer needed"})
        assert done["status"] == "cancelled"
        with pytest.raises(ToolError, match="not pending"):
            ep.call("cancel_pending_order", {"order_id": "#O1", "reason": "again"})
        ep.call(
            "update_customer_address",
            {"customer_id": "bo_kim_2", "street": "2 Pine", "city": "Salem", "zip": "01970"},
        )
        with pytest.raises(ToolError, match="does not belong"):
            ep.call("pay_pending_order", {"order_id": "#O3", "card_id": "card_11"})
        with pytest.raises(ToolError, match="not found"):
            ep.call("pay_pending_order", {"order_id": "#O3", "card_id": "card_99"})
        changed = diff.changed(ep)
    assert set(changed) == {"orders", "customers"}
    before, after = changed["orders"]["#O1"]
    assert {k for k in after if after[k] != before[k]} == {"status"}
    _, bo = changed["customers"]["bo_kim_2"]
    assert bo["address"] == {"street": "2 Pine", "city": "Salem", "zip": "01970"}
    policy = (made.folder / "policy.md").read_text()
    assert "## `cancel_pending_order`\n\n- The order's status must be 'pending'." in policy


def test_the_untouched_domain_exports_the_data_back(made: Any) -> None:
    domain = load_domain(made.folder)
    with domain.episode(seed=0) as ep:
        assert json.loads(json.dumps(snapshot_state(domain, ep.export()))) == DATA


def test_bad_inputs_are_clear_errors(shop: tuple[Path, Path], tmp_path: Path) -> None:
    tools, data = shop
    not_tools = tmp_path / "notes.json"
    not_tools.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(SpecError, match="cannot read a tool list"):
        generate_domain(not_tools, data, tmp_path / "a")
    bad_data = tmp_path / "db.json"
    bad_data.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(SpecError):
        generate_domain(tools, bad_data, tmp_path / "b")
    result = CliRunner().invoke(
        app, ["generate", str(tools), "--data", str(bad_data), "--out", str(tmp_path / "c")]
    )
    assert result.exit_code == 1 and "cannot generate from" in result.output


def test_the_command_writes_a_domain_and_says_what_each_tool_does(
    shop: tuple[Path, Path], tmp_path: Path
) -> None:
    tools, data = shop
    result = CliRunner().invoke(
        app, ["generate", str(tools), "--data", str(data), "--out", str(tmp_path), "--name", "shop", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["domain"] == str(tmp_path / "shop")
    assert report["tools"]["cancel_pending_order"]["does"] == ['sets the order\'s status to "cancelled"']
    check = CliRunner().invoke(app, ["check", str(tmp_path / "shop")])
    assert check.exit_code == 0, check.output
    table = CliRunner().invoke(app, ["generate", str(tools), "--data", str(data), "--out", str(tmp_path)])
    assert table.exit_code == 0 and "send_feedback" in table.output


AIRLINE = Path(__file__).parent / "fixtures" / "airline"


@pytest.fixture(scope="module")
def airline(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("airline") / "airline"
    return generate_domain(AIRLINE / "airline_tools.json", AIRLINE / "db.json", out)


def test_a_tool_list_it_was_not_built_on(airline: Any) -> None:
    """tau2's airline tools (parameters as a list) over a few records in tau2's airline shape."""
    data = json.loads((AIRLINE / "db.json").read_text())
    assert set(airline.not_compiled) == {"list_all_airports", "transfer_to_human_agents"}
    assert airline.tools["book_reservation"].not_modelled == ["not stored: `payment_methods`"]
    booking = {
        "user_id": "sofia_kim_7287", "origin": "JFK", "destination": "LAX", "flight_type": "one_way",
        "cabin": "economy", "flights": [{"flight_number": "HAT001", "date": "2024-05-16"}],
        "passengers": [{"first_name": "Sofia", "last_name": "Kim", "dob": "1950-06-24"}],
        "payment_methods": [{"payment_id": "credit_card_9879898", "amount": 150}],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no",
    }  # fmt: skip
    with load_domain(airline.folder).episode(seed=0) as ep:
        assert (
            ep.call("get_reservation_details", {"reservation_id": "AIXC49"}) == data["reservations"]["AIXC49"]
        )
        made = ep.call("book_reservation", booking)
        assert len(made["reservation_id"]) == 6 and made["reservation_id"].isalnum()
        assert made["reservation_id"] not in data["reservations"]
        assert made["flights"] == [
            {
                "origin": "JFK",
                "destination": "LAX",
                "flight_number": "HAT001",
                "date": "2024-05-16",
                "price": None,
            }
        ]
        assert made["created_at"] >= "2024-05-10T16:45:00"  # the clock starts at the data's last moment
        user = ep.call("get_user_details", {"user_id": "sofia_kim_7287"})
        assert user["reservations"] == ["Q69X3R", made["reservation_id"]]
        with pytest.raises(ToolError, match="User not found"):
            ep.call("book_reservation", {**booking, "user_id": "nobody"})
        assert ep.call("cancel_reservation", {"reservation_id": "NO6JO3"})["status"] == "cancelled"
        with pytest.raises(ToolError, match="already cancelled"):
            ep.call("cancel_reservation", {"reservation_id": "JG7FMM"})
        sent = ep.call("send_certificate", {"user_id": "omar_davis_3817", "amount": 100})
        added = [
            m
            for k, m in sent["payment_methods"].items()
            if k not in data["users"]["omar_davis_3817"]["payment_methods"]
        ]
        assert [(m["source"], m["amount"]) for m in added] == [("certificate", 100)]
        found = ep.call("search_direct_flight", {"origin": "JFK", "destination": "LAX", "date": "2024-05-17"})
        assert [(f["flight_number"], f["date"], f["prices"]["economy"]) for f in found] == [
            ("HAT001", "2024-05-17", 160)
        ]
        assert (
            ep.call("search_direct_flight", {"origin": "JFK", "destination": "LAX", "date": "2024-06-01"})
            == []
        )


def test_values_from_hostile_data_and_specs_stay_values(tmp_path: Path) -> None:
    """States that look like references (`$args.x`) or templates (`{row.secret}`), a quoted state
    that looks like `$now`, and an argument name that is no identifier: all stay plain data."""
    data = {
        "tickets": {
            "t1": {"ticket_id": "t1", "status": "$args.ticket_id", "secret": "s1"},
            "t2": {"ticket_id": "t2", "status": "{row.secret}", "secret": "s2"},
            "t3": {"ticket_id": "t3", "status": "open", "secret": "s3"},
        }
    }
    tools = [
        _tool(
            "close_open_ticket",
            "Close an open ticket. Its status will be changed to '$now'.",
            {"ticket_id": S, "a.b": S},
            True,
        ),
        _tool(
            "reopen_ticket",
            "Reopen a ticket. The status will be set to '{row.secret}'.",
            {"ticket_id": S},
            True,
        ),
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    (tmp_path / "db.json").write_text(json.dumps(data), encoding="utf-8")
    made = generate_domain(tmp_path / "tools.json", tmp_path / "db.json", tmp_path / "out")
    with load_domain(made.folder).episode(seed=0) as ep:
        assert ep.call("close_open_ticket", {"ticket_id": "t3", "a.b": "x"})["status"] == "$now"
        with pytest.raises(ToolError) as refused:
            ep.call("close_open_ticket", {"ticket_id": "t1", "a.b": "x"})
        assert "s1" not in str(refused.value)
        assert ep.call("reopen_ticket", {"ticket_id": "t1"})["status"] == "{row.secret}"
        with pytest.raises(ToolError, match=r"already \{row\.secret\}"):
            ep.call("reopen_ticket", {"ticket_id": "t2"})
