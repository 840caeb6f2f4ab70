"""`check` reports every independent mistake once, at its source, and never a cascade."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from scoring import check_domain
from tests.conftest import FIXTURES
from toolgym.cli import app

runner = CliRunner()


def shop_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    return folder


def edit(folder: Path, fn: Any) -> None:
    path = folder / "domain.yaml"
    raw = yaml.safe_load(path.read_text())
    fn(raw)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))


def tool(raw: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in raw["tools"] if t["name"] == name)


def places(folder: Path) -> list[tuple[str, str]]:
    return [(p.file, p.location) for p in check_domain(folder).errors]


TOUCH = {  # a fragment two tools use
    "params": ["customer_id"],
    "steps": [{"update": "customers", "key": {"customer_id": "$customer_id"}, "set": {"vip": True}}],
}


def with_fragment_and_tasks(folder: Path) -> None:
    def add(raw: dict[str, Any]) -> None:
        raw["fragments"] = {"touch": json.loads(json.dumps(TOUCH))}
        for name in ("set_note", "cancel_order"):
            ops = tool(raw, name)["operation"]
            ops = ops if isinstance(ops, list) else [ops]
            tool(raw, name)["operation"] = [{"use": "touch", "with": {"customer_id": "C-0001"}}, *ops]

    edit(folder, add)
    tasks = [
        {"id": "look", "instruction": "x", "calls": [{"name": "get_customer", "arguments": {"customer_id": "C-0001"}}]},
        {"id": "note", "instruction": "x", "calls": [{"name": "set_note", "arguments": {"customer_id": "C-0002", "notes": "hi"}}]},
        {"id": "cancel", "instruction": "x", "calls": [{"name": "cancel_order", "arguments": {"order_id": "O-0002"}}]},
    ]  # fmt: skip
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))


def test_the_planted_domain_is_sound_before_planting(tmp_path):
    folder = shop_copy(tmp_path)
    with_fragment_and_tasks(folder)
    report = check_domain(folder)
    assert report.errors == [] and report.domain is not None


def test_five_planted_mistakes_are_five_problems_each_at_its_source(tmp_path):
    folder = shop_copy(tmp_path)
    with_fragment_and_tasks(folder)

    def plant(raw: dict[str, Any]) -> None:
        # 1. a bad column type on the key of a table five tools, a foreign key and the seed use
        raw["tables"]["customers"]["columns"]["customer_id"]["type"] = "strng"
        # 2. an enum value misspelt in an update's `set`
        cancel = tool(raw, "cancel_order")["operation"]
        next(s for s in cancel if s.get("update") == "orders")["set"]["status"] = "canceled"
        # 3. a name the fragment does not have (two tools use the fragment)
        raw["fragments"]["touch"]["steps"][0]["set"]["notes"] = "$note"
        # 4. a tool whose definition is wrong (a misspelt key), called by a task
        tool(raw, "get_customer")["operation"]["keyy"] = tool(raw, "get_customer")["operation"].pop("key")

    edit(folder, plant)
    # 5. a seed row with a value of the wrong type, which other seed rows refer to
    orders = folder / "seed" / "orders.jsonl"
    lines = orders.read_text().splitlines()
    first = json.loads(lines[0])
    first["total"] = "ten"
    orders.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert any(
        json.loads(r)["order_id"] == first["order_id"]
        for r in (folder / "seed" / "order_items.jsonl").read_text().splitlines()
    )

    report = check_domain(folder)
    found = sorted((p.file, p.location) for p in report.errors)
    assert found == sorted(
        [
            ("domain.yaml", "tables.customers.columns.customer_id.type"),
            ("domain.yaml", "tools[4] (cancel_order).operation[3].set.status"),
            ("domain.yaml", "fragments.touch.steps[0].set.notes"),
            ("domain.yaml", "tools[0] (get_customer).operation[0].get.keyy"),
            ("seed/orders.jsonl", "line 1"),
        ]
    ), "\n".join(map(str, report.errors))
    messages = {p.location: p.message for p in report.errors}
    assert "canceled" in messages["tools[4] (cancel_order).operation[3].set.status"]
    assert "pending" in messages["tools[4] (cancel_order).operation[3].set.status"]  # the allowed values
    assert "$note" in messages["fragments.touch.steps[0].set.notes"]
    assert report.domain is None


def test_check_command_lists_errors_and_warnings_apart_and_as_json(tmp_path):
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        raw["tables"]["orders"]["columns"]["total"]["type"] = "float"
        raw["fragments"] = {
            "price": {
                "params": ["sku"],
                "steps": [{"get": "products", "key": {"sku": "$sku"}, "as": "p"}, {"return": "$p.price"}],
            }
        }
        tool(raw, "set_note")["operation"] = [{"use": "price", "with": {"sku": "SKU-001"}}, tool(raw, "set_note")["operation"]]  # fmt: skip

    edit(folder, plant)
    result = runner.invoke(app, ["check", str(folder), "--json"])
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["ok"] is False
    assert [e["location"] for e in body["errors"]] == ["tables.orders.columns.total.type"]
    assert [w["location"] for w in body["warnings"]] == ["tools[5] (set_note).operation[0]"]
    assert "'price' returns is lost" in body["warnings"][0]["message"]
    text = runner.invoke(app, ["check", str(folder)])
    assert text.exit_code == 1
    assert "1 error" in text.stderr and "1 warning" in text.stderr
    assert "error: domain.yaml:tables.orders.columns.total.type" in text.stderr
    assert "warning: domain.yaml:tools[5] (set_note).operation[0]" in text.stderr


def test_warnings_alone_do_not_fail_check(tmp_path):
    folder = shop_copy(tmp_path)
    edit(folder, lambda raw: tool(raw, "cancel_order")["operation"].insert(0, {"count": "orders", "as": "n"}))
    result = runner.invoke(app, ["check", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["ok"] is True and body["errors"] == [] and body["domain"] == "shop@0.1.0"
    assert [w["message"] for w in body["warnings"]] == ["$n is bound here but never read: its value is lost"]


def test_every_problem_of_a_step_and_of_every_step(tmp_path):
    """One step with three problems, and a later step with its own: all four, nothing about `$order`."""
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        ops = tool(raw, "cancel_order")["operation"]
        ops[0]["key"] = {"order_idd": "$args.order_id"}  # no such column
        ops[0]["where"] = [{"column": "status", "value": "$args.status"}]  # no such argument
        ops[0]["error"] = "No order {args.order}."  # no such argument
        ops[2]["set"]["status"] = "gone"  # a later step: an enum value that does not exist

    edit(folder, plant)
    found = places(folder)
    assert sorted(found) == sorted(
        [
            ("domain.yaml", "tools[4] (cancel_order).operation[0].key.order_idd"),
            ("domain.yaml", "tools[4] (cancel_order).operation[0].where[0].value"),
            ("domain.yaml", "tools[4] (cancel_order).operation[0].error"),
            ("domain.yaml", "tools[4] (cancel_order).operation[2].set.status"),
        ]
    ), "\n".join(map(str, check_domain(folder).errors))


def test_an_unknown_table_is_one_problem_and_later_steps_are_still_checked(tmp_path):
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        ops = tool(raw, "cancel_order")["operation"]
        ops[0]["get"] = "orderz"  # binds $order: later steps using it are not problems
        ops[0]["key"] = {"order_id": "$args.id"}  # the failed step's expressions are still checked
        ops[2]["set"]["total"] = "$args.amount"  # no such argument

    edit(folder, plant)
    assert sorted(places(folder)) == [
        ("domain.yaml", "tools[4] (cancel_order).operation[0]"),
        ("domain.yaml", "tools[4] (cancel_order).operation[0].key.order_id"),
        ("domain.yaml", "tools[4] (cancel_order).operation[2].set.total"),
    ]


def test_a_table_without_a_key_keeps_its_name_and_columns(tmp_path):
    """A table-level mistake (no primary_key) is one problem; its tools and seed rows still check."""
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        del raw["tables"]["products"]["primary_key"]
        raw["tables"]["orders"]["columns"]["customer_id"]["references"] = "people.person_id"

    edit(folder, plant)
    found = places(folder)
    assert sorted(found) == [
        ("domain.yaml", "tables.orders.columns.customer_id.references"),
        ("domain.yaml", "tables.products.primary_key"),
    ], "\n".join(map(str, check_domain(folder).errors))


def test_a_bad_seed_row_is_one_problem_not_one_per_row_referring_to_it(tmp_path):
    folder = shop_copy(tmp_path)
    customers = folder / "seed" / "customers.jsonl"
    rows = [json.loads(line) for line in customers.read_text().splitlines()]
    rows[1]["vip"] = "yes"  # C-0002, whom orders refer to
    rows[2]["nickname"] = "x"  # an unknown column
    customers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert places(folder) == [("seed/customers.jsonl", "line 2"), ("seed/customers.jsonl", "line 3")]


def test_literals_are_checked_against_their_columns(tmp_path):
    """Enum, type and null, in create `values`, update `set`, keys and filters."""
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        tool(raw, "add_customer")["operation"]["values"]["vip"] = "yes"  # boolean column
        tool(raw, "add_customer")["operation"]["values"]["name"] = None  # not nullable
        tool(raw, "get_customer")["operation"]["key"] = {"customer_id": 7}  # string key
        search = tool(raw, "search_products")["operation"]
        search["where"].append({"column": "stock", "op": "gt", "value": "many"})
        search["where"].append({"column": "price", "op": "icontains", "value": "1"})
        tool(raw, "cancel_order")["operation"].insert(
            0,
            {
                "count": "orders",
                "where": [{"column": "status", "op": "in", "value": ["pending", "lost"]}],
                "as": "n",
            },
        )
        tool(raw, "cancel_order")["operation"][-1] = {"return": {"object": {"order": "$order", "n": "$n"}}}

    edit(folder, plant)
    report = check_domain(folder)
    found = {p.location: p.message for p in report.errors}
    assert set(found) == {
        "tools[2] (add_customer).operation[0].values.vip",
        "tools[2] (add_customer).operation[0].values.name",
        "tools[0] (get_customer).operation[0].key.customer_id",
        "tools[1] (search_products).operation[0].where[2].value",
        "tools[1] (search_products).operation[0].where[3].value",
        "tools[4] (cancel_order).operation[0].where[0].value",
    }, "\n".join(map(str, report.errors))
    assert "lost" in found["tools[4] (cancel_order).operation[0].where[0].value"]
    assert "may not be null" in found["tools[2] (add_customer).operation[0].values.name"]


def test_literals_that_fit_and_escapes_are_not_problems(tmp_path):
    """`$$` is a literal `$`; `{literal: ...}` a literal; a null key in create is generated."""
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        values = tool(raw, "add_customer")["operation"]["values"]
        values["notes"] = "$$5 off"
        values["customer_id"] = None
        values["vip"] = {"literal": True}
        ops = tool(raw, "cancel_order")["operation"]
        ops.insert(
            0, {"count": "orders", "where": [{"column": "status", "op": "ne", "value": None}], "as": "n"}
        )
        ops[-1] = {"return": {"object": {"order": "$order", "n": "$n"}}}

    edit(folder, plant)
    report = check_domain(folder)
    assert report.errors == [] and report.warnings == []


def test_a_fragment_no_tool_uses_is_checked_too(tmp_path):
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        raw["fragments"] = {
            "unused": {"params": ["sku"], "steps": [{"get": "products", "key": {"sku": "$skew"}, "as": "p"}]}
        }

    edit(folder, plant)
    errors = check_domain(folder).errors
    assert [(p.location, p.message.split(" (")[0]) for p in errors] == [
        ("fragments.unused.steps[0].key.sku", "unknown name $skew")
    ]


def test_a_tool_with_a_misspelt_step_still_has_its_other_steps_checked(tmp_path):
    """The misspelt step is one problem (its `as:` name stays bound); a later step's own is another."""
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        ops = tool(raw, "cancel_order")["operation"]
        ops[0]["optionl"] = True  # binds $order: later steps using it are not problems
        ops[3]["set"]["balance"] = {"add": ["$row.balance", "$args.refund"]}  # no such argument

    edit(folder, plant)
    assert sorted(places(folder)) == [
        ("domain.yaml", "tools[4] (cancel_order).operation[0].get.optionl"),
        ("domain.yaml", "tools[4] (cancel_order).operation[3].set.balance.add[1]"),
    ]


def test_a_refused_seed_row_still_has_its_foreign_keys_checked(tmp_path):
    """Two independent mistakes in one row (a status no order can have, a customer who does not exist)."""
    folder = shop_copy(tmp_path)
    with (folder / "seed" / "orders.jsonl").open("a") as fh:
        row = {"order_id": "O-9", "customer_id": "C-nobody", "total": 1.0, "status": "lost"}
        fh.write(json.dumps(row) + "\n")
    lines = len((folder / "seed" / "orders.jsonl").read_text().splitlines())
    messages = [p.message for p in check_domain(folder).errors]
    assert [p.location for p in check_domain(folder).errors] == [f"line {lines}"] * 2
    assert (
        'got "lost"' in messages[0]
        and messages[1] == "customer_id='C-nobody' refers to no row of customers.customer_id"
    )


SHOP_COLUMNS = [
    (table, column)
    for table, spec in yaml.safe_load((FIXTURES / "shop" / "domain.yaml").read_text())["tables"].items()
    for column in spec["columns"]
]


def test_any_one_column_with_a_bad_type_is_exactly_one_problem(tmp_path):
    """Every column of the shop in turn (keys, foreign keys, columns tools filter, create and update
    on, seed rows hold): one wrong type, one problem, at the column."""
    for table, column in SHOP_COLUMNS:
        folder = shop_copy(tmp_path / f"{table}-{column}")

        def plant(raw: dict[str, Any], table: str = table, column: str = column) -> None:
            raw["tables"][table]["columns"][column]["type"] = "text"

        edit(folder, plant)
        assert places(folder) == [("domain.yaml", f"tables.{table}.columns.{column}.type")], (table, column)


def test_any_one_tool_with_a_wrong_field_is_exactly_one_problem(tmp_path):
    """Every tool in turn with a kind that does not exist (tasks call every tool): one problem each."""
    names = [t["name"] for t in yaml.safe_load((FIXTURES / "shop" / "domain.yaml").read_text())["tools"]]
    tasks = (FIXTURES / "shop_tasks.jsonl").read_text()
    for i, name in enumerate(names):
        folder = shop_copy(tmp_path / name)
        (folder / "tasks.jsonl").write_text(tasks)
        edit(folder, lambda raw, name=name: tool(raw, name).update(kind="reed"))
        assert places(folder) == [("domain.yaml", f"tools[{i}] ({name}).kind")], name


def test_a_duplicate_tool_name_is_found_even_when_the_first_tool_fails_and_both_are_checked(tmp_path):
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        first = tool(raw, "set_note")
        first["operation"]["set"]["notes"] = "$args.note"  # no such argument
        second = json.loads(json.dumps(first))
        second["operation"]["set"]["vip"] = "$args.vip"  # no such argument either
        raw["tools"].append(second)

    edit(folder, plant)
    assert places(folder) == [
        ("domain.yaml", "tools[5] (set_note).operation[0].set.notes"),
        ("domain.yaml", "tools[6] (set_note)"),
        ("domain.yaml", "tools[6] (set_note).operation[0].set.notes"),
        ("domain.yaml", "tools[6] (set_note).operation[0].set.vip"),
    ]


def test_lost_values_are_warned_about_and_results_are_not(tmp_path):
    """A read nothing uses is lost; the last data step of a tool, of a fragment, of a collected
    `for_each` pass is its list's value, even when checks follow it."""
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        ops = tool(raw, "cancel_order")["operation"]
        ops.insert(1, {"list": "order_items", "where": [{"column": "order_id", "value": "$order.order_id"}]})
        ops.insert(2, {"let": "unused", "value": 1})
        ops.append(
            {"update": "orders", "key": {"order_id": "$order.order_id"}, "set": {"total": 0}}
        )  # never runs
        search = tool(raw, "search_products")
        search["operation"] = [
            search["operation"],
            {"require": True, "error": "x"},
        ]  # the list is still the result
        raw["fragments"] = {  # its list is what the fragment gives back
            "lookup": {
                "params": ["sku"],
                "steps": [{"list": "products", "where": [{"column": "sku", "value": "$sku"}]}],
            }
        }
        note = tool(raw, "set_note")
        note["operation"] = [{"use": "lookup", "with": {"sku": "SKU-001"}, "as": "p"}, note["operation"]]

    edit(folder, plant)
    report = check_domain(folder)
    assert report.errors == []
    assert [(w.location, w.message) for w in report.warnings] == [
        ("tools[4] (cancel_order).operation[7]", "never runs: step 6 always ends the call before it"),
        ("tools[4] (cancel_order).operation[1]", "this step's value is lost: nothing reads it (bind it with `as:`, or drop it)"),
        ("tools[4] (cancel_order).operation[2]", "$unused is bound here but never read: its value is lost"),
    ]  # fmt: skip


def test_a_literal_passed_to_a_fragment_is_checked_where_the_fragment_puts_it(tmp_path):
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        raw["fragments"] = {
            "set_status": {
                "params": ["order_id", "status"],
                "steps": [
                    {"update": "orders", "key": {"order_id": "$order_id"}, "set": {"status": "$status"}}
                ],
            }
        }
        ops = tool(raw, "cancel_order")["operation"]
        ops[2] = {"use": "set_status", "with": {"order_id": "$order.order_id", "status": "canceled"}}
        ops[-1] = {"return": "$order"}

    edit(folder, plant)
    (problem,) = check_domain(folder).errors
    assert problem.location == "tools[4] (cancel_order).operation[2].with.status"
    assert '"canceled"' in problem.message and "fragments.set_status.steps[0].set.status" in problem.message


def test_one_mistake_on_many_seed_rows_is_one_problem_naming_every_line(tmp_path):
    """Rows whose status the enum forgot (one mistake), and rows referring to a customer no one
    seeded: each is one problem at its first line, naming the other lines."""
    folder = shop_copy(tmp_path)
    orders = folder / "seed" / "orders.jsonl"
    start = len(orders.read_text().splitlines())
    with orders.open("a") as fh:
        for i in range(14):
            row = {"order_id": f"O-9{i:02}", "customer_id": "C-gone", "total": 1.0, "status": "returned"}
            fh.write(json.dumps(row) + "\n")
    errors = check_domain(folder).errors
    assert [p.location for p in errors] == [f"line {start + 1}"] * 2
    lines = ", ".join(str(start + n) for n in range(2, 12))
    assert errors[0].message.endswith(f'got "returned" (also on lines {lines} and 3 more)')
    assert errors[1].message.startswith(
        "customer_id='C-gone' refers to no row of customers.customer_id (also on"
    )


def test_a_renamed_tool_is_one_problem_naming_every_call(tmp_path):
    folder = shop_copy(tmp_path)
    shutil.copy(FIXTURES / "shop_tasks.jsonl", folder / "tasks.jsonl")
    edit(folder, lambda raw: tool(raw, "place_order").update(name="order_products"))
    calls = [
        f"line {n} (task {t['id']}).calls[{i}]"
        for n, t in enumerate(map(json.loads, (folder / "tasks.jsonl").read_text().splitlines()), start=1)
        for i, c in enumerate(t["calls"])
        if c["name"] == "place_order"
    ]
    assert len(calls) >= 3
    (problem,) = check_domain(folder).errors
    assert (problem.file, problem.location) == ("tasks.jsonl", calls[0])
    assert problem.message == f"unknown tool 'place_order' (also {', '.join(calls[1:])})"


def test_an_ordering_filter_on_an_enum_column_takes_any_value_of_its_type(tmp_path):
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        ops = tool(raw, "cancel_order")["operation"]
        where = [{"column": "status", "op": "ge", "value": "a"}, {"column": "status", "op": "lt", "value": 5}]
        ops.insert(0, {"count": "orders", "where": where, "as": "n"})
        ops[-1] = {"return": {"object": {"order": "$order", "n": "$n"}}}

    edit(folder, plant)
    (problem,) = check_domain(folder).errors
    assert problem.location == "tools[4] (cancel_order).operation[0].where[1].value"
    assert problem.message == "`lt` compares orders.status (string) with 5"


def test_a_name_read_only_in_a_template_or_a_fragment_argument_is_read(tmp_path):
    folder = shop_copy(tmp_path)

    def plant(raw: dict[str, Any]) -> None:
        ops = tool(raw, "cancel_order")["operation"]
        ops.insert(1, {"let": "shown", "value": "x"})
        ops.insert(2, {"require": True, "error": "{shown:>5}"})
        ops.insert(3, {"count": "orders", "as": "n"})
        ops.insert(4, {"use": "noop", "with": {"v": {"map": {"over": [1], "as": "m", "to": "$n"}}}})
        raw["fragments"] = {"noop": {"params": ["v"], "steps": [{"let": "w", "value": "$v"}]}}

    edit(folder, plant)
    assert check_domain(folder).warnings == []
