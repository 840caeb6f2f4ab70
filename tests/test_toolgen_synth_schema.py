"""toolgen.synth.schema: tables, keys, foreign keys, columns, hints and argument roles from real specs."""

from __future__ import annotations

import pytest

from toolgen.synth.apart import apart
from toolgen.synth.schema import column_type, infer_schema, table_name
from toolgen.synth.tools import compile_tools

from .synth_kit import SHOP, WEATHER, make_op, op_id, planned, planned_from


@pytest.fixture(scope="module")
def shop():
    plan, ops = planned(SHOP)
    return infer_schema(plan, ops)


@pytest.fixture(scope="module")
def weather():
    plan, ops = planned(WEATHER)
    return infer_schema(plan, ops)


def test_tables_keys_and_foreign_keys_come_from_records_and_paths(shop):
    assert set(shop.tables) == {"users", "orders"}
    users, orders = shop.tables["users"], shop.tables["orders"]
    assert users.primary_key == "id" and orders.primary_key == "id"  # the record's `id`
    assert (
        orders.columns["user_id"].references == "users.id"
    )  # {userId} after /users, and the record's user_id
    assert list(orders.columns)[0] == "id"


def test_column_types_enums_defaults_and_nullability_follow_the_spec(shop):
    orders, users = shop.tables["orders"], shop.tables["users"]
    assert orders.columns["shipping"].type == "json"  # a nested object
    assert orders.columns["created_at"].type == "datetime"  # format: date-time
    assert orders.columns["total"].type == "number"
    status = orders.columns["status"]
    assert status.enum == ["placed", "shipped", "delivered", "cancelled"] and status.default == "placed"
    assert not status.nullable
    assert not orders.columns["total"].nullable  # the record requires it, and so does every create
    assert not users.columns["name"].nullable
    assert users.columns["email"].nullable  # the update declares it nullable: a null can be written
    assert orders.columns["note"].nullable  # optional everywhere
    assert orders.columns["reason"].nullable  # cancel's argument: a column of the order, optional


def test_hints_keep_each_columns_schema_typed_like_the_column(shop):
    hints = shop.hints()
    assert hints["users"]["email"]["format"] == "email"
    assert hints["orders"]["shipping"]["properties"].keys() == {"street", "city"}
    assert hints["orders"]["created_at"] == {"type": "string", "format": "date-time", "nullable": True}
    assert hints["orders"]["total"]["type"] == "number" and "nullable" not in hints["orders"]["total"]
    assert hints["orders"]["user_id"]["x-references"] == "users.id"
    assert hints["orders"]["status"]["enum"] == ["placed", "shipped", "delivered", "cancelled"]
    assert all(set(h) == set(shop.tables[t].columns) for t, h in hints.items())


def test_each_argument_is_bound_to_its_role(shop):
    def roles(tool: str) -> dict[str, tuple[str, str | None]]:
        return {b.param: (b.role, b.column) for b in shop.bindings[op_id(SHOP, tool)]}

    assert roles("list_users") == {
        "q": ("search", "name"),
        "status": ("field", "status"),
        "limit": ("limit", None),
        "offset": ("offset", None),
    }
    assert roles("list_user_orders") == {
        "userId": ("parent", "user_id"),
        "status": ("field", "status"),
        "min_total": ("min", "total"),
        "max_total": ("max", "total"),
        "sort": ("sort", None),
    }
    assert roles("get_order") == {"orderId": ("key", "id")}
    assert roles("update_user") == {
        "userId": ("key", "id"),
        "name": ("field", "name"),
        "email": ("field", "email"),
    }


def test_function_lists_get_tables_and_columns_from_names_and_parameters(weather):
    assert set(weather.tables) == {"stations", "readings"}
    stations, readings = weather.tables["stations"], weather.tables["readings"]
    assert stations.primary_key == "station_id" and readings.primary_key == "reading_id"
    assert set(stations.columns) == {"station_id", "name", "country", "elevation"}
    assert readings.columns["station_id"].references == "stations.station_id"
    assert readings.columns["taken_at"].type == "datetime"
    search = {b.param: b.role for b in weather.bindings[op_id(WEATHER, "search_stations")]}
    assert search == {"query": "search", "country": "field", "min_elevation": "min", "max_results": "limit"}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, ("string", False)),
        ({"type": "string", "format": "date-time"}, ("datetime", False)),
        ({"type": ["integer", "null"]}, ("integer", True)),
        ({"type": "number", "nullable": True}, ("number", True)),
        ({"type": "object", "properties": {"a": {}}}, ("json", False)),
        ({"type": "array", "items": {"type": "string"}}, ("json", False)),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, ("integer", True)),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, ("json", False)),
        ({"enum": ["a", "b"]}, ("string", False)),
        ({"type": ["integer", "number"]}, ("number", False)),
        ({}, ("json", False)),
        ({"description": "[REQUIRED] string: untyped"}, ("json", False)),
    ],
)
def test_column_type_of_a_schema_fragment(schema, expected):
    assert column_type(schema) == expected


@pytest.mark.parametrize(
    ("entity", "table"),
    [
        ("order", "orders"),
        ("company", "companies"),
        ("box", "boxes"),
        ("status", "statuses"),
        ("day", "days"),
        ("2fa_code", "n_2fa_codes"),
        ("order-item", "order_items"),
        ("news_items", "news_items"),
        ("time_to_live", "times_to_live"),
        ("point_of_sale", "points_of_sale"),
        ("price_to", "price_tos"),
    ],
)
def test_table_names_are_plural_identifiers(entity, table):
    assert table_name(entity) == table


def test_sources_that_disagree_on_a_type_make_a_json_column():
    schema = infer_schema(
        *planned_from(
            make_op("add_widget", "create", {"size": {"type": "integer"}, "weight": {"type": "integer"}}),
            make_op(
                "set_widget",
                "update",
                {"widget_id": {"type": "string"}, "size": {"type": "string"}, "weight": {"type": "number"}},
                ["widget_id"],
            ),
        )
    )
    columns = schema.tables["widgets"].columns
    assert columns["size"].type == "json" and columns["weight"].type == "number"


def test_column_names_meet_in_any_case_style_and_stay_valid_identifiers():
    schema = infer_schema(
        *planned_from(
            make_op(
                "add_widget",
                "create",
                {
                    "firstName": {"type": "string"},
                    "first-name": {"type": "string"},
                    "2nd": {"type": "integer"},
                    "_toolgym_x": {"type": "string"},
                },
            ),
        )
    )
    columns = schema.tables["widgets"].columns
    assert set(columns) == {"widget_id", "firstName", "n_2nd", "toolgym_x"}
    roles = {b.param: b.column for b in schema.bindings["t:add_widget"]}
    assert roles["first-name"] == roles["firstName"] == "firstName"


def test_an_operation_that_cannot_be_compiled_is_listed_with_its_reason():
    plan, ops = planned_from(
        make_op("add_widget", "create", {"name": {"type": "string"}}),
        make_op(
            "purge_widgets", "delete", {"older.than": {"type": "string"}}
        ),  # no argument a filter can read
    )
    toolset = compile_tools(infer_schema(plan, ops))
    assert [t.name for t in toolset.tools] == ["add_widget"]
    assert [(s.id, s.reason) for s in toolset.not_compiled] == [
        ("t:purge_widgets", "a delete of widgets whose arguments cannot be read as filters")
    ]


def test_an_argument_with_one_possible_value_is_an_option_not_a_column():
    schema = infer_schema(
        *planned_from(
            make_op(
                "add_widget",
                "create",
                {
                    "target": {"type": "string", "enum": ["Widgets.Add"]},
                    "v": {"const": 2},
                    "name": {"type": "string"},
                },
            )
        )
    )
    assert set(schema.tables["widgets"].columns) == {"widget_id", "name"}
    assert {b.param: b.role for b in schema.bindings["t:add_widget"]} == {
        "target": "option",
        "v": "option",
        "name": "field",
    }


def test_two_entities_naming_each_other_get_one_foreign_key_not_a_cycle():
    schema = infer_schema(
        *planned_from(
            make_op(
                "add_firewall",
                "create",
                {"droplet_id": {"type": "string"}, "name": {"type": "string"}},
                entity="firewall",
            ),
            make_op(
                "add_droplet",
                "create",
                {"firewall_id": {"type": "string"}, "size": {"type": "string"}},
                entity="droplet",
            ),
        )
    )
    droplets, firewalls = schema.tables["droplets"], schema.tables["firewalls"]
    refs = {droplets.columns["firewall_id"].references, firewalls.columns["droplet_id"].references}
    assert refs == {
        None,
        "droplets.droplet_id",
    }  # the first seen is the foreign key, the other a plain column
    assert droplets.columns["firewall_id"].type == "string"


def test_an_allof_that_only_adds_keywords_is_one_value():
    from toolgen.synth.columns import column_type, flat

    described = {
        "allOf": [{"type": "string", "pattern": "[a-z]+", "maxLength": 9}, {"description": "its name"}]
    }
    assert column_type(described) == ("string", False)
    assert flat(described) == {
        "type": "string",
        "pattern": "[a-z]+",
        "maxLength": 9,
        "description": "its name",
    }
    records = {
        "allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "integer"}}}]
    }
    assert flat(records) is records and column_type(records) == ("json", False)
    clash = {"allOf": [{"type": "string"}, {"type": "integer"}]}
    assert column_type(clash) == ("json", False)


def test_bounds_named_like_controls_and_boolean_controls_are_not_ranges_or_columns():
    schema = infer_schema(
        *planned_from(
            make_op(
                "list_integrals",
                "read",
                {
                    "function": {"type": "string"},
                    "lower_limit": {"type": "number"},
                    "upper_limit": {"type": "number"},
                    "top": {"type": "boolean"},
                },
            )
        )
    )
    columns = set(schema.tables["widgets"].columns)
    assert "limit" not in columns and "top" not in columns
    roles = {b.param: b.role for b in schema.bindings["t:list_integrals"]}
    assert roles["top"] == "option"
    assert roles["lower_limit"] not in ("min", "max") and roles["upper_limit"] not in ("min", "max")


def test_an_argument_that_selects_the_response_parts_is_an_option():
    described = "The part parameter specifies the resource parts that the API response will include."
    schema = infer_schema(
        *planned_from(
            make_op(
                "list_widgets",
                "read",
                {"part": {"type": "string", "description": described}, "name": {"type": "string"}},
            )
        )
    )
    assert "part" not in schema.tables["widgets"].columns
    assert {b.param: b.role for b in schema.bindings["t:list_widgets"]}["part"] == "option"


def test_query_language_and_facet_arguments_are_options_not_columns():
    schema = infer_schema(
        *planned_from(
            make_op(
                "list_widgets",
                "read",
                {
                    "where": {"type": "array", "items": {"type": "string"}},
                    "search": {"type": "array", "items": {"type": "string"}},
                    "refine": {"type": "array", "items": {"type": "string"}},
                    "color": {"type": "string"},
                },
            )
        )
    )
    assert set(schema.tables["widgets"].columns) == {"widget_id", "color"}
    roles = {b.param: b.role for b in schema.bindings["t:list_widgets"]}
    assert roles == {"where": "option", "search": "option", "refine": "option", "color": "field"}


def test_arguments_that_say_how_an_answer_is_written_are_options_not_columns():
    schema = infer_schema(
        *planned_from(
            make_op(
                "list_widgets",
                "read",
                {
                    "timezone": {"type": "string", "description": "Set timezone for datetime fields"},
                    "delimiter": {"type": "string", "enum": [",", ";"]},
                    "include_app_metas": {"type": "boolean"},
                    "textFormat": {"type": "string", "enum": ["html", "plainText"]},
                    "onBehalfOfContentOwner": {"type": "string"},
                    "color": {"type": "string"},
                },
            )
        )
    )
    assert set(schema.tables["widgets"].columns) == {"widget_id", "color"}
    roles = {b.param: b.role for b in schema.bindings["t:list_widgets"]}
    assert roles == {
        "timezone": "option",
        "delimiter": "option",
        "include_app_metas": "option",
        "textFormat": "option",
        "onBehalfOfContentOwner": "option",
        "color": "field",
    }


def test_a_name_of_no_words_is_no_control():
    """An argument named `_` or `{}` (no words) neither crashes nor becomes a control."""
    from toolgen.synth.argroles import control_role

    for name in ("_", "{}", "--"):
        assert control_role(name, {"type": "boolean"}, "read") is None


def test_cursors_and_page_counts_are_not_columns():
    """DynamoDB's paging: `ExclusiveStartKey` in, `LastEvaluatedKey`, `Count`, `ScannedCount` out."""
    item = {"type": "object", "properties": {"name": {"type": "string"}}}
    page = {
        "type": "object",
        "properties": {
            "Items": {"type": "array", "items": item},
            "Count": {"type": "integer"},
            "ScannedCount": {"type": "integer"},
            "LastEvaluatedKey": {"type": "object"},
            "LastEvaluatedTableName": {"type": "string"},
        },
    }
    args = {
        "ExclusiveStartKey": {"type": "object"},
        "ReturnConsumedCapacity": {"type": "string", "enum": ["INDEXES", "TOTAL", "NONE"]},
        "return_reason": {"type": "string", "enum": ["damaged", "wrong size"]},
        "color": {"type": "string"},
    }
    schema = infer_schema(*planned_from(make_op("query_widgets", "read", args, record_schema=page)))
    columns = set(schema.tables["widgets"].columns)
    paging = {"ExclusiveStartKey", "LastEvaluatedKey", "LastEvaluatedTableName", "Count", "ScannedCount"}
    assert not columns & paging
    roles = {b.param: b.role for b in schema.bindings["t:query_widgets"]}
    assert roles["ExclusiveStartKey"] == roles["ReturnConsumedCapacity"] == "option"
    assert roles["return_reason"] != "option"  # a reason is data
    own = {
        "type": "object",
        "properties": {"widget_id": {"type": "string"}, "scanned_count": {"type": "integer"}},
    }
    key = {"widget_id": {"type": "string"}}
    schema = infer_schema(*planned_from(make_op("get_widget", "read", key, ["widget_id"], record_schema=own)))
    assert "scanned_count" in schema.tables["widgets"].columns  # a record's own count stays


@pytest.mark.parametrize(
    ("name", "noun"),
    [
        ("UntagRole", "role"),
        ("BatchWriteItem", "item"),
        ("TransactWriteItems", "item"),
        ("write_file", "file"),
    ],
)
def test_verbs_that_named_tables_are_verbs(name, noun):
    from toolgen.entities import analyse_name

    assert analyse_name(name).kind is not None and analyse_name(name).noun == noun


def test_query_language_arguments_are_not_columns():
    """DynamoDB's conditions (`ConditionExpression`, `ExpressionAttributeValues`, `Expected`,
    `QueryFilter`, `ConditionalOperator`) are a query language: never columns, never filters."""
    conditions = {
        "KeyConditionExpression": {"type": "string"},
        "ExpressionAttributeValues": {"type": "object", "additionalProperties": {"type": "object"}},
        "QueryFilter": {"allOf": [{"type": "object", "additionalProperties": {}}, {"description": "x"}]},
        "ConditionalOperator": {"type": "string", "enum": ["AND", "OR"]},
        "Expected": {"type": "object", "additionalProperties": {}},
    }
    for name, kind, key in (("query_widgets", "read", {}), ("update_widget", "update", {"widget_id": {}})):
        args = {**key, **conditions, "color": {"type": "string"}}
        schema = infer_schema(*planned_from(make_op(name, kind, args, list(key))))
        assert "color" in schema.tables["widgets"].columns
        assert not set(schema.tables["widgets"].columns) & set(conditions)
        roles = {b.param: b.role for b in schema.bindings[f"t:{name}"]}
        assert {roles[c] for c in conditions} == {"option"}
    shaped = {"type": "object", "properties": {"min": {"type": "number"}}}
    schema = infer_schema(*planned_from(make_op("create_widget", "create", {"filter": shaped})))
    assert "filter" in schema.tables["widgets"].columns  # a record-shaped `filter` is data


def test_a_records_own_fields_object_is_data():
    """OpenDataSoft's record `{id, fields: {name: …}, timestamp}`: `fields` holding an object is
    the record's values, while a `fields` string beside them selects what an answer holds."""
    record = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "fields": {"type": "object", "additionalProperties": {}},
            "timestamp": {"type": "string", "format": "date-time"},
        },
    }
    key = {"widget_id": {"type": "string"}, "fields": {"type": "string"}}
    op = make_op("get_widget", "read", key, ["widget_id"], record_schema=record)
    schema = infer_schema(*planned_from(op))
    assert "fields" in schema.tables["widgets"].columns
    roles = {b.param: b.role for b in schema.bindings["t:get_widget"]}
    assert roles["fields"] == "option"
    listing = {**record, "properties": {**record["properties"], "fields": {"type": "string"}}}
    op = make_op("get_widget", "read", key, ["widget_id"], record_schema=listing)
    schema = infer_schema(*planned_from(op))
    assert "fields" not in schema.tables["widgets"].columns


def test_an_id_after_the_rows_own_key_in_a_write_is_no_filter():
    """`update_widget_color(widget_id, color, payment_id)`: the payment pays for the change, it
    does not find the widget (before, the update refused unless the widget held that payment);
    a parent's id before the key (`shop_id, widget_id`) still finds the row, and an update not
    named for its field (`change_plan`) still moves the reference."""
    args = {"widget_id": {"type": "string"}, "color": {"type": "string"}, "payment_id": {"type": "string"}}
    pay = make_op("get_payment", "read", {"payment_id": {"type": "string"}}, ["payment_id"], entity="payment")
    op = make_op("update_widget_color", "update", args, ["widget_id", "payment_id"])
    schema = infer_schema(*planned_from(op, pay))
    roles = {b.param: b.role for b in schema.bindings["t:update_widget_color"]}
    assert roles == {"widget_id": "key", "color": "field", "payment_id": "option"}
    assert "payment_id" not in schema.tables["widgets"].columns
    shop = make_op("get_shop", "read", {"shop_id": {"type": "string"}}, ["shop_id"], entity="shop")
    nested = {"shop_id": {"type": "string"}, "widget_id": {"type": "string"}, "color": {"type": "string"}}
    op = make_op("update_widget_color", "update", nested, ["shop_id", "widget_id"])
    roles = {b.param: b.role for b in infer_schema(*planned_from(op, shop)).bindings["t:update_widget_color"]}
    assert roles["shop_id"] == "parent"
    op = make_op("update_widget", "update", args, ["widget_id", "payment_id"])
    roles = {b.param: b.role for b in infer_schema(*planned_from(op, pay)).bindings["t:update_widget"]}
    assert roles["payment_id"] == "parent"


def test_who_acts_in_an_action_is_no_filter_unless_the_record_holds_it():
    """`close_widget(widget_id, user_id)`: the user who closes it, unless widgets hold a user (then
    the widget must be that user's); `assign_widget(widget_id, user_id)` moves the widget."""
    user = make_op("get_user", "read", {"user_id": {"type": "string"}}, ["user_id"], entity="user")
    args = {"widget_id": {"type": "string"}, "user_id": {"type": "string"}}
    for name, record, role in (
        ("close_widget", {"type": "object", "properties": {"widget_id": {"type": "string"}}}, "option"),
        ("close_widget", {"type": "object", "properties": {"user_id": {"type": "string"}}}, "parent"),
        ("assign_widget", {"type": "object", "properties": {"widget_id": {"type": "string"}}}, "parent"),
    ):
        op = make_op(name, "action", args, ["widget_id", "user_id"], record_schema=record)
        roles = {b.param: b.role for b in infer_schema(*planned_from(op, user)).bindings[f"t:{name}"]}
        assert roles == {"widget_id": "key", "user_id": role}, name


def test_request_arguments_the_record_does_not_hold_are_options_not_columns():
    """Kubernetes' `fieldManager`, `gracePeriodSeconds`, a patch document and a delete's `Status`
    answer: they shape a request, so no table holds them."""
    record = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "kind": {"type": "string"}},
    }
    status = {
        "type": "object",
        "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
    }
    key = {"id": {"type": "string"}}
    ops = [
        make_op("get_widget", "read", key, ["id"], record_schema=record, format="openapi-3.0"),
        make_op(
            "list_widgets",
            "read",
            {"name": {"type": "string"}, "labelSelector": {"type": "string"}},
            record_schema=record,
            query=["name", "labelSelector"],
            format="openapi-3.0",
        ),
        make_op(
            "patch_widget",
            "update",
            {
                **key,
                "body": {"type": "object"},
                "fieldManager": {"type": "string"},
                "name": {"type": "string"},
            },
            ["id"],
            record_schema=record,
            query=["fieldManager"],
            format="openapi-3.0",
        ),
        make_op(
            "delete_widgets",
            "delete",
            {"gracePeriodSeconds": {"type": "integer"}},
            record_schema=status,
            format="openapi-3.0",
        ),
    ]
    schema = infer_schema(*planned_from(*ops))
    assert set(schema.tables["widgets"].columns) == {"id", "name", "kind"}
    roles = {b.param: b.role for op in ops for b in schema.bindings[op.id]}
    assert roles["labelSelector"] == roles["fieldManager"] == roles["body"] == "option"
    assert roles["gracePeriodSeconds"] == "option"
    assert roles["name"] == "field"  # a record's field, in a query or a body
    # with no record known, what a write takes is what the table holds; a listing's query
    # argument no write takes (a search's `city`, a page's `curpage`) holds nothing
    listing = make_op(
        "list_gadgets",
        "read",
        {"color": {"type": "string"}, "city": {"type": "string"}},
        query=["color", "city"],
        entity="gadget",
    )
    written = make_op("create_gadget", "create", {"color": {"type": "string"}}, entity="gadget")
    columns = infer_schema(*planned_from(listing, written)).tables["gadgets"].columns
    assert "color" in columns and "city" not in columns
    alone = infer_schema(*planned_from(listing))
    assert not {"color", "city"} & set(alone.tables["gadgets"].columns)
    assert {b.role for b in alone.bindings[listing.id]} == {"option"}


def test_an_entity_two_unrelated_apis_share_gets_a_table_of_each():
    """Xero's invoice `history` and a quiz's `religion_history_info` share only a word: each
    keeps a table (`histories`, `religion_histories`); two versions of one API whose records
    share fields keep one table."""
    record = {"Changes": {"type": "string"}, "DateUTC": {"type": "string"}, "User": {"type": "string"}}
    ops = [
        make_op(
            "get_invoice_history",
            "read",
            {"InvoiceID": {"type": "string"}},
            ["InvoiceID"],
            entity="history",
            api="xero",
            record_schema={"type": "object", "properties": record},
        ),
        make_op("create_invoice_history", "create", record, [], entity="history", api="xero"),
        make_op(
            "religion_history_info",
            "read",
            {"religion": {"type": "string"}, "till_century": {"type": "integer"}},
            ["religion"],
            entity="history",
            api="quiz",
        ),
        make_op(
            "list_history",
            "read",
            {"Changes": {"type": "string"}, "User": {"type": "string"}},
            [],
            entity="history",
            api="xero-v2",
        ),
    ]
    apart_ops = {op.name: op.entity for op in apart(ops)}
    assert apart_ops == {
        "get_invoice_history": "history",
        "create_invoice_history": "history",
        "religion_history_info": "religion_history",
        "list_history": "history",
    }
    plan, by_id = planned_from(*ops)
    schema = infer_schema(plan, by_id)
    assert {"histories", "religion_histories"} <= set(schema.tables)
    assert "till_century" in schema.tables["religion_histories"].columns
    assert "till_century" not in schema.tables["histories"].columns


def test_a_state_given_as_a_number_code_is_no_plain_field():
    """SIGNL4's `messageStatus: {enum: [0, ..., 10]}`: no one names a row by "status 9" or asks
    for it; a rating of 1 to 5 and a status in words stay plain."""
    from toolgen.synth.schema import ColumnPlan

    code = ColumnPlan("messageStatus", "integer", enum=list(range(11)))
    assert code.coded and not code.plain
    assert ColumnPlan("rating", "integer", enum=[1, 2, 3, 4, 5]).plain
    assert ColumnPlan("status", "string", enum=["open", "closed", "error"]).plain
    assert ColumnPlan("channel_type", "integer", enum=[0, 1]).coded is False


def test_the_size_of_a_picture_an_action_draws_is_an_option():
    """PayPal's `generate-qr-code(invoice_id, width, height)`: no invoice has a width."""
    pixels = {"type": "integer", "description": "The width, in pixels, of the QR code image."}
    record = {"type": "object", "properties": {"id": {"type": "string"}, "title": {"type": "string"}}}
    schema = infer_schema(
        *planned_from(
            make_op("get_widget", "read", {"widget_id": {"type": "string"}}, record_schema=record),
            make_op(
                "generate_widget_qr_code",
                "create",
                {"widget_id": {"type": "string"}, "width": pixels},
                format="openapi-3.0",
                pointer="/paths/~1widgets~1{widget_id}~1generate-qr-code/post",
            ),
        )
    )
    roles = {b.param: b.role for b in schema.bindings["t:generate_widget_qr_code"]}
    assert roles["width"] == "option" and "width" not in schema.tables["widgets"].columns
    # nor when the call's body is the record it answers with (a create with no record of its own)
    body = {"type": "object", "properties": {"width": pixels}}
    made = make_op("generate_widget_qr_code", "create", {"width": pixels}, record_schema=body)
    assert "width" not in infer_schema(*planned_from(made)).tables["widgets"].columns
