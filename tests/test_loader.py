from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from scoring import load_domain
from simulator import SpecError
from tests.conftest import FIXTURES


def copy_shop(tmp_path: Path) -> Path:
    dest = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", dest)
    return dest


def edit_yaml(folder: Path, fn) -> None:
    path = folder / "domain.yaml"
    raw = yaml.safe_load(path.read_text())
    fn(raw)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))


def problems(folder: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_domain(folder)
    return [str(p) for p in info.value.problems]


def test_shop_loads(shop):
    assert shop.ref == "shop@0.1.0"
    assert set(shop.tables) == {"customers", "products", "orders", "order_items"}
    assert shop.row_count() == 70
    assert shop.fingerprint().startswith("0.1.0-")


def test_every_problem_is_reported_at_once(tmp_path):
    folder = copy_shop(tmp_path)

    def breakit(raw):
        tools = raw["tools"]
        tools[0]["operation"]["get"] = "clients"  # unknown table
        tools[1]["operation"]["where"][0]["column"] = "name"  # unknown column
        tools[2]["input_schema"] = {
            "type": "object",
            "properties": {"name": {"type": "strang"}},
        }  # invalid schema
        tools.append(dict(tools[3]))  # duplicate name
        raw["tables"]["orders"]["columns"]["customer_id"]["references"] = "people.person_id"  # FK to nowhere

    edit_yaml(folder, breakit)
    with (folder / "seed" / "customers.jsonl").open("a") as fh:
        fh.write(json.dumps({"customer_id": "C-0001", "name": "dup", "email": "z@z"}) + "\n")  # duplicate key
        fh.write(json.dumps({"customer_id": "C-9999", "name": 5, "email": "q@q"}) + "\n")  # wrong type
        fh.write("{not json\n")
    with (folder / "seed" / "orders.jsonl").open("a") as fh:
        fh.write(
            json.dumps({"order_id": "O-9", "customer_id": "C-nobody", "total": 1.0, "status": "lost"}) + "\n"
        )
    (folder / "tasks.jsonl").write_text(
        json.dumps({"id": "t1", "instruction": "x", "calls": [{"name": "no_such_tool", "arguments": {}}]})
        + "\n"
        + json.dumps(
            {
                "id": "t2",
                "instruction": "x",
                "calls": [{"name": "get_customer", "arguments": {"customer_id": 7}}],
            }
        )
        + "\n"
    )
    found = problems(folder)
    text = "\n".join(found)
    expected = [
        "tables.orders.columns.customer_id.references: foreign key to unknown table 'people'",
        "tools[0] (get_customer).operation[0]: unknown table 'clients'",
        "tools[1] (search_products).operation[0].where[0]: table 'products' has no column 'name'",
        "tools[2] (add_customer).input_schema: invalid JSON Schema",
        "duplicate tool name 'place_order'",
        "seed/customers.jsonl:line 21: duplicate primary key customer_id='C-0001'",
        "seed/customers.jsonl:line 22: customers.name: expected a string, got 5",
        "seed/customers.jsonl:line 23: not valid JSON",
        "seed/orders.jsonl:line 11: orders.status must be one of",
        "tasks.jsonl:line 1 (task t1).calls[0]: unknown tool 'no_such_tool'",
        "tasks.jsonl:line 2 (task t2).calls[0]: arguments rejected by get_customer's input schema: 7 is not of type 'string'",
    ]
    for fragment in expected:
        assert fragment in text, f"missing {fragment!r} in:\n{text}"
    assert len(found) == len(expected), text  # each once, nothing that follows from another


def test_foreign_key_to_missing_row_in_seed(tmp_path):
    folder = copy_shop(tmp_path)
    with (folder / "seed" / "orders.jsonl").open("a") as fh:
        fh.write(json.dumps({"order_id": "O-9", "customer_id": "C-nobody", "total": 1.0}) + "\n")
    assert any(
        "customer_id='C-nobody' refers to no row of customers.customer_id" in p for p in problems(folder)
    )


def test_unknown_names_in_expressions_are_load_problems(tmp_path):
    folder = copy_shop(tmp_path)

    def breakit(raw):
        raw["tools"][5]["operation"]["set"]["notes"] = "$args.note"  # typo of notes
        raw["tools"][4]["operation"][1]["require"] = {"eq": ["$ordr.status", "pending"]}
        raw["tools"][3]["operation"][0]["gett"] = "x"

    edit_yaml(folder, breakit)
    text = "\n".join(problems(folder))
    assert "$args.note is not a property of the tool's input_schema" in text
    assert "unknown name $ordr" in text
    assert "tools[3] (place_order).operation[0].get.gett: Extra inputs are not permitted" in text
    assert "tools[4] (cancel_order).operation[1].require.eq[0]: unknown name $ordr" in text


def test_duplicate_yaml_keys_are_refused(tmp_path):
    folder = copy_shop(tmp_path)
    path = folder / "domain.yaml"
    path.write_text(
        path.read_text().replace(
            "tables:\n", "tables:\n  products:\n    primary_key: x\n    columns: {x: {type: string}}\n", 1
        )
    )
    assert any("duplicate key 'products'" in p for p in problems(folder))


def test_read_tool_may_not_write(tmp_path):
    folder = copy_shop(tmp_path)
    edit_yaml(folder, lambda raw: raw["tools"][5].update(kind="read"))
    assert any("a `read` tool may not create, update or delete" in p for p in problems(folder))


def test_unknown_domain_names_the_bundled_ones():
    with pytest.raises(SpecError) as info:
        load_domain("no-such-domain")
    assert "no domain folder" in str(info.value)


def test_unknown_json_schema_keywords_are_problems(tmp_path):
    folder = copy_shop(tmp_path)
    path = folder / "domain.yaml"
    path.write_text(
        path.read_text().replace(
            "properties: {customer_id: {type: string}}",
            "properties: {customer_id: {type: string, description: an id, like C-1}}",
            1,
        )
    )
    assert any(
        "'properties/customer_id/like C-1' is not a JSON Schema keyword" in p for p in problems(folder)
    )


def _tasks(folder: Path, tasks: list[dict]) -> None:
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))


def _add(name: str, ref: str = "x@y") -> dict:
    return {"name": "add_customer", "arguments": {"name": name, "email": ref}}


def test_gold_call_references_must_name_earlier_calls_and_fields_their_results_have(tmp_path):
    folder = copy_shop(tmp_path)
    note = {"name": "set_note", "arguments": {"customer_id": "$calls.0.customer_id", "notes": "hi"}}
    failing = {"name": "get_customer", "arguments": {"customer_id": "C-404"}, "expect_error": True}
    missing_fields = [  # found only once the earlier problems are gone (the gold is replayed)
        {
            "id": "field",
            "instruction": "x",
            "calls": [_add("D"), {**note, "arguments": {"customer_id": "$calls.0.nope", "notes": "hi"}}],
        },
        {
            "id": "deep",
            "instruction": "x",
            "calls": [
                _add("E"),
                {**note, "arguments": {"customer_id": "$calls.0.name.first", "notes": "hi"}},
            ],
        },
    ]
    _tasks(
        folder,
        [
            {"id": "ok", "instruction": "x", "calls": [_add("A"), note]},
            {
                "id": "self",
                "instruction": "x",
                "calls": [
                    {**note, "arguments": {**note["arguments"], "customer_id": "$calls.0.customer_id"}}
                ],
            },
            {
                "id": "later",
                "instruction": "x",
                "calls": [_add("B"), {**note, "arguments": {"customer_id": "$calls.5.x"}}],
            },
            {
                "id": "name",
                "instruction": "x",
                "calls": [_add("C"), {**note, "arguments": {"customer_id": "$calls.first.x"}}],
            },
            {
                "id": "failed",
                "instruction": "x",
                "calls": [failing, {**note, "arguments": {"customer_id": "$calls.0.customer_id"}}],
            },
            *missing_fields,
        ],
    )
    found = problems(folder)
    assert found == [
        "tasks.jsonl:line 2 (task self).calls[0].arguments: $calls.0.customer_id refers to itself; a call can use only earlier calls' results (none: this is the first call)",
        "tasks.jsonl:line 3 (task later).calls[1].arguments: $calls.5.x refers to call 5, which runs later; a call can use only earlier calls' results (calls 0 to 0)",
        "tasks.jsonl:line 4 (task name).calls[1].arguments: $calls.first.x does not name a call (write $calls.N.path, N an earlier call's index)",
        "tasks.jsonl:line 5 (task failed).calls[1].arguments: $calls.0.customer_id refers to call 0, which is expected to fail and has no result",
    ]
    _tasks(
        folder,
        [
            {"id": "ok", "instruction": "x", "calls": [_add("A"), note]},
            *missing_fields,
        ],
    )
    found = problems(folder)
    assert found == [
        "tasks.jsonl:line 2 (task field): task field: gold call 1: $calls.0.nope: call 0's result has no field 'nope' (fields: balance, customer_id, email, name, notes, vip)",
        "tasks.jsonl:line 3 (task deep): task deep: gold call 1: $calls.0.name.first: call 0's result.name is a string, which has no field 'first'",
    ]


def test_submit_answer_is_a_reserved_tool_name(tmp_path):
    folder = copy_shop(tmp_path)
    edit_yaml(folder, lambda raw: raw["tools"][0].update(name="submit_answer"))
    assert problems(folder) == [
        "domain.yaml:tools[0] (submit_answer).name: Value error, the tool name 'submit_answer' is reserved: the server adds it as the answer channel"
    ]
