"""Generated from a spec alone, a customer-service tool list behaves like its API: state verbs
change the state of the row they name and refuse what makes no sense, a plan change repoints the
line, computations are no tables, and a customer stays in one domain with its lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from scoring import check_domain, load_domain
from simulator.errors import ToolError
from toolgen.cluster import cluster
from toolgen.model import Operation
from toolgen.synth.effects import Repoint, StateChange
from toolgen.synth.schema import infer_schema
from toolgen.synth.tools import compile_tools
from toolgym.cli import app

from .synth_kit import make_op, planned_from

TELECOM = Path(__file__).resolve().parent / "fixtures" / "telecom" / "telecom_tools.json"
runner = CliRunner()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("telecom") / "out"
    result = runner.invoke(app, ["generate", str(TELECOM), "--out", str(out), "--workers", "1", "--json"])
    assert result.exit_code == 0, result.stderr
    return out, json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def folder(generated: tuple[Path, dict[str, Any]]) -> Path:
    out, report = generated
    kept = [Path(d["folder"]) for d in report["domain_results"] if d["kept"]]
    return next(f for f in kept if "suspend_line" in (f / "domain.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tables(folder: Path) -> dict[str, Any]:
    return yaml.safe_load((folder / "domain.yaml").read_text(encoding="utf-8"))["tables"]


def _rows(folder: Path, table: str) -> list[dict[str, Any]]:
    text = (folder / "seed" / f"{table}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _line(folder: Path, **wanted: Any) -> dict[str, Any]:
    return next(r for r in _rows(folder, "lines") if all(r.get(k) == v for k, v in wanted.items()))


# -- the generated domain ---------------------------------------------------------------------------


def test_every_generated_domain_checks_clean_and_keeps_five_valid_tasks(generated):
    out, report = generated
    kept = [d for d in report["domain_results"] if d["kept"]]
    assert kept
    for entry in kept:
        folder = Path(entry["folder"])
        assert check_domain(folder).errors == []
        tasks = (folder / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
        assert entry["tasks_kept"] == len(tasks) >= 5, entry["name"]


def test_customers_lines_and_plans_are_one_domain(generated):
    _, report = generated
    (telecom,) = [d for d in report["domain_results"] if d["kept"]]
    spec = yaml.safe_load((Path(telecom["folder"]) / "domain.yaml").read_text(encoding="utf-8"))
    tools = {t["name"] for t in spec["tools"]}
    assert {
        "get_customer_by_phone",
        "get_lines_for_customer",
        "suspend_line",
        "change_plan",
        "list_plans",
    } <= tools


def test_a_line_gets_a_status_with_mixed_seeded_states(folder, tables):
    status = tables["lines"]["columns"]["status"]
    assert (status["enum"], status["default"]) == (["active", "suspended"], "active")
    assert {r["status"] for r in _rows(folder, "lines")} == {"active", "suspended"}


def test_suspending_a_line_sets_its_status_and_suspending_again_is_refused(folder):
    line = _line(folder, status="active")
    args = {"customer_id": line["customer_id"], "line_id": line["line_id"]}
    with load_domain(folder).episode(seed=0) as ep:
        ep.call("suspend_line", {**args, "reason": "Travelling abroad for two months."})
        assert ep.row("lines", line["line_id"])["status"] == "suspended"
        with pytest.raises(ToolError, match=f"line {line['line_id']} is already suspended"):
            ep.call("suspend_line", {**args, "reason": "Again."})
        assert ep.row("lines", line["line_id"])["reason"] == "Travelling abroad for two months."
        ep.call("resume_line", args)
        assert ep.row("lines", line["line_id"])["status"] == "active"
        with pytest.raises(ToolError, match="is already active"):
            ep.call("resume_line", args)


def test_roaming_is_a_flag_of_the_line_not_a_table(folder, tables):
    assert tables["lines"]["columns"]["roaming_enabled"]["type"] == "boolean"
    assert not [t for t in tables if "roam" in t]
    line = _line(folder, roaming_enabled=False)
    args = {"customer_id": line["customer_id"], "line_id": line["line_id"]}
    with load_domain(folder).episode(seed=0) as ep:
        ep.call("enable_roaming", args)
        assert ep.row("lines", line["line_id"])["roaming_enabled"] is True
        with pytest.raises(ToolError, match="already has roaming enabled"):
            ep.call("enable_roaming", args)
        ep.call("disable_roaming", args)
        assert ep.row("lines", line["line_id"])["roaming_enabled"] is False


def test_change_plan_points_the_line_at_another_plan_and_creates_no_row(folder, tables):
    assert tables["lines"]["columns"]["plan_id"]["references"] == "plans.plan_id"
    line = _line(folder)
    plans = [p["plan_id"] for p in _rows(folder, "plans")]
    other = next(p for p in plans if p != line["plan_id"])
    args = {"customer_id": line["customer_id"], "line_id": line["line_id"]}
    with load_domain(folder).episode(seed=0) as ep:
        ep.call("change_plan", {**args, "plan_id": other})
        assert ep.row("lines", line["line_id"])["plan_id"] == other
        assert ep.changes() == {("lines", line["line_id"])}
        assert len(ep.export()["plans"]) == len(plans)
        with pytest.raises(ToolError, match="No plan with plan_id PLN-none"):
            ep.call("change_plan", {**args, "plan_id": "PLN-none"})


def test_computations_make_no_table_and_are_listed_as_not_modelled(generated, folder, tables):
    _, report = generated
    assert not [t for t in tables if any(w in t for w in ("calculat", "think", "currenc", "telecom"))]
    reasons = {s["id"].split(":")[1].split("@")[0]: s["reason"] for s in report["skipped"]}
    assert reasons["calculate"] == "not modelled: Calculate the result of a mathematical expression."
    assert reasons["convert_currency"].startswith("not modelled: Converts an amount between two currencies")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "## Not modelled" in readme and "| `calculate` |" in readme and "| `convert_currency` |" in readme
    with load_domain(folder).episode(seed=0) as ep:  # a scratchpad: it changes and says nothing
        assert ep.call("think", {"thought": "The line is suspended; resume it first."}) is None
        assert ep.changes() == set()


def test_a_refusal_task_names_the_state_the_row_is_in(folder):
    tasks = [json.loads(t) for t in (folder / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    refusals = [t for t in tasks if "refusal" in t["tags"]]
    assert refusals
    for task in refusals:
        assert task["calls"][-1].get("expect_error") is True
        assert task["answer_facts"] and task["answer_facts"][0] in (
            "active",
            "suspended",
            "enabled",
            "disabled",
        )


# -- the rules, one at a time -----------------------------------------------------------------------


def _schema(*ops: Operation):
    plan, by_id = planned_from(*ops)
    schema = infer_schema(plan, by_id)
    return schema, {t.name: t for t in compile_tools(schema).tools}


def _record(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"widget_id": {"type": "string"}, **props}}


KEY = {"widget_id": {"type": "string"}}


def test_the_specs_status_enum_is_used_as_it_is():
    record = _record(status={"type": "string", "enum": ["active", "suspended", "closed"]})
    schema, tools = _schema(
        make_op("get_widget", "read", KEY, ["widget_id"], record_schema=record),
        make_op("suspend_widget", "action", KEY, ["widget_id"]),
        make_op("freeze_widget", "action", KEY, ["widget_id"]),
    )
    assert schema.tables["widgets"].columns["status"].enum == ["active", "suspended", "closed"]
    assert tools["suspend_widget"].effect == StateChange("suspend", "status", "suspended", (), ("closed",))
    assert tools["freeze_widget"].compiled_as == "event"  # the spec's states have no `frozen`


def test_states_quoted_in_a_status_description_are_the_states():
    record = _record(status={"type": "string", "description": "One of 'live', 'paused' or 'ended'."})
    schema, tools = _schema(
        make_op("get_widget", "read", KEY, ["widget_id"], record_schema=record),
        make_op("pause_widget", "action", KEY, ["widget_id"]),
    )
    assert schema.tables["widgets"].columns["status"].enum == ["live", "paused", "ended"]
    assert tools["pause_widget"].effect.value == "paused"


def test_a_boolean_the_record_has_for_the_state_is_the_flag():
    record = _record(locked={"type": "boolean"})
    schema, tools = _schema(
        make_op("get_widget", "read", KEY, ["widget_id"], record_schema=record),
        make_op("lock_widget", "action", KEY, ["widget_id"]),
        make_op("unlock_widget", "action", KEY, ["widget_id"]),
    )
    assert "status" not in schema.tables["widgets"].columns
    assert (tools["lock_widget"].effect.column, tools["lock_widget"].effect.value) == ("locked", True)
    assert (tools["unlock_widget"].effect.column, tools["unlock_widget"].effect.value) == ("locked", False)


def test_verbs_without_states_in_the_spec_make_them_and_refuse_the_wrong_ones():
    schema, tools = _schema(
        make_op("get_request", "read", {"request_id": {"type": "string"}}, ["request_id"], entity="request"),
        make_op(
            "approve_request", "action", {"request_id": {"type": "string"}}, ["request_id"], entity="request"
        ),
        make_op(
            "reject_request", "action", {"request_id": {"type": "string"}}, ["request_id"], entity="request"
        ),
    )
    column = schema.tables["requests"].columns["status"]
    assert (column.enum, column.default, column.nullable) == (
        ["pending", "approved", "rejected"],
        "pending",
        False,
    )
    approve = tools["approve_request"].effect
    assert (approve.value, approve.sources) == ("approved", ("pending",))  # a rejected request stays so


def test_a_status_of_another_type_is_not_the_verbs_state():
    record = _record(status={"type": "integer", "enum": [0, 1, 2, 4]})
    schema, tools = _schema(
        make_op("get_widget", "read", KEY, ["widget_id"], record_schema=record),
        make_op("close_widget", "action", KEY, ["widget_id"]),
    )
    columns = schema.tables["widgets"].columns
    assert (columns["status"].type, columns["status"].enum) == ("integer", [0, 1, 2, 4])
    assert (columns["state"].type, columns["state"].enum) == ("string", ["open", "closed"])
    assert (tools["close_widget"].effect.column, tools["close_widget"].effect.value) == ("state", "closed")


def test_undoing_a_state_verb_goes_back_to_the_state_it_left():
    schema, tools = _schema(
        make_op("get_widget", "read", KEY, ["widget_id"]),
        make_op("close_widget", "action", KEY, ["widget_id"]),
        make_op("undo_widget_close", "action", KEY, ["widget_id"]),
    )
    assert tools["close_widget"].effect.value == "closed"
    undo = tools["undo_widget_close"].effect
    assert (undo.column, undo.value, undo.finals) == ("status", "open", ())


def test_a_write_that_repoints_its_row_updates_the_reference():
    ticket = {"ticket_id": {"type": "string"}, "agent_id": {"type": "string"}}
    schema, tools = _schema(
        make_op("get_ticket", "read", {"ticket_id": {"type": "string"}}, ["ticket_id"], entity="ticket"),
        make_op("assign_ticket", "update", ticket, ["ticket_id", "agent_id"], entity="ticket"),
        make_op("get_agent", "read", {"agent_id": {"type": "string"}}, ["agent_id"], entity="agent"),
    )
    assert tools["assign_ticket"].effect == Repoint("agent_id", "agent_id", "agents")
    assert tools["assign_ticket"].compiled_as == "reference"


def test_a_computation_and_a_scratchpad_get_no_table():
    schema, tools = _schema(
        make_op("get_widget", "read", KEY, ["widget_id"]),
        make_op("calculate", "action", {"expression": {"type": "string"}}, ["expression"], entity="t"),
        make_op("think", "action", {"thought": {"type": "string"}}, ["thought"], entity="t"),
    )
    assert set(schema.tables) == {"widgets"}
    assert schema.tableless == {"t:calculate": "not modelled: calculate", "t:think": "nothing"}
    assert tools["think"].kind == "read" and tools["think"].compiled_as == "nothing"


def test_a_proxy_passes_requests_on_and_holds_no_record():
    """Kubernetes' `DELETE .../pods/{name}/proxy`: no `delete the proxy of the pod ...`."""
    pod = {"name": {"type": "string"}}
    pods = "/paths/~1api~1v1~1pods~1{name}"
    schema, _ = _schema(
        make_op("read_pod", "read", pod, ["name"], entity="pod", pointer=f"{pods}/get", format="openapi-3.0"),
        make_op("delete_pod_proxy", "delete", pod, ["name"], entity="proxy", pointer=f"{pods}~1proxy/delete"),
        make_op(
            "get_pod_proxy_path",
            "read",
            {**pod, "path": {"type": "string"}},
            ["name", "path"],
            entity="proxy",
            pointer=f"{pods}~1proxy~1{{path}}/get",
        ),  # fmt: skip
    )
    assert set(schema.tableless) == {"t:delete_pod_proxy", "t:get_pod_proxy_path"}
    assert "proxies" not in schema.tables


def test_attaching_a_row_to_the_parent_its_path_names_gets_no_task():
    """DigitalOcean's `POST /agents/{agent_uuid}/knowledge_bases/{kb_uuid}` compiles to an event
    on a knowledge base already under that agent: `attach the knowledge base ...` says nothing."""
    from toolgen.synth.tasks import _links_in_place
    from toolgen.synth.tools import Toolset

    ids = {"agent_uuid": {"type": "string"}, "knowledge_base_uuid": {"type": "string"}}
    kbs = "/paths/~1agents~1{agent_uuid}~1knowledge_bases"
    openapi = {"format": "openapi-3.0", "entity": "knowledge_base"}
    agent = {"format": "openapi-3.0", "entity": "agent", "pointer": "/paths/~1agents~1{agent_uuid}/get"}
    schema, tools = _schema(
        make_op("get_agent", "read", {"agent_uuid": {"type": "string"}}, ["agent_uuid"], **agent),
        make_op("list_kbs", "read", ids, ["agent_uuid"], pointer=f"{kbs}/get", **openapi),
        make_op(
            "attach_kb", "action", ids, [*ids], pointer=f"{kbs}~1{{knowledge_base_uuid}}/post", **openapi
        ),
        make_op(
            "reindex_kb",
            "action",
            ids,
            [*ids],
            pointer=f"{kbs}~1{{knowledge_base_uuid}}~1reindex/post",
            **openapi,
        ),
    )
    assert tools["attach_kb"].compiled_as == tools["reindex_kb"].compiled_as == "event"
    assert _links_in_place(schema, Toolset(list(tools.values()))) == {"attach_kb"}


def test_what_else_a_read_of_one_named_row_takes_is_no_field_of_it():
    """`color_to_picture(color, height, width)` draws the colour named `color`: its height and
    width are the picture's, not the colour's (no `the width of the color "PapayaWhip"`)."""
    text, number = {"type": "string"}, {"type": "integer"}
    schema, _ = _schema(
        make_op(
            "color_to_picture",
            "read",
            {"color": text, "height": number, "width": number},  # (ToolBench's: none required)
            entity="color",
        ),
        make_op("add_color", "create", {"color": text, "hex": text}, ["color"], entity="color"),
    )
    assert {"color", "hex"} <= set(schema.tables["colors"].columns)
    assert not {"height", "width"} & set(schema.tables["colors"].columns)
    roles = {b.param: b.role for b in schema.bindings["t:color_to_picture"]}
    assert roles["height"] == roles["width"] == "option" and roles["color"] == "field"


def test_an_update_named_for_a_field_updates_its_record():
    rid = {"reservation_id": {"type": "string"}}
    flights = {"flights": {"type": "array", "items": {"type": "string"}}, "cabin": {"type": "string"}}
    members = {"theme": {"type": "string"}}
    schema, tools = _schema(
        make_op("get_reservation", "read", rid, ["reservation_id"], entity="reservation"),
        make_op("book_reservation", "create", flights, ["flights"], entity="reservation"),
        make_op(
            "update_reservation_flights", "update", {**rid, **flights}, ["reservation_id", "flights"],
            entity="reservation_flight",
        ),
        make_op(
            "update_reservation_settings", "update", {**rid, **members}, ["reservation_id", "theme"],
            entity="reservation_setting",
        ),
    )  # fmt: skip
    assert "reservation_flights" not in schema.tables and "reservation_settings" in schema.tables
    update = tools["update_reservation_flights"]
    assert update.compiled_as == "update"
    assert schema.table_of(schema.operations[update.op_id]).name == "reservations"


def test_a_handoff_that_names_no_record_gets_no_table():
    summary = {"summary": {"type": "string"}}
    schema, _ = _schema(
        make_op("get_widget", "read", KEY, ["widget_id"]),
        make_op(
            "transfer_to_human_agents", "create", summary, ["summary"], entity="human_agent", declared="write"
        ),
        make_op("transfer_to_widget", "action", {**KEY, **summary}, ["widget_id"]),
    )
    assert "human_agents" not in schema.tables  # a handoff naming a widget stays a write on it
    assert schema.tableless == {"t:transfer_to_human_agents": "not modelled: transfer to human agents"}


# -- clustering: an entity with its children -------------------------------------------------------


def _op(name: str, entity: str, consumes: tuple[str, ...] = ()) -> Operation:
    return Operation(
        id=f"tel:{name}",
        source="tel.json",
        pointer=f"/{name}",
        format="function-list",
        api="tel",
        name=name,
        description=name,
        input_schema={"type": "object", "properties": {}},
        entity=entity,
        kind="read",
        consumes=list(consumes),
    )


def _family(entity: str, n: int, *parents: str) -> list[Operation]:
    return [_op(f"op{i}_{entity}", entity, (entity, *parents)) for i in range(n)]


def test_a_cut_keeps_an_entity_with_its_children_and_falls_on_the_weak_link():
    """Customers with lines, bills, tickets (and lines with devices): 42 operations, one over the
    bound. The plans hang on one operation (`change_plan`): the cut falls there."""
    ops = [_op("get_customer_by_phone", "customer"), _op("get_customer_by_id", "customer", ("customer",))]
    ops += _family("line", 10, "customer") + _family("bill", 8, "customer") + _family("ticket", 8, "customer")
    ops += _family("device", 7, "line") + _family("plan", 6) + [_op("change_plan", "line", ("line", "plan"))]
    plan = cluster(ops, max_tools=40)
    where = {i: d.name for d in plan.domains for i in d.operations}
    assert not plan.skipped and len(where) == len(ops)
    for entity in ("customer", "line", "bill", "ticket", "device", "plan"):  # never through an entity
        assert len({where[o.id] for o in ops if o.entity == entity}) == 1, entity
    assert where["tel:get_customer_by_phone"] == where["tel:op0_line"] == where["tel:op0_bill"]
    assert where["tel:op0_plan"] != where["tel:op0_line"]


@pytest.mark.parametrize(
    ("path", "verb"),
    [
        ("/alerts/{alertId}/undoAcknowledge", "undo"),  # not "acknowledge": the opposite
        ("/messages/{id}/markAsRead", "mark"),
        ("/orders/{id}/cancel", "cancel"),
        ("/pets/{id}/uploadImage", "upload"),
        ("/clusters/{id}/node_pools/{pool_id}/recycle", "recycle"),  # not `a new recycle`
        ("/databases/{id}/resize", "resize"),
    ],
)
def test_a_verb_that_leads_a_path_segment_is_its_verb(path, verb):
    from toolgen.entities import analyse_path

    assert analyse_path(path).verb == verb


@pytest.mark.parametrize(
    ("path", "noun", "owners"),
    [
        ("/movie/popular", "movie", {}),  # which movies, not a `popular`
        ("/tv/on_the_air", "tv", {}),
        ("/tv/airing_today", "tv", {}),
        # a search's arguments are what it searches by, no record's key
        ("/Destiny2/SearchDestinyPlayer/{membershipType}/{displayName}/", "destiny_player", {}),
        ("/Content/GetContentById/{id}", "content", {"id": "content"}),
        ("/users/{id}/orders", "order", {"id": "user"}),
    ],
)
def test_a_path_segment_that_says_which_or_searches_names_no_record(path, noun, owners):
    from toolgen.entities import analyse_path

    info = analyse_path(path)
    assert (info.noun, info.collection_of) == (noun, owners)


def test_a_column_name_argument_names_no_column_record():
    from toolgen.relate import relate

    from .synth_kit import make_op

    ops = [
        make_op("delete_column", "delete", {"column_id": {"type": "string"}}, entity="column"),
        make_op("related_dashboards", "read", {"column_name": {"type": "string"}}, entity="dashboard"),
        make_op("list_charts", "read", {"dashboard_name": {"type": "string"}}, entity="chart"),
        make_op("get_dashboard", "read", {"id": {"type": "string"}}, entity="dashboard"),
    ]
    consumes = {op.name: op.consumes for op in relate(ops)}
    assert consumes["related_dashboards"] == [] and consumes["list_charts"] == ["dashboard"]
