"""toolgen.synth.keys: a generated table's keys are the ones its tools' key arguments accept.

On real dev-corpus specs (twilio's `^MG[0-9a-f]{32}$` sids, xero's `format: uuid` ids,
digitalocean's and ticket-api's integer ids, discord's snowflake strings, AWS IAM's names): every
key or parent argument of every tool accepts the values its seed rows hold, and every get-by-id
tool called with a seed row's key returns that row.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.builders import DomainBuilder, arg, column, create, inputs, param, ref, return_, uuid_ids
from simulator.plan.ids import IdMaker, parse_pattern
from toolgen.pipeline import generate
from toolgen.synth.folder import build_domain
from toolgen.synth.keys import key_samples, key_shape, pattern_slots, relaxed
from toolgen.synth.schema import infer_schema
from toolgen.synth.seed import seed_rows
from toolgen.synth.tools import compile_tools

from .conftest import shared_file
from .synth_kit import make_op, planned_from

SPECS = {
    "twilio": "openapi/vendor/twilio__twilio-oai/spec/json/twilio_messaging_v1.json",
    "aws-iam": "openapi/apis-guru/amazonaws.com/iam",
    "digitalocean": "openapi/vendor/digitalocean__openapi/specification/DigitalOcean-public.v2.yaml",
    "discord": "openapi/vendor/discord__discord-api-spec/specs/openapi.json",
    "xero": "openapi/vendor/XeroAPI__Xero-OpenAPI/xero_accounting.yaml",
    "ticket-api": "function_calling/bfcl_multi_turn_func_doc/ticket_api.json",
}


def _spec(name: str) -> Path:
    path = shared_file(f"corpus/dev/{SPECS[name]}")
    return next(iter(sorted(path.rglob("openapi.yaml")))) if path.is_dir() else path


def _domains(name: str) -> list[tuple[Any, Any, Any]]:
    """(schema, toolset, builder with seed rows) of every domain planned from the spec."""
    generated = generate([_spec(name)], workers=1)
    ops = {o.id: o for o in generated.operations}
    out = []
    for plan in generated.plan.domains:
        schema = infer_schema(plan, ops)
        toolset = compile_tools(schema)
        builder = build_domain(plan, schema, toolset)
        rows = seed_rows(builder.spec().tables, schema.hints(), 0, 6, salt=plan.name)
        for table, table_rows in rows.items():
            builder.seed(table, table_rows)
        out.append((schema, toolset, builder))
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_key_argument_accepts_the_keys_of_its_seed_rows(name):
    checked = 0
    for schema, toolset, builder in _domains(name):
        for tool in toolset.tools:
            props = tool.input_schema["properties"]
            for binding in schema.bindings[tool.op_id]:
                if binding.role not in ("key", "parent") or binding.table is None:
                    continue
                values = [r[binding.column] for r in builder.rows.get(binding.table, [])]
                validator = jsonschema.Draft202012Validator(
                    props[binding.param], format_checker=jsonschema.FormatChecker()
                )
                for value in [v for v in values if v is not None][:3]:
                    errors = [e.message for e in validator.iter_errors(value)]
                    assert errors == [], (tool.name, binding.param, value, errors)
                    checked += 1
    assert checked >= 5


@pytest.mark.parametrize("name", ["digitalocean", "discord", "ticket-api", "twilio", "xero"])
def test_every_get_by_id_tool_returns_its_own_seed_rows(name):
    called = 0
    for schema, toolset, builder in _domains(name):
        episode = builder.load().episode(seed=0)
        for tool in [t for t in toolset.tools if t.compiled_as == "get"]:
            binds = {b.param: b for b in schema.bindings[tool.op_id]}
            required = tool.input_schema.get("required", [])
            if not required or any(binds[r].role not in ("key", "parent") for r in required):
                continue  # a get whose other required arguments are options: not a lookup by id
            key = next(r for r in required if binds[r].role == "key")
            table = binds[key].table
            rows = [
                r
                for r in builder.rows.get(table, [])
                if all(r[binds[q].column] is not None for q in required)
            ]
            for row in rows[:2]:
                result = episode.call(tool.name, {q: row[binds[q].column] for q in required})
                found = result.get(binds[key].column) if isinstance(result, dict) else None
                assert found == row[binds[key].column], (tool.name, row, result)
                called += 1
    assert called >= 2


def test_the_key_follows_its_arguments_type_and_shape():
    assert key_shape({}, [{"type": "integer"}, {"type": "integer"}]).type == "integer"
    assert key_shape({"type": "integer"}, [{"type": "string"}]).type == "string"  # the arguments decide
    assert key_shape({"type": "integer"}, [{"description": "no type"}]).type == "integer"
    assert key_shape({}, [{"type": "integer"}, {"type": "string"}]).type == "string"  # a tie: string
    assert key_shape({}, [{"type": "string", "format": "uuid"}]).ids == {"scheme": "uuid"}
    twilio = key_shape({}, [{"type": "string", "pattern": "^MG[0-9a-fA-F]{32}$"}])
    assert twilio.ids == {"scheme": "pattern", "prefix": "", "pattern": "MG" + "9" * 32}
    assert key_shape({}, [{"type": "string"}]).ids is None  # the folder's default: hash


@pytest.mark.parametrize(
    ("regex", "slots"),
    [
        ("^MG[0-9a-f]{32}$", "MG" + "9" * 32),
        ("^[A-Z]{3}\\d{3}$", "AAA999"),
        ("^[a-z0-9]+$", "x" * 8),
        ("^AC[0-9A-Z]{2,4}$", "\\AC" + "X" * 4),
        ("^user-[a-z]{1,}$", "user-" + "a" * 8),
    ],
)
def test_simple_patterns_become_pattern_ids_the_pattern_accepts(regex, slots):
    assert pattern_slots(regex) == slots
    maker = IdMaker("t", "pattern", slots=parse_pattern(slots))
    for n in range(1, 20):
        assert jsonschema.Draft202012Validator({"pattern": regex}).is_valid(maker.key(3, n))


_CLASSES = ["[0-9]", "[a-f0-9]", "[0-9a-fA-F]", "[A-Z]", "[a-zA-Z0-9]", "\\d", "[A-Z0-9]", "[a-z]", "[_a-z]"]
_PIECES = st.one_of(
    st.sampled_from(_CLASSES),
    st.sampled_from(list("ABCaxz-_:09")),
    st.sampled_from(["\\.", "\\-", "\\$"]),
)


@given(
    pieces=st.lists(
        st.tuples(_PIECES, st.sampled_from(["", "{3}", "{2,5}", "{0,2}", "+", "*", "?", "{1,}"])),
        min_size=1,
        max_size=6,
    ),
    slot=st.sampled_from(_CLASSES),
    seed=st.integers(min_value=0, max_value=2**20),
)
def test_pattern_ids_from_any_simple_pattern_match_it(pieces, slot, seed):
    regex = "^" + "".join(p + r for p, r in pieces) + slot + "{4}$"
    slots = pattern_slots(regex)
    assert slots is not None, regex
    maker = IdMaker("t", "pattern", slots=parse_pattern(slots))
    for key in maker.candidates(seed, 5):
        assert jsonschema.Draft202012Validator({"pattern": regex}).is_valid(key), (regex, slots, key)


@pytest.mark.parametrize("regex", ["^(0|[1-9][0-9]*)$", "^a|b$", "^\\w+$", "[0-9]+", "^[^x]{3}$", "^.{4}$"])
def test_other_patterns_are_not_guessed(regex):
    assert pattern_slots(regex) is None


def test_an_argument_the_keys_would_fail_is_relaxed_and_says_so():
    samples = key_samples("tickets", "string", {"scheme": "hash", "prefix": "TIC-"})
    loose = relaxed({"type": "integer", "description": "The ticket."}, samples, "string")
    assert loose is not None and loose["type"] == "string"
    assert loose["description"].startswith("The ticket. (relaxed") and "type integer" in loose["description"]
    snowflake = relaxed({"type": "string", "pattern": "^(0|[1-9][0-9]*)$"}, samples, "string")
    assert snowflake is not None and "pattern" not in snowflake
    assert relaxed({"type": ["string", "null"], "minLength": 1}, samples, "string") is None


def test_a_tool_whose_key_disagrees_with_the_others_gets_the_relaxed_schema():
    plan, ops = planned_from(
        make_op("get_widget", "read", {"widget_id": {"type": "integer"}}, ["widget_id"]),
        make_op("delete_widget", "delete", {"widget_id": {"type": "integer"}}, ["widget_id"]),
        make_op("rename_widget", "update", {"widget_id": {"type": "string"}, "name": {"type": "string"}}),
    )
    schema = infer_schema(plan, ops)
    table = schema.tables["widgets"]
    assert table.columns[table.primary_key].type == "integer" and table.ids is None
    toolset = compile_tools(schema)
    by_name = {t.name: t for t in toolset.tools}
    assert by_name["get_widget"].input_schema["properties"]["widget_id"] == {"type": "integer"}
    renamed = by_name["rename_widget"].input_schema["properties"]["widget_id"]
    assert renamed["type"] == "integer" and "relaxed" in renamed["description"]


def _uuid_domain():
    d = DomainBuilder("uuids", "1.0.0", description="uuid keys")
    d.table("notes", "id", {"id": column("string"), "text": column("string")}, ids=uuid_ids())
    d.tool(
        "add_note",
        "Add a note.",
        "write",
        inputs({"text": param("string")}, ["text"]),
        [create("notes", {"text": arg("text")}, as_="note"), return_(ref("note"))],
    )
    return d.load()


@given(seed=st.integers(min_value=0, max_value=2**31))
def test_uuid_ids_are_version_4_uuids_deterministic_per_seed(seed):
    maker = IdMaker("notes", "uuid")
    keys = maker.candidates(seed, 3)
    assert keys == maker.candidates(seed, 3) and len(set(keys)) == 3
    assert all(uuid.UUID(k).version == 4 and str(uuid.UUID(k)) == k for k in keys)
    assert maker.candidates(seed + 1, 3) != keys


def test_create_on_a_uuid_table_makes_the_schemes_key():
    domain = _uuid_domain()
    made = [domain.episode(seed=5).call("add_note", {"text": "hi"}) for _ in range(2)]
    assert made[0] == made[1]  # same seed, same key
    key = made[0]["id"] if isinstance(made[0], dict) else None
    assert key == IdMaker("notes", "uuid").key(5, 1)
