"""toolgen.synth.tools: every operation of a real spec compiled into a tool that behaves as its kind says."""

from __future__ import annotations

import pytest

from simulator.errors import ToolError
from toolgen.synth.folder import build_domain
from toolgen.synth.schema import infer_schema
from toolgen.synth.tools import compile_tools, input_schema

from .synth_kit import SHOP, WEATHER, make_op, planned, planned_from

USERS = [
    {"id": "U-1", "name": "Ada Lovelace", "email": "ada@example.com", "status": "active"},
    {"id": "U-2", "name": "Alan Turing", "email": "alan@example.com", "status": "suspended"},
    {"id": "U-3", "name": "Grace Hopper", "email": "grace@example.com", "status": "active"},
]
ORDERS = [
    {"id": "O-1", "user_id": "U-1", "total": 10, "status": "placed", "created_at": "2026-03-01T10:00:00Z"},
    {"id": "O-2", "user_id": "U-1", "total": 99.5, "status": "delivered"},
    {"id": "O-3", "user_id": "U-2", "total": 5, "status": "cancelled"},
    {"id": "O-4", "user_id": "U-1", "total": 42, "status": "shipped"},
]


def _domain(spec, rows):
    plan, ops = planned(spec)
    schema = infer_schema(plan, ops)
    toolset = compile_tools(schema)
    builder = build_domain(plan, schema, toolset)
    for table, table_rows in rows.items():
        builder.seed(table, table_rows)
    return builder, toolset


@pytest.fixture(scope="module")
def shop():
    builder, toolset = _domain(SHOP, {"users": USERS, "orders": ORDERS})
    report = builder.check()
    assert report.errors == [] and report.warnings == []
    return builder.load(), toolset


@pytest.fixture
def ep(shop):
    return shop[0].episode(seed=0)


def test_every_operation_is_a_tool_of_the_kind_its_operation_says(shop):
    _, toolset = shop
    assert toolset.not_compiled == []
    assert {t.name: t.compiled_as for t in toolset.tools} == {
        "cancel_order": "status",
        "create_order": "create",
        "create_user": "create",
        "delete_user": "delete",
        "get_order": "get",
        "get_user": "get",
        "list_user_orders": "list",
        "list_users": "list",
        "notify_order": "event",
        "update_user": "update",
    }
    assert {t.name for t in toolset.tools if t.kind == "read"} == {
        "get_order",
        "get_user",
        "list_user_orders",
        "list_users",
    }


def test_the_input_schema_keeps_the_specs_names_descriptions_and_required_arguments(shop):
    domain, _ = shop
    tools = {t.name: t for t in domain.spec.tools}
    create_user = tools["create_user"].input_schema
    assert create_user["required"] == ["name", "email"]
    assert create_user["properties"]["name"]["description"] == "The user's full name."
    assert create_user["additionalProperties"] is False
    assert tools["get_user"].input_schema["required"] == ["userId"]
    assert "required" not in tools["update_user"].input_schema or tools["update_user"].input_schema[
        "required"
    ] == ["userId"]
    assert tools["cancel_order"].description == "Cancel an order."


def test_read_by_key_gets_the_row_or_says_it_does_not_exist(ep):
    assert ep.call("get_user", {"userId": "U-2"})["name"] == "Alan Turing"
    with pytest.raises(ToolError, match="No user with userId U-9"):
        ep.call("get_user", {"userId": "U-9"})


def test_list_filters_free_text_ignoring_case_exact_values_and_pages(ep):
    assert [u["id"] for u in ep.call("list_users", {"q": "LOVE"})] == ["U-1"]
    assert [u["id"] for u in ep.call("list_users", {"status": "active"})] == ["U-1", "U-3"]
    assert [u["id"] for u in ep.call("list_users", {"limit": 1, "offset": 1})] == ["U-2"]
    assert len(ep.call("list_users", {})) == 3


def test_list_filters_by_parent_and_range_and_sorts_by_an_enum_choice(ep):
    assert [o["id"] for o in ep.call("list_user_orders", {"userId": "U-1"})] == ["O-1", "O-2", "O-4"]
    ranged = ep.call("list_user_orders", {"userId": "U-1", "min_total": 20, "max_total": 50})
    assert [o["id"] for o in ranged] == ["O-4"]
    assert [o["id"] for o in ep.call("list_user_orders", {"userId": "U-1", "sort": "-total"})] == [
        "O-2",
        "O-4",
        "O-1",
    ]
    assert [o["id"] for o in ep.call("list_user_orders", {"userId": "U-1", "sort": "total"})] == [
        "O-1",
        "O-4",
        "O-2",
    ]


def test_create_enforces_required_fields_fills_defaults_and_the_clock(ep):
    with pytest.raises(ToolError, match="email"):
        ep.call("create_user", {"name": "Edsger"})
    user = ep.call("create_user", {"name": "Edsger", "email": "ed@example.com"})
    assert user["status"] == "active" and user["id"].startswith("USE-")
    order = ep.call("create_order", {"userId": user["id"], "total": 3, "shipping": {"city": "Delft"}})
    assert (
        order["user_id"] == user["id"]
        and order["status"] == "placed"
        and order["shipping"] == {"city": "Delft"}
    )
    assert order["created_at"] is not None
    with pytest.raises(ToolError):
        ep.call("create_order", {"userId": "U-404", "total": 3})


def test_update_changes_only_the_fields_given_and_an_explicit_null_clears(ep):
    ep.call("update_user", {"userId": "U-1", "name": "Ada King"})
    assert ep.call("get_user", {"userId": "U-1"})["email"] == "ada@example.com"
    ep.call("update_user", {"userId": "U-1", "email": None})
    row = ep.call("get_user", {"userId": "U-1"})
    assert row["email"] is None and row["name"] == "Ada King"
    with pytest.raises(ToolError, match="No user with userId U-9"):
        ep.call("update_user", {"userId": "U-9", "name": "x"})


def test_delete_removes_the_row_and_refuses_an_unknown_one(ep):
    ep.call("delete_user", {"userId": "U-3"})
    with pytest.raises(ToolError, match="No user with userId U-3"):
        ep.call("get_user", {"userId": "U-3"})
    before = ep.digest()
    with pytest.raises(ToolError, match="No user with userId U-3"):
        ep.call("delete_user", {"userId": "U-3"})
    assert ep.digest() == before


def test_an_action_is_a_status_transition_with_preconditions_from_the_enum(ep):
    cancelled = ep.call("cancel_order", {"orderId": "O-1", "reason": "changed my mind"})
    assert cancelled["status"] == "cancelled" and cancelled["reason"] == "changed my mind"
    with pytest.raises(ToolError, match="already cancelled"):
        ep.call("cancel_order", {"orderId": "O-1"})
    with pytest.raises(ToolError, match="Cannot cancel order O-2: it is delivered, a final state"):
        ep.call("cancel_order", {"orderId": "O-2"})
    assert ep.call("cancel_order", {"orderId": "O-4"})["status"] == "cancelled"  # shipped is not final


def test_an_action_without_a_status_to_change_is_a_row_in_the_action_log(ep):
    ep.call("notify_order", {"orderId": "O-4", "message": "on its way"})
    log = ep.export()["action_log"]
    assert len(log) == 1
    entry = log[0]
    assert entry["action"] == "notify_order" and entry["order_id"] == "O-4"
    assert entry["details"] == {"message": "on its way"}
    with pytest.raises(ToolError, match="No order with orderId O-9"):
        ep.call("notify_order", {"orderId": "O-9"})


def test_function_list_tools_search_range_limit_and_create_rows():
    stations = [
        {"station_id": "S-1", "name": "Zugspitze Summit", "country": "DE", "elevation": 2962},
        {"station_id": "S-2", "name": "Hamburg Harbour", "country": "DE", "elevation": 5},
        {"station_id": "S-3", "name": "Summit Camp", "country": "GL", "elevation": 3216},
    ]
    builder, toolset = _domain(WEATHER, {"stations": stations, "readings": []})
    assert toolset.not_compiled == [] and builder.check().errors == []
    ep = builder.load().episode(seed=0)
    assert [s["station_id"] for s in ep.call("search_stations", {"query": "summit"})] == ["S-1", "S-3"]
    assert [s["station_id"] for s in ep.call("search_stations", {"min_elevation": 3000})] == ["S-3"]
    assert len(ep.call("search_stations", {"max_results": 2})) == 2
    reading = ep.call("submit_reading", {"station_id": "S-2", "temperature": 11.5})
    assert reading["station_id"] == "S-2" and reading["temperature"] == 11.5
    assert [r["reading_id"] for r in ep.call("list_readings", {"station_id": "S-2"})] == [
        reading["reading_id"]
    ]
    ep.call("delete_reading", {"reading_id": reading["reading_id"]})
    assert ep.call("list_readings", {"station_id": "S-2"}) == []


def test_a_schema_the_spec_wrote_loosely_is_made_valid_keeping_its_information():
    from toolgen.model import Operation

    op = Operation(
        id="t:x",
        source="s",
        pointer="/0",
        format="bfcl",
        api="t",
        name="x",
        description="x",
        input_schema={
            "type": "object",
            "properties": {
                "a": {"type": "integer", "example": 3, "optional": True, "nullable": True},
                "b": {"type": "dict", "required": True, "x-keep": 1, "weird": "w", "pattern": "("},
            },
            "required": ["a", "zzz"],
        },
        entity="x",
        kind="read",
    )
    schema = input_schema(op)
    assert schema["required"] == ["a"]
    assert schema["properties"]["a"] == {"type": ["integer", "null"], "examples": [3], "x-nullable": True}
    assert schema["properties"]["b"] == {"x-keep": 1, "x-weird": "w"}


def test_a_singleton_is_updated_and_deleted_and_a_collection_delete_takes_filters():
    plan, ops = planned_from(
        make_op("get_settings", "read", {}, entity="setting"),
        make_op("update_settings", "update", {"theme": {"type": "string"}}, entity="setting"),
        make_op("delete_settings", "delete", {}, entity="setting"),
        make_op("delete_logs", "delete", {"level": {"type": "string"}}, entity="log"),
    )
    schema = infer_schema(plan, ops)
    toolset = compile_tools(schema)
    assert toolset.not_compiled == []
    builder = build_domain(plan, schema, toolset)
    builder.seed("settings", [{"setting_id": "S-1", "theme": "dark"}])
    builder.seed(
        "logs", [{"log_id": f"L-{i}", "level": level} for i, level in enumerate(["info", "error", "info"])]
    )
    assert builder.check().errors == []
    ep = builder.load().episode(seed=0)
    assert ep.call("update_settings", {"theme": "light"})["theme"] == "light"
    ep.call("delete_logs", {"level": "info"})
    assert [r["log_id"] for r in ep.export()["logs"]] == ["L-1"]
    ep.call("delete_settings", {})
    assert ep.export()["settings"] == []
    with pytest.raises(ToolError, match="No setting found"):
        ep.call("update_settings", {"theme": "dark"})


def test_an_update_that_names_no_record_is_not_modelled_not_a_create():
    """YouTube's `comments.update(part)` as an MCP tool list gives it: nothing says which comment,
    or what to change; it is listed as not modelled rather than compiled into a create."""
    part = {"type": "string", "description": "The properties that the API response will include."}
    ops = [
        make_op("list_widgets", "read", {"color": {"type": "string"}}),
        make_op("update_widgets", "update", {"part": part}, ["part"]),
        make_op(
            "update_widget",
            "update",
            {"widget_id": {"type": "string"}, "color": {"type": "string"}},
            ["widget_id"],
        ),
    ]
    toolset = compile_tools(infer_schema(*planned_from(*ops)))
    assert [(s.id, s.reason.split(":")[0]) for s in toolset.not_compiled] == [
        ("t:update_widgets", "not modelled")
    ]
    assert {t.name: t.compiled_as for t in toolset.tools} == {
        "list_widgets": "list",
        "update_widget": "update",
    }
