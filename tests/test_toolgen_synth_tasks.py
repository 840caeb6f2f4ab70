"""Tasks of generated domains: walks on the tool graph, run on the simulator, kept only when valid."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import load_domain
from scoring.tasks import Task
from scoring.validation.domains import validate_domains
from scoring.validation.validate import check_loaded_task
from simulator.errors import ToolError
from toolgen.naming import plural_phrase
from toolgen.synth import instructions as say
from toolgen.synth.checks import CHECKS
from toolgen.synth.folder import build_domain, write_folder
from toolgen.synth.lexicon import said_as_a_thing
from toolgen.synth.lookups import World
from toolgen.synth.questions import Asker
from toolgen.synth.run import synthesize_domain
from toolgen.synth.schema import infer_schema
from toolgen.synth.seed import seed_rows
from toolgen.synth.tasks import MAX_TASKS, UNSAID, make_tasks, validate_candidates
from toolgen.synth.tools import compile_tools
from toolgen.synth.walks import Proposer, propose

from .synth_kit import SHOP, WEATHER, make_op, planned, planned_from


def _tasks(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("tasks")
    folders = {}
    for spec in (SHOP, WEATHER):
        plan, ops = planned(spec)
        result = synthesize_domain(plan, ops, out, {}, seed=0)
        assert result.kept, result.reason
        assert 5 <= result.tasks_kept <= MAX_TASKS
        folders[plan.name] = Path(result.folder or "")
    return folders


def test_every_kept_task_is_valid_under_toolgym_validate(generated):
    report = validate_domains(list(generated.values()), reruns=2, workers=1, fuzz=0)
    for domain in report.domains:
        assert len(domain.tasks) >= 5
        bad = [(t.task, t.status, [f.message for f in t.findings]) for t in domain.tasks if not t.valid]
        assert bad == []


def _reads(folder: Path) -> set[str]:
    return {name for name, tool in load_domain(folder).tools.items() if not tool.writes}


def _fed(task: dict[str, Any], reads: set[str], folder: Path) -> bool:
    """Whether a write's argument is a value that an earlier read returned and the instruction does not give."""
    results: list[Any] = []
    with load_domain(folder).episode(seed=0) as ep:
        for c in task["calls"]:
            if c["name"] not in reads:
                for value in c.get("arguments", {}).values():
                    if (
                        isinstance(value, str)
                        and value not in task["instruction"]
                        and any(value in json.dumps(r) for r in results)
                    ):
                        return True
            try:
                results.append(ep.call(c["name"], c.get("arguments", {})))
            except ToolError:  # an expected refusal
                results.append(None)
    return False


def test_a_spread_with_lookups_feeding_writes(generated):
    for folder in generated.values():
        tasks = _tasks(folder)
        kinds = {t["tags"][-1] for t in tasks}
        questions = {"read", "survey", "roundup", "compare", "total"}
        assert "chain" in kinds and kinds & questions and any("tier-0" in t["tags"] for t in tasks), kinds
        reads = _reads(folder)
        chains = [t for t in tasks if len(t["calls"]) >= 2 and _fed(t, reads, folder)]
        assert len(chains) >= 2, [t["instruction"] for t in tasks]  # (questions are the rest)
        for task in tasks:
            if task["tags"][-1] == "read":
                assert task["answer_facts"] and all(c["name"] in reads for c in task["calls"])


def test_instructions_name_no_tool_and_give_no_id_the_agent_must_look_up(generated):
    for folder in generated.values():
        tools = set(load_domain(folder).tools)
        reads = _reads(folder)
        for task in _tasks(folder):
            text = task["instruction"]
            assert not [t for t in tools if t in text], text
            if task["tags"][-1] in ("chain", "double"):
                assert _fed(task, reads, folder), task
                first_read = next(i for i, c in enumerate(task["calls"]) if c["name"] in reads)
                assert first_read == 0 and len(task["calls"]) >= 2


def _world(spec: Path, seed: int, folder: Path) -> tuple[World, Any, Any, Any]:
    return _world_of(*planned(spec), seed, folder)


def _world_of(plan: Any, ops: Any, seed: int, folder: Path) -> tuple[World, Any, Any, Any]:
    schema = infer_schema(plan, ops)
    toolset = compile_tools(schema)
    builder = build_domain(plan, schema, toolset)
    rows = seed_rows(builder.spec().tables, schema.hints(), seed, 20, clock=builder.head["clock"]["start"])
    for table, table_rows in rows.items():
        builder.seed(table, table_rows)
    write_folder(builder, folder, plan, schema, toolset, {}, seed=seed)
    return World(load_domain(folder), schema, toolset, builder.rows), builder, schema, toolset


def test_a_refusal_is_an_expected_error_with_the_current_state_as_answer(tmp_path):
    world, *_ = _world(SHOP, 0, tmp_path / "shop")
    try:
        refusals = [r for seed in range(6) for r in Proposer(world, random.Random(seed)).refusals()]
    finally:
        world.close()
    assert refusals, "the shop's cancel_order refuses a cancelled or delivered order"
    for r in refusals:
        assert r.calls[-1]["expect_error"] is True and not any(c.get("expect_error") for c in r.calls[:-1])
        assert r.answer_facts and r.answer_facts[0] in ("cancelled", "delivered", "shipped", "placed")
        # never asked of a row said to be so already (`cancel the cancelled order`)
        assert "cancelled" not in re.findall(r"[a-z]+", r.instruction.lower())


def test_rejections_are_counted_by_status(tmp_path):
    world, builder, schema, toolset = _world(WEATHER, 1, tmp_path / "weather")
    try:
        candidates = propose(world, random.Random(1))
    finally:
        world.close()
    kept, rejected = make_tasks(builder, tmp_path / "weather", schema, toolset, seed=1)
    assert kept == len(_tasks(tmp_path / "weather")) == len(builder.tasks)
    assert kept + sum(rejected.values()) <= len(candidates)
    assert set(rejected) <= {
        "broken-gold",
        "no-op-passes",
        "weak-verifier",
        "weak-answer",
        "order-sensitive",
        "unreachable-answer",
        "unreachable-fact",
        "flaky",
        "network",
        *(f"instruction: {check}" for check in CHECKS),
    }


@settings(max_examples=3)
@given(seed=st.integers(min_value=0, max_value=2**31))
def test_same_seed_same_tasks(tmp_path_factory, seed):
    texts = []
    for _ in range(2):
        out = tmp_path_factory.mktemp("det")
        plan, ops = planned(WEATHER)
        result = synthesize_domain(plan, ops, out, {}, seed=seed)
        texts.append(
            (
                result.tasks_kept,
                result.tasks_rejected,
                (out / plan.name / "tasks.jsonl").read_bytes() if result.kept else b"",
            )
        )
    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ('a "q"', '"a \\"q\\""'),
        (12.5, "12.5"),
        (3, "3"),
        (True, "true"),
        ({"b": 1, "a": [2]}, '{"a": [2], "b": 1}'),
    ],
)
def test_values_are_written_as_the_agent_must_pass_them(value, text):
    assert say.value_text(value) == text
    assert json.loads(say.value_text(value)) == value


def test_phrases():
    assert (
        say.row_phrase("user_account", "emailAddress", "a@b.c")
        == 'the user account whose email address is "a@b.c"'
    )
    assert say.row_phrase("artist", "artist", "Ada Lovelace") == 'the artist "Ada Lovelace"'
    assert say.row_phrase("dir", "dir_name", "Docs") == 'the directory whose directory name is "Docs"'
    assert say.noun("org_repos") == "organization repositories"  # (short forms said in full)
    assert say.noun("access_point_nfs") == "access point NFS"  # (an acronym in capitals)
    assert say.noun("files_remote") == "remote file" and say.noun("remote") == "remote"
    said = say.create_clause("create", "tax_rate", [], [("inclusive", True), ("is_public", False)])
    assert said == "create a new tax rate with inclusive and not public"  # (no `inclusive true`)
    assert say.noun("adult_content") == "adult content item"  # (no `adult contents`)
    assert say.noun("error_history") == "error history entry"  # (a history is no row: its entries are)
    assert (
        say.field_phrase("amount_total") == "total amount"
        and say.field_phrase("grand_total") == "grand total"
    )
    assert (
        say.field_phrase("email_pending") == "pending email" and say.field_phrase("is_public") == "is public"
    )
    assert plural_phrase(say.noun("nfs")) == "NFS" and plural_phrase(say.noun("vpc")) == "VPCs"
    assert say.row_where("order", [("total", 5)], ['the user whose email is "x"']) == (
        'the order whose total is 5 of the user whose email is "x"'
    )
    assert say.row_where("proxy", [], ["the namespace NAM-1", "the namespace NAM-1"]) == (
        "the proxy of the namespace NAM-1"  # (two parents that are one row)
    )
    employee = 'the employee whose title is "Clerk" of the xero tenant XT-1'
    assert say.row_where("wage", [("status", "Pending")], [employee, "the xero tenant XT-1"]) == (
        f"the pending wage of {employee}"  # (one parent said inside the other)
    )
    assert say.refer_once(f"Delete {say.row_where('wage', [], [employee, 'the xero tenant XT-1'])}.") == (
        f"Delete the wage of {employee}."  # (no `... and that xero tenant`)
    )
    assert say.via_phrase("table_settings", "table", 'the table whose name is "t"') == (
        'the settings of the table whose name is "t"'
    )
    assert say.verb_phrase(("cancel", "order"), "order") == "cancel"
    # a plural before its head is said as a modifier is: `the realm admins`, not `the realms admins`
    assert [say.noun(e) for e in ("realms_admin", "users_profile", "sales_order")] == [
        "realm admin",
        "user profile",
        "sales order",
    ]
    # a noun of no count is counted by what one of it is: `each of the weather records`
    assert [say.noun(e) for e in ("weather", "news", "current_weather")] == [
        "weather record",
        "news item",
        "current weather record",
    ]
    assert say.verb_phrase(("post", "treasury", "payments", "id", "cancel"), "payment") == "cancel"
    assert say.verb_phrase(("apps", "cancel", "job", "invocation"), "job_invocation") == "cancel"
    assert say.verb_phrase(("cancel", "action"), "reader") == "cancel"
    steps = ("post", "test", "helpers", "issuing", "transactions", "refund")
    assert say.verb_phrase(steps, "transaction") == "refund"  # (a namespace of three words, then the verb)
    assert say.verb_phrase(("send", "boxes"), "box") == "send"  # (the entity's plural is the entity)
    assert say.verb_phrase(("sync", "guild", "template"), "template", {"guild"}) == "sync"  # (its owner)
    assert say.verb_phrase(("delete", "specific", "service", "credential"), "service_credential") == "delete"
    # what the verb acts for is no verb: `list`, `customer`
    assert say.verb_phrase(("group", "v2", "approve", "pending", "for", "list"), "group") == "approve pending"
    assert say.verb_phrase(("send", "invoice", "to", "customer"), "invoice") == "send"
    assert say.acting_on("reset database") == "reset the database of"  # (`... of the branch ...`)
    assert [say.acting_on(v) for v in ("cancel", "deny all pending", "mark as read")] == [
        "cancel",
        "deny all pending",
        "mark as read",
    ]
    # a state a verb marks the row with follows the row (not `mark the uncollectible of ...`)
    assert say.clause(*say.marking("mark uncollectible", "the invoice INV-1")) == (
        "mark the invoice INV-1 as uncollectible"
    )
    assert say.clause(*say.marking("mark as read", "the message M-1")) == "mark the message M-1 as read"
    assert (
        say.clause(*say.marking("reset database", "the branch B-1")) == "reset the database of the branch B-1"
    )
    assert say.create_clause("book", "reservation", [], [("seats", 2)]) == "book a reservation with 2 seats"
    assert say.create_clause("create", "namespace", [], [("namespace", "billing-staging"), ("size", 3)]) == (
        'create a new namespace named "billing-staging" with size 3'  # (not `with namespace "..."`)
    )
    assert say.create_clause("bfcl", "thing", [], []) == "create a new thing"
    assert say.rows_phrase("nfs", "", ["NFS-1", "NFS-2"]) == "NFS-1 and NFS-2"  # (no `each of the NFS NFS-1`)
    assert say.create_clause("book", "hotel", [], [("room_type", "premium"), ("nights", 11)]) == (
        'book a hotel with room type "premium" and 11 nights'  # (no `and nights 11`)
    )
    assert say.create_clause("book", "room", [], [("number_nights", 3)]) == "book a room with 3 nights"
    assert say.rows_phrase("vpc", "", ["VPC-1", "VPC-2"]) == "the VPCs VPC-1 and VPC-2"
    assert say.create_clause("add", "paragraph", [], [("filename", "q3.docx"), ("text", "Hi")]) == (
        'add a new paragraph to the file "q3.docx" with text "Hi"'  # (not `with filename "..."`)
    )


def test_a_copied_value_is_said_as_a_person_says_it():
    """A value copied from another row: `to match <row>` in a change, `the same <field> as <row>`
    in a create; a row pointed at is said as itself."""
    copied = say.Said("Lyon", 'the user whose email is "a@b.c"', copy=True)
    assert say.update_clause("the order ORD-1001", [("city", copied)]) == (
        'change the city of the order ORD-1001 to match the user whose email is "a@b.c"'
    )
    assert say.create_clause("create", "order", [], [("city", copied), ("seats", 2)]) == (
        'create a new order with the same city as the user whose email is "a@b.c" and 2 seats'
    )
    pointed = say.Said("USR-1001", 'the user whose email is "a@b.c"')
    assert say.settings_phrase([("owner", pointed)]) == 'its owner to the user whose email is "a@b.c"'


def test_a_read_only_domain_of_bare_lookups_asks_nothing(tmp_path):
    """Reads that only find rows by another row's id (no record schema): the rows hold nothing but
    ids, and no person asks for an id, so there are no questions and the domain is left out."""
    browse = {"browse_id": {"type": "string", "description": "the browse id"}}
    video = {"video_id": {"type": "string", "description": "the video id"}}
    ops = [
        make_op("get_album", "read", browse, ["browse_id"], entity="album"),
        make_op("get_lyrics", "read", browse, ["browse_id"], entity="lyric"),
        make_op("get_song", "read", video, ["video_id"], entity="song"),
        make_op("get_watch_playlist", "read", video, ["video_id"], entity="watch_playlist"),
        make_op("get_song_related", "read", browse, ["browse_id"], entity="song_related"),
    ]
    plan, by_id = planned_from(*ops)
    result = synthesize_domain(plan, by_id, tmp_path, {}, seed=0)
    assert not result.kept and "valid tasks" in (result.reason or "")


def test_a_question_asks_for_a_name_never_an_id(tmp_path):
    """An order's customer is asked for by name, through the customer's getter (`the name of the
    customer of the order ...`); no question's answer is a row's own id."""
    customer = {
        "type": "object",
        "properties": {"customer_id": {"type": "string"}, "name": {"type": "string"}},
    }
    order = {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "customer_id": {"type": "string"}},
    }
    world, *_ = _world_of(
        *planned_from(
            make_op(
                "get_customer",
                "read",
                {"customer_id": {}},
                ["customer_id"],
                entity="customer",
                record_schema=customer,
            ),
            make_op("get_order", "read", {"order_id": {}}, ["order_id"], entity="order", record_schema=order),
            make_op(
                "list_orders",
                "read",
                {"customer_id": {}},
                ["customer_id"],
                entity="order",
                record_schema=order,
            ),
        ),
        0,
        tmp_path / "shop",
    )
    try:
        reads = Asker(world, random.Random(0)).reads()
        ids = {
            str(r[t.primary_key]) for t in world.schema.tables.values() for r in world.rows.get(t.name, [])
        }
        assert reads and not [c.instruction for c in reads if {str(f) for f in c.answer_facts} & ids]
        followed = [c for c in reads if "of the customer of the order" in c.instruction]
        assert followed
        for c in followed:
            assert [call["name"] for call in c.calls] == ["get_order", "get_customer"]
            names = {r["name"] for r in world.rows["customers"]}
            assert c.answer_facts[0] in names and c.instruction.startswith(("What", "Tell", "Look"))
    finally:
        world.close()


def test_required_arguments_with_one_value_are_always_given(tmp_path):
    """Query-style APIs (`Action: {enum: [CreateGroup]}` on every operation): the one value is
    passed in every gold call, and the domain still gets chains and reads."""

    def op(name: str, kind: str, props: dict[str, Any], required: list[str]) -> Any:
        fixed = {
            "Action": {"type": "string", "enum": [name]},
            "Version": {"type": "string", "const": "2010-05-08"},
        }
        said = f"{name}: works on a group."  # (the spec says the thing its rows are)
        return make_op(
            name, kind, {**fixed, **props}, ["Action", "Version", *required], entity="group", description=said
        )

    name = {"GroupName": {"type": "string", "description": "the group's name"}}
    ops = [
        op("CreateGroup", "create", {**name, "Path": {"type": "string"}}, ["GroupName"]),
        op("GetGroup", "read", name, ["GroupName"]),
        op("ListGroups", "read", {"PathPrefix": {"type": "string"}}, []),
        op("UpdateGroup", "update", {**name, "NewPath": {"type": "string"}}, ["GroupName"]),
        op("DeleteGroup", "delete", name, ["GroupName"]),
    ]
    plan, by_id = planned_from(*ops)
    result = synthesize_domain(plan, by_id, tmp_path, {}, seed=0)
    assert result.kept, result.reason
    tasks = _tasks(Path(result.folder or ""))
    calls = [c for t in tasks for c in t["calls"]]
    assert calls and all(c["arguments"]["Action"] == c["name"] for c in calls)
    assert all(c["arguments"]["Version"] == "2010-05-08" for c in calls)


def test_writes_set_only_what_is_checked(tmp_path):
    """An optional argument is set only when the tool writes it somewhere (else no check sees it)."""
    world, *_ = _world(SHOP, 0, tmp_path / "shop")
    try:
        proposer = Proposer(world, random.Random(5))
        made = proposer.followups() + proposer.singles() + proposer.chains()
    finally:
        world.close()
    domain = world.domain
    assert made
    for c in [c for t in made for c in t.calls]:
        tool = domain.tools[c["name"]]
        required = set(tool.spec.input_schema.get("required") or [])
        assert set(c["arguments"]) - required <= tool.arguments_read


def test_a_write_that_finds_its_row_by_its_parent_gets_tasks(tmp_path):
    """A sub-resource write (`replace_deployment_status(deployment_id, ...)`, no key of its own)
    takes the row its parent has: the task names it through the parent (`the status of the
    deployment whose name is ...`), the parent found by a lookup."""
    dep = {"deployment_id": {"type": "string", "description": "the deployment"}}
    phase = {
        "phase": {"type": "string", "enum": ["pending", "running", "failed"]},
        "message": {"type": "string"},
    }
    name = {"name": {"type": "string", "description": "the deployment's name"}}
    ops = [
        make_op(
            "create_deployment",
            "create",
            {**name, "replicas": {"type": "integer"}},
            ["name"],
            entity="deployment",
        ),
        make_op("list_deployments", "read", name, [], entity="deployment"),
        make_op("get_deployment", "read", dep, ["deployment_id"], entity="deployment"),
        make_op(
            "replace_deployment_status",
            "update",
            {**dep, **phase},
            ["deployment_id"],
            entity="status",
            description="Replace the status of a deployment.",
        ),
        make_op(
            "read_deployment_status",
            "read",
            dep,
            ["deployment_id"],
            entity="status",
            description="Read the status of a deployment.",
        ),
    ]
    plan, by_id = planned_from(*ops)
    result = synthesize_domain(plan, by_id, tmp_path, {}, seed=0)
    assert result.kept, result.reason
    status = [
        t for t in _tasks(Path(result.folder or "")) if t["calls"][-1]["name"] == "replace_deployment_status"
    ]
    assert status
    for task in status:
        assert "the status of the deployment whose name is" in task["instruction"]
        assert task["calls"][0]["name"] == "list_deployments"
        assert task["calls"][-1]["arguments"]["deployment_id"] not in task["instruction"]


def test_a_followup_acts_on_the_row_its_create_made(tmp_path):
    """`create a new order ..., then cancel the new order`: the second write names the new row by
    the create's result (`$calls.N.<key>`), so it runs under any seed and in one order only."""
    world, *_ = _world(SHOP, 0, tmp_path / "shop")
    try:
        followups = Proposer(world, random.Random(2)).followups()
    finally:
        world.close()
    assert followups
    for f in followups:
        names = [c["name"] for c in f.calls]
        at = next(i for i, n in enumerate(names) if world.domain.tools[n].writes)
        refs = [
            v for v in f.calls[-1]["arguments"].values() if isinstance(v, str) and v.startswith("$calls.")
        ]
        assert refs and refs[0].startswith(f"$calls.{at}.") and len(f.calls) >= 3
        assert "the new " in f.instruction
    verdicts = [
        check_loaded_task(world.domain, Task.model_validate({"id": f"f{i}", **_task_fields(f)}))
        for i, f in enumerate(followups)
    ]
    assert any(v.valid for v in verdicts), [(v.status, [x.message for x in v.findings]) for v in verdicts]


def _task_fields(c: Any) -> dict[str, Any]:
    return {"instruction": c.instruction, "calls": c.calls, "answer_facts": c.answer_facts}


def _records(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value, *[r for v in value.values() for r in _records(v)]]
    if isinstance(value, list):
        return [r for v in value for r in _records(v)]
    return []


def test_a_comparison_reads_every_row_it_names_and_answers_the_extreme(tmp_path):
    """`Of the stations whose name is "A", "B" or "C", which has the highest elevation?`: only reads,
    each named row among what they return, and the fact is the extreme of the named rows' values."""
    compared = []
    for seed in range(3):
        world, *_ = _world(WEATHER, seed, tmp_path / f"weather{seed}")
        try:
            compared += [(world.domain, c) for c in Proposer(world, random.Random(seed)).compares(4)]
        finally:
            world.close()
    assert compared, "the weather stations have names and elevations"
    for domain, c in compared:
        assert c.kind == "compare" and len(c.answer_facts) == 1
        named = set(re.findall(r'"([^"]+)"', c.instruction))
        m = re.search(r"(highest|lowest) ([a-z ]+?)(?:,| among| of them)", c.instruction)
        assert m is not None and len(named) >= 3, c.instruction
        column = m[2].replace(" ", "_")
        with domain.episode(seed=0) as ep:
            results = [ep.call(x["name"], x.get("arguments", {})) for x in c.calls]
        assert all(not domain.tools[x["name"]].writes for x in c.calls)
        rows = {
            r[column]: r
            for res in results
            for r in _records(res)
            if column in r and named & set(map(str, r.values()))
        }
        assert len(rows) == len(named), (c.instruction, rows)
        assert c.answer_facts[0] == (max if m[1] == "highest" else min)(rows)
        kept, _ = validate_candidates(domain, [c])
        assert kept, c.instruction


def test_a_total_reads_every_row_it_names_and_answers_their_sum(tmp_path):
    """`What is the total total of the orders ORD-1, ..., ORD-6?`: only reads, each named row read
    once, the fact the sum of the named rows' values; it validates. A measure that does not add
    up (the weather stations' elevation) gets no total."""
    found = 0
    for seed in range(3):
        world, *_ = _world(SHOP, seed, tmp_path / f"shop{seed}")
        try:
            totals = Proposer(world, random.Random(seed)).totals(4)
            orders = list(world.rows["orders"])
        finally:
            world.close()
        for c in totals:
            assert c.kind == "total" and ("total" in c.instruction or "combined" in c.instruction)
            assert all(not world.domain.tools[x["name"]].writes for x in c.calls)
            named = [o for o in orders if re.search(rf"\b{re.escape(str(o['id']))}\b", c.instruction)]
            assert len(named) >= 3, c.instruction
            assert c.answer_facts == [pytest.approx(sum(o["total"] for o in named), abs=0.01)]
            kept, _ = validate_candidates(world.domain, [c])
            assert kept, c.instruction
            found += 1
    assert found
    world, *_ = _world(WEATHER, 0, tmp_path / "weather")
    try:
        assert not Proposer(world, random.Random(0)).totals(4)
    finally:
        world.close()


def test_a_survey_asks_the_same_values_of_each_row_in_one_sentence(tmp_path):
    """A survey asks one or two values of 3-12 rows of one table, named alike (by a field, or by
    their ids), in one sentence; each row is found by its own calls and every value is a fact."""
    surveyed = valid = 0
    for seed in range(4):
        world, *_ = _world(SHOP, seed, tmp_path / f"shop{seed}")
        try:
            surveys = Proposer(world, random.Random(seed)).surveys(8)
            kept, _ = validate_candidates(world.domain, surveys)
        finally:
            world.close()
        valid += len(kept)
        for s in surveys:
            assert s.kind == "survey" and not re.search(r"[.?] [A-Z]", s.instruction)  # one sentence
            m = re.match(r"(?:What (?:is|are)|Tell me|Look up) the (.+?) of each of the ", s.instruction)
            assert m is not None, s.instruction
            width = 2 if " and the " in m[1] else 1
            named = re.findall(r'"[^"]+"|\b[A-Z]{2,4}-\d+\b', s.instruction[m.end() :])
            assert 3 <= len(named) <= 12 and len(s.answer_facts) == width * len(named), s.instruction
            assert len(s.calls) >= len(named)  # (each row found alone)
            surveyed += 1
    assert surveyed and valid


def test_a_survey_asks_only_rows_that_hold_the_value_and_no_more_rows_than_other_values(tmp_path):
    """A field some rows leave empty (a member's `plan`) is asked of the rows that hold it; a
    survey names fewer rows than the other values its fields hold, so that an answer listing
    every candidate fails: each survey validates, with no empty fact."""
    record = {
        "type": "object",
        "properties": {
            "member_id": {"type": "string"},
            "name": {"type": "string"},
            "plan": {"type": "string", "enum": ["free", "pro", "team", "enterprise"], "nullable": True},
        },
    }
    asked: set[str] = set()
    for seed in range(3):
        world, *_ = _world_of(
            *planned_from(
                make_op(
                    "get_member",
                    "read",
                    {"member_id": {"type": "string"}},
                    ["member_id"],
                    entity="member",
                    record_schema=record,
                ),
                make_op(
                    "list_members",
                    "read",
                    {"name": {"type": "string"}},
                    entity="member",
                    record_schema=record,
                ),
            ),
            seed,
            tmp_path / f"club{seed}",
        )
        try:
            surveys = Proposer(world, random.Random(seed)).surveys(8)
            kept, rejected = validate_candidates(world.domain, surveys)
        finally:
            world.close()
        assert len(kept) == len(surveys), rejected
        for s in surveys:
            assert None not in s.answer_facts, s.instruction
            asked.update(f for f in ("name", "plan") if f"the {f}" in s.instruction)
    assert asked == {"name", "plan"}


def test_a_row_is_named_only_by_what_a_person_names_it_by(tmp_path):
    """An earning has no name, title, email or code: it is not named by its `symb` or its `kind`
    (a person does not know those), only found another way or by its id."""
    props = {"earning_id": {"type": "string"}, "symb": {"type": "string"}, "kind": {"type": "string"}}
    record = {"type": "object", "properties": {**props, "amount": {"type": "number"}}}
    key = {"earning_id": {"type": "string"}}
    world, *_ = _world_of(
        *planned_from(
            make_op("get_earning", "read", key, ["earning_id"], entity="earning", record_schema=record),
            make_op(
                "list_earnings", "read", {"symb": {"type": "string"}}, entity="earning", record_schema=record
            ),
        ),
        0,
        tmp_path / "pay",
    )
    try:
        table = world.schema.tables["earnings"]
        for row in world.rows["earnings"][:5]:
            ref = world.by_handle(table, row)
            assert ref is None or not re.search(r"whose (symb|kind)", ref.phrase), ref.phrase
    finally:
        world.close()


def test_a_listing_s_required_inputs_name_no_row(tmp_path):
    """`list_differences(place1, place2)` takes a request's inputs: a difference is not `the
    difference whose place1 is "PLA-1" and place2 is "PLA-2"`; a required state (an enum) may
    name rows, with a name that tells them apart."""
    props = {"difference_id": {"type": "string"}, "place1": {"type": "string"}, "place2": {"type": "string"}}
    record = {"type": "object", "properties": {**props, "hours": {"type": "number"}}}
    places = {"place1": {"type": "string"}, "place2": {"type": "string"}}
    state = {"type": "string", "enum": ["open", "closed"]}
    ticket = {
        "type": "object",
        "properties": {"ticket_id": {"type": "string"}, "title": {"type": "string"}, "state": state},
    }
    world, *_ = _world_of(
        *planned_from(
            make_op(
                "list_differences",
                "read",
                places,
                ["place1", "place2"],
                entity="difference",
                record_schema=record,
            ),
            make_op(
                "list_tickets", "read", {"state": state}, ["state"], entity="ticket", record_schema=ticket
            ),
        ),
        0,
        tmp_path / "t",
    )
    try:
        table = world.schema.tables["differences"]
        assert all(world.by_filters(table, row) is None for row in world.rows["differences"])
        tickets = world.schema.tables["tickets"]
        named = [world.by_filters(tickets, row) for row in world.rows["tickets"]]
        assert any(ref is not None for ref in named)
        for ref in named:
            assert ref is None or re.fullmatch(
                r'the ticket whose state is "\w+"( and title is ".+")?', ref.phrase
            ), ref
    finally:
        world.close()


def test_a_field_holding_stand_in_codes_is_never_written(tmp_path):
    """A field nothing describes is seeded with codes (`ZOR-40213`): no person would write one, so
    no task sets it, nor one the server sets ("Cannot be updated"); the fields a person knows
    still get writes."""
    key = {"widget_id": {"type": "string"}}
    fields = {
        "name": {"type": "string", "description": "the widget's name"},
        "zorp": {"type": "string"},
        "kind": {"type": "string", "enum": ["Widget", "Gadget"], "description": "Kind. Cannot be updated."},
    }
    ops = [
        make_op("create_widget", "create", fields, ["name"]),
        make_op("list_widgets", "read", {"name": fields["name"]}),
        make_op("get_widget", "read", key, ["widget_id"]),
        make_op("update_widget", "update", {**key, **fields}, ["widget_id"]),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "widgets")
    try:
        table = world.schema.tables["widgets"]
        assert world.placeholder(table, "zorp") and not world.placeholder(table, "name")
        proposer = Proposer(world, random.Random(1))
        written = [c for t in proposer.singles() + proposer.followups() for c in t.calls]
    finally:
        world.close()
    assert any("name" in c["arguments"] for c in written if c["name"] != "list_widgets")
    assert not any("zorp" in c["arguments"] for c in written)
    assert not any("kind" in c["arguments"] for c in written)  # (the server sets it)


def _widget_world(tmp_path: Path, seed: int) -> World:
    key = {"widget_id": {"type": "string"}}
    name = {"name": {"type": "string", "description": "the widget's name"}}
    color = {"color": {"type": "string", "enum": ["red", "green", "blue"]}}
    size = {"size": {"type": "integer", "minimum": 1, "maximum": 90}}
    ops = [
        make_op("create_widget", "create", {**name, **color, **size}, ["name"]),
        make_op("list_widgets", "read", name),
        make_op("get_widget", "read", key, ["widget_id"]),
        make_op("delete_widget", "delete", key, ["widget_id"]),
        make_op("update_widget", "update", {**key, **color, **size}, ["widget_id"]),
    ]
    world, *_ = _world_of(*planned_from(*ops), seed, tmp_path / f"widgets{seed}")
    return world


def test_changes_give_one_field_of_several_rows_each_its_own_value(tmp_path):
    """`Please change the size of these widgets: "A" to 3, "B" to 7 ...`: one update tool, one
    field, each row written once with a value the instruction states; rows named by name are
    not said to be (`these widgets, named by name`)."""
    from toolgen.synth.errands import changes

    found = 0
    for seed in range(3):
        world = _widget_world(tmp_path, seed)
        try:
            made = changes(Proposer(world, random.Random(seed)), 4)
        finally:
            world.close()
        for c in made:
            writes = [x for x in c.calls if world.domain.tools[x["name"]].writes]
            assert {x["name"] for x in writes} == {"update_widget"}, c.instruction
            fields = {k for x in writes for k in x["arguments"] if k != "widget_id"}
            assert len(fields) == 1 and len(writes) >= 4, c.instruction
            rows = [x["arguments"]["widget_id"] for x in writes]
            assert len(set(rows)) == len(rows)
            (field,) = fields
            assert "named by" not in c.instruction and "by name" not in c.instruction, c.instruction
            for x in writes:
                assert f"to {say.value_text(x['arguments'][field])}" in c.instruction
            found += 1
    assert found


def test_no_request_types_out_a_file_s_body(tmp_path):
    """An attachment's `body` is bytes: no task writes one or asks for one; its file name and
    note still are."""
    key = {"attachment_id": {"type": "string"}}
    fields = {"file_name": {"type": "string"}, "note": {"type": "string"}, "body": {"type": "string"}}
    ops = [
        make_op("create_attachment", "create", fields, ["file_name"], entity="attachment"),
        make_op("list_attachments", "read", {"file_name": {"type": "string"}}, entity="attachment"),
        make_op("get_attachment", "read", key, ["attachment_id"], entity="attachment"),
        make_op(
            "update_attachment", "update", {**key, **fields}, ["attachment_id", "body"], entity="attachment"
        ),
    ]
    said: set[str] = set()
    texts: list[str] = []
    for seed in range(3):
        world, *_ = _world_of(*planned_from(*ops), seed, tmp_path / f"attachments{seed}")
        try:
            made = propose(world, random.Random(seed))
        finally:
            world.close()
        said |= {k for c in made for x in c.calls if x["name"] != "list_attachments" for k in x["arguments"]}
        texts += [c.instruction for c in made]
    assert texts and "note" in said and "body" not in said, said
    assert not any("body" in t for t in texts), [t for t in texts if "body" in t]


def test_changes_never_set_a_state_to_a_number(tmp_path):
    """`the status of these contacts: ... to 367`: a number for a status is a code nothing
    explains, so no request sets one; the contacts' cities still change."""
    from toolgen.synth.errands import changes

    key = {"contact_id": {"type": "string"}}
    fields = {"name": {"type": "string"}, "city": {"type": "string"}, "status": {"type": "integer"}}
    ops = [
        make_op("create_contact", "create", fields, ["name"], entity="contact"),
        make_op("list_contacts", "read", {"name": {"type": "string"}}, entity="contact"),
        make_op("get_contact", "read", key, ["contact_id"], entity="contact"),
        make_op("update_contact", "update", {**key, **fields}, ["contact_id"], entity="contact"),
    ]
    said: set[str] = set()
    for seed in range(6):
        world, *_ = _world_of(*planned_from(*ops), seed, tmp_path / f"contacts{seed}")
        try:
            made = changes(Proposer(world, random.Random(seed)), 4)
        finally:
            world.close()
        said |= {k for c in made for x in c.calls if x["name"] == "update_contact" for k in x["arguments"]}
    assert "city" in said and "status" not in said, said


def test_a_sweep_writes_exactly_the_listed_rows_that_pass_its_test(tmp_path):
    """`Of the widgets whose names are ..., delete the ones with color "red"`: every listed row
    is read; the rows that pass the test are written, and at least two that fail are left."""
    from toolgen.synth.errands import sweeps

    test = re.compile(
        r'the ones (?:with color "(?P<color>\w+)"|whose size is (?P<how>more|less) than (?P<n>[0-9.]+))'
    )
    found = 0
    for seed in range(4):
        world = _widget_world(tmp_path, seed)
        try:
            made = sweeps(Proposer(world, random.Random(seed)), 6)
            rows = {r["widget_id"]: r for r in world.rows["widgets"]}
        finally:
            world.close()
        for c in made:
            m = test.search(c.instruction)
            assert m, c.instruction

            def passes(row: dict[str, Any], m: re.Match[str] = m) -> bool:
                if m["color"]:
                    return bool(row["color"] == m["color"])
                bound = float(m["n"])
                return bool(row["size"] > bound if m["how"] == "more" else row["size"] < bound)

            written = {x["arguments"]["widget_id"] for x in c.calls if world.domain.tools[x["name"]].writes}
            listed = {r for r in rows if f'"{rows[r]["name"]}"' in c.instruction or r in c.instruction}
            assert written <= listed
            assert written == {r for r in listed if passes(rows[r])}, c.instruction
            assert len(written) >= 2 and len(listed - written) >= 2
            found += 1
    assert found


def test_the_rows_a_bulk_request_picks_are_never_named_by_the_tool_s_own_words(tmp_path):
    """`delete_red_widget` on every widget `with color "red"` says red twice (Bungie's `deny
    pending for every group with member status "pending"`): another value picks the rows."""
    from toolgen.synth.errands import everys, sweeps

    key = {"widget_id": {"type": "string"}}
    name = {"name": {"type": "string", "description": "the widget's name"}}
    color = {"color": {"type": "string", "enum": ["red", "green", "blue"]}}
    ops = [
        make_op("create_widget", "create", {**name, **color}, ["name"]),
        make_op("list_widgets", "read", {**name, **color}),
        make_op("get_widget", "read", key, ["widget_id"]),
        make_op("delete_red_widget", "delete", key, ["widget_id"]),
    ]
    made = []
    for seed in range(6):
        world, *_ = _world_of(*planned_from(*ops), seed, tmp_path / f"w{seed}")
        try:
            made += everys(Proposer(world, random.Random(seed)), 4)
            made += sweeps(Proposer(world, random.Random(seed)), 4)
        finally:
            world.close()
    conditioned = [c.instruction for c in made if "with color" in c.instruction]
    assert conditioned and not [i for i in conditioned if 'color "red"' in i], conditioned


def _asked(ops: list[Any], folder: Path, table: str, column: str) -> list[str]:
    """The reads and surveys proposed over three seeds; `column` of `table` is made first."""
    asked: list[str] = []
    for seed in range(3):
        world, *_ = _world_of(*planned_from(*ops), seed, folder / f"{table}{seed}")
        try:
            assert column in world.schema.tables[table].columns
            p = Proposer(world, random.Random(seed))
            asked += [c.instruction for c in p.reads() + p.surveys(8)]
        finally:
            world.close()
    return asked


def _proposed(ops: list[Any], folder: Path) -> list[Any]:
    """Every candidate proposed over three seeds."""
    made: list[Any] = []
    for seed in range(3):
        world, *_ = _world_of(*planned_from(*ops), seed, folder / f"d{seed}")
        try:
            made += propose(world, random.Random(seed))
        finally:
            world.close()
    return made


def _get_and_list(entity: str, plural: str, record: dict[str, Any], by: str) -> list[Any]:
    """A getter of `entity` by its `<entity>_id` and a listing filtered by `by`, both answering `record`."""
    key = {f"{entity}_id": {"type": "string"}}
    return [
        make_op(f"get_{entity}", "read", key, list(key), entity=entity, record_schema=record),
        make_op(f"list_{plural}", "read", {by: {"type": "string"}}, entity=entity, record_schema=record),
    ]


def test_questions_never_ask_a_copy_of_a_fact_of_the_row_a_record_belongs_to(tmp_path):
    """A forecast's `city_name` copies its city's name: `the city name of the forecast ... of
    the city whose name is ...` asks what the request says; its own fields are asked."""
    forecast = {
        "type": "object",
        "properties": {
            "forecast_id": {"type": "string"},
            "city_id": {"type": "string"},
            "city_name": {"type": "string"},
            "summary": {"type": "string", "description": "what the day will be like"},
            "high": {"type": "number", "minimum": -20, "maximum": 45},
        },
    }
    city = {"type": "object", "properties": {"city_id": {"type": "string"}, "name": {"type": "string"}}}
    ops = [
        *_get_and_list("city", "cities", city, "name"),
        *_get_and_list("forecast", "forecasts", forecast, "city_id"),
    ]
    asked = _asked(ops, tmp_path, "forecasts", "city_name")
    forecasts = [text for text in asked if "forecast" in text]
    assert forecasts and not [text for text in forecasts if "city name" in text], forecasts


def test_questions_never_ask_a_name_another_field_spells_out(tmp_path):
    """A library with `library_name` and `name`: `the name of each of the libraries whose library
    names are ...` asks what the request says; the other fields are asked."""
    library = {
        "type": "object",
        "properties": {
            "library_id": {"type": "string"},
            "library_name": {"type": "string"},
            "name": {"type": "string"},
            "description": {"type": "string", "description": "what the library holds"},
            "version": {"type": "integer", "minimum": 1, "maximum": 40},
        },
    }
    asked = _asked(
        _get_and_list("library", "libraries", library, "library_name"), tmp_path, "libraries", "library_name"
    )
    assert asked and not [text for text in asked if re.search(r"\bthe name\b", text)], asked


def test_questions_ask_for_the_records_fields_not_a_reads_arguments(tmp_path):
    """A column only a read's argument made (`top_k` of a search) is no answer a person wants:
    when the API answers with a record, questions ask for its fields, and never a credential nor a
    label the server stamps (`etag`, "Read-only"), nor a field the spec calls deprecated."""
    record = {
        "type": "object",
        "properties": {
            "widget_id": {"type": "string"},
            "name": {"type": "string", "description": "the widget's name"},
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "weight": {"type": "number", "minimum": 1, "maximum": 90},
            "password": {"type": "string", "description": "the widget's admin password"},
            "etag": {"type": "string", "description": "Opaque version tag. Read-only."},
            "series_count": {"type": "integer", "description": "Deprecated field, kept for old clients."},
        },
    }
    key = {"widget_id": {"type": "string"}}
    ops = [
        make_op("get_widget", "read", key, ["widget_id"], record_schema=record),
        make_op(
            "search_widgets",
            "read",
            {"name": {"type": "string"}, "top_k": {"type": "integer", "minimum": 1, "maximum": 50}},
            record_schema=record,
        ),
    ]
    asked = _asked(ops, tmp_path, "widgets", "top_k")
    unasked = ("top k", "password", "etag", "series count")
    assert asked and not any(w in text for text in asked for w in unasked)


def _instructions_of(ops: list[Any], tmp_path: Path, seeds: int) -> list[str]:
    """The instructions of the single, follow-up and read candidates of `ops`' domain, over seeds."""
    said = []
    for seed in range(seeds):
        world, *_ = _world_of(*planned_from(*ops), seed, tmp_path / f"s{seed}")
        try:
            p = Proposer(world, random.Random(seed))
            said += [c.instruction for c in p.singles() + p.followups() + p.reads()]
        finally:
            world.close()
    return said


def test_a_row_is_not_named_only_by_its_parent_unless_it_is_the_parents_only_one(tmp_path):
    """`the role of the namespace NAM-1017` reads as that namespace's only role: a row with no
    value a person knows of its own is not named through its parent alone."""
    ns = {"namespace_id": {"type": "string", "description": "the namespace"}}
    role = {"role_id": {"type": "string", "description": "the role"}}
    ops = [
        make_op("create_namespace", "create", {"name": {"type": "string"}}, ["name"], entity="namespace"),
        make_op("list_namespaces", "read", {"name": {"type": "string"}}, entity="namespace"),
        make_op(
            "create_role", "create", {**ns, "rules": {"type": "object"}}, ["namespace_id"], entity="role"
        ),
        make_op("list_roles", "read", ns, ["namespace_id"], entity="role"),
        make_op("delete_role", "delete", {**ns, **role}, ["namespace_id", "role_id"], entity="role"),
    ]
    said = _instructions_of(ops, tmp_path, seeds=3)
    assert said and not [s for s in said if re.search(r"the roles? of the namespace", s)]


def test_a_row_is_not_named_through_two_parents_said_by_their_ids(tmp_path):
    """`the exception EXC-3 of the guild GUI-7 and the event EV-5` is a riddle: a row whose
    tools need two parents' ids is not named through both by id."""
    guild = {"guild_id": {"type": "string", "description": "the guild"}}
    event = {"event_id": {"type": "string", "description": "the event"}}
    exc = {"exception_id": {"type": "string", "description": "the exception"}}
    end = {"end_time": {"type": "string", "format": "date-time"}}
    both = ["guild_id", "event_id"]
    ops = [
        make_op("create_guild", "create", {"name": {"type": "string"}}, ["name"], entity="guild"),
        make_op(
            "create_event", "create", {**guild, "name": {"type": "string"}}, ["guild_id"], entity="event"
        ),
        make_op("list_events", "read", guild, ["guild_id"], entity="event"),
        make_op("create_exception", "create", {**guild, **event, **end}, both, entity="exception"),
        make_op("list_exceptions", "read", {**guild, **event}, both, entity="exception"),
        make_op(
            "update_exception",
            "update",
            {**guild, **event, **exc, **end},
            [*both, "exception_id"],
            entity="exception",
        ),
        make_op(
            "delete_exception",
            "delete",
            {**guild, **event, **exc},
            [*both, "exception_id"],
            entity="exception",
        ),
    ]
    said = _instructions_of(ops, tmp_path, seeds=4)
    riddle = re.compile(r"of the \w+ [A-Z]+-\d+ and the \w+ [A-Z]+-\d+")
    assert said and not [s for s in said if riddle.search(s)]


def test_questions_ask_only_fields_a_person_names():
    """`the unit price`, `the due date`, an email: yes; `throttle seconds`, `object`, a bare `type`,
    a hash or a stamp (`last modified`): no person asks for those."""
    from toolgen.synth.schema import ColumnPlan

    assert all(ColumnPlan(n, "string").plain for n in ("unit_price", "dueDate", "homeCity", "status"))
    assert ColumnPlan("contact", "string", hint={"format": "email"}).plain
    named = (
        "throttleSeconds",
        "object",
        "type",
        "auth_session_id_hash",
        "last_modified",
        "created_at",
        "show_title",
    )
    named += (
        "access_code_lifespan_user_action",
        "count",
        "value",
        "forUsername",
        "for_handle",
        "alwaysIncludeEmail",
        "new_text",
        "this_url",
    )
    assert not any(ColumnPlan(n, "string").plain for n in named)
    assert ColumnPlan("last_modified", "string").machine and not ColumnPlan("path", "string").machine


def test_a_list_of_plain_values_is_said_as_a_list():
    assert say.value_text(["red", "blue", 3]) == '"red", "blue" and 3'
    assert say.value_text([{"op": "remove"}]) == '[{"op": "remove"}]'  # (which the checks reject)


def test_names_are_said_as_the_domain_writes_them() -> None:
    """`SCU`, `DICOM`: the way the spec's own descriptions write them; words also written in
    lower case, function words and quoted values stay as they are."""
    names = say.capitals(
        [
            "add a new SCU for sending DICOM images; see the URL",
            "Returns ALL SCPs. NOTE: the url must be https; the ID of the SCU",
            "list all of them",
            "AUDIT - Get Audit Info",  # (a heading's capitals: `audit` is a word here)
        ]
    )
    assert names == {
        "dicom": "DICOM",
        "dicoms": "DICOMs",
        "scp": "SCP",
        "scps": "SCPs",
        "scu": "SCU",
        "scus": "SCUs",
    }
    text = 'Please send the dicom images of the scu whose name is "scu one" to all scps and check the url.'
    assert say.as_written(text, names) == (
        'Please send the DICOM images of the SCU whose name is "scu one" to all SCPs and check the url.'
    )
    assert say.as_written(text, {}) == text
    texts = ["Invoice Items are the lines of an invoice.", "Each user has a name."]
    assert say.compounds(["watch objects of kind ReplicationController"], ["replicationcontrollers"]) == {
        "replicationcontroller": "replication controller",
        "replicationcontrollers": "replication controllers",
    }
    joined = say.compounds(texts, ["invoiceitems", "usernames", "webhooks"])
    assert joined == {"invoiceitem": "invoice item", "invoiceitems": "invoice items"}  # (not `user name`)
    assert say.as_written("Delete the invoiceitem II-1.", joined) == "Delete the invoice item II-1."


def test_a_computation_is_no_record_a_person_creates(tmp_path):
    """`patient_bmi_calculate` compiled as a create reads `Calculate a new patient with ...`: no task
    creates a row through an operation that computes."""
    height = {"height": {"type": "number", "minimum": 1, "maximum": 3}}
    weight = {"weight": {"type": "number", "minimum": 1, "maximum": 300}}
    name = {"name": {"type": "string", "description": "the patient's name"}}
    ops = [
        make_op(
            "patient_bmi_calculate", "create", {**height, **weight}, ["height", "weight"], entity="patient"
        ),
        make_op("add_patient", "create", {**name, **weight}, ["name"], entity="patient"),
        make_op("list_patients", "read", name, entity="patient"),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "bmi")
    try:
        p = Proposer(world, random.Random(0))
        made = [c for _ in range(4) for c in p.singles()]
    finally:
        world.close()
    names = {c["name"] for m in made for c in m.calls}
    assert "add_patient" in names and "patient_bmi_calculate" not in names


def test_a_create_is_said_only_of_an_operation_that_makes_a_record():
    """`book`, `add`, a bare noun (`products`): a record a person asks for; `sort_array` or
    `t_test` compiled as a create would read `create a new array`: no such task."""
    assert all(say.creates(v) for v in ("book", "add", "send", "products", "create"))
    assert not any(say.creates(v) for v in ("sort", "test", "clone"))


def test_a_flag_is_no_field_a_request_names():
    from toolgen.synth.schema import ColumnPlan

    assert all(ColumnPlan(n, "boolean").flag for n in ("allow_cvas", "is_enabled", "show_title"))
    assert not ColumnPlan("display_name", "string").flag


def test_only_a_field_rows_share_is_copied_from_another_row(tmp_path):
    """`to match the customer whose name is ...` for a city; never a copied code or amount (`the
    same registration code as the reader ...`)."""
    key = {"customer_id": {"type": "string"}}
    name = {"name": {"type": "string", "description": "the customer's full name"}}
    city = {"city": {"type": "string", "description": "the city the customer lives in"}}
    code = {"registration_code": {"type": "string", "description": "the customer's registration code"}}
    ops = [
        make_op("create_customer", "create", {**name, **city, **code}, ["name"], entity="customer"),
        make_op("list_customers", "read", name, entity="customer"),
        make_op("get_customer", "read", key, ["customer_id"], entity="customer"),
        make_op("update_customer", "update", {**key, **city, **code}, ["customer_id"], entity="customer"),
    ]
    fields = []
    for seed in range(3):
        world, *_ = _world_of(*planned_from(*ops), seed, tmp_path / f"customers{seed}")
        try:
            p = Proposer(world, random.Random(seed))
            for tool in p.writes():
                for _ in range(4):
                    made = p.one_write(tool, lookup=True, long=True)
                    text = made.text if made is not None else ""
                    fields += re.findall(
                        r"the same ([a-z ]+?) as|(?:change|and) the ([a-z ]+?) (?:of .* )?to match", text
                    )
        finally:
            world.close()
    said = [a or b for a, b in fields]
    assert "city" in said and "registration code" not in said, said


def test_a_thing_no_tool_names_gets_no_task(tmp_path):
    """A table named after an operation (`bypostcodes`, from `getByPostcode`) is nothing a user
    of the API names: no tool says its name, and no task asks or writes about it."""
    key = {"code_id": {"type": "string"}}
    name = {"name": {"type": "string", "description": "the name"}}
    area = {"area": {"type": "string", "description": "the area it covers"}}
    ops = [
        make_op("lookup", "create", {**name, **area}, ["name"], entity="bypostcode"),
        make_op("find", "read", name, entity="bypostcode"),
        make_op("fetch", "read", key, ["code_id"], entity="bypostcode"),
        make_op("create_widget", "create", name, ["name"]),
        make_op("list_widgets", "read", name),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "codes")
    try:
        assert [t.name for t in world.unsaid()] == ["bypostcodes"]
        made = propose(world, random.Random(0))
    finally:
        world.close()
    assert made and not [c.instruction for c in made if "bypostcode" in c.instruction.lower()]


def test_a_new_record_is_not_created_in_a_state_it_was_not_asked_for(tmp_path):
    """A new calendar event starts as the API starts it: no one asks to create an event `with
    status "cancelled"` when the status is optional."""
    key = {"event_id": {"type": "string"}}
    fields = {
        "summary": {"type": "string"},
        "location": {"type": "string"},
        "status": {"type": "string", "enum": ["confirmed", "tentative", "cancelled"]},
    }
    ops = [
        make_op("create_event", "create", fields, ["summary"], entity="event"),
        make_op("get_event", "read", key, ["event_id"], entity="event"),
        make_op("update_event", "update", {**key, **fields}, ["event_id"], entity="event"),
        make_op("list_events", "read", {"summary": {"type": "string"}}, entity="event"),
    ]  # fmt: skip
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        made = [
            c["arguments"]
            for seed in range(6)
            for t in propose(world, random.Random(seed))
            for c in t.calls
            if c["name"] == "create_event"
        ]
    finally:
        world.close()
    assert made and all("status" not in args for args in made), made


def test_no_request_changes_more_than_three_fields_of_a_row_at_once(tmp_path):
    """ClearBlade's timer PUT requires every field: a request that restates them all (`change the
    frequency to 584, the body name to ..., the repeats to 9, ...`) is a form, not a request."""
    key = {"timer_id": {"type": "string"}}
    fields = {w: {"type": "integer" if w in ("frequency", "repeats") else "string"}
              for w in ("frequency", "body_name", "repeats", "service_name")}  # fmt: skip
    ops = [
        make_op("get_timer", "read", key, ["timer_id"], entity="timer"),
        make_op("update_timer", "update", {**key, **fields}, ["timer_id", *fields], entity="timer"),
        make_op("rename_timer", "update", {**key, "description": {"type": "string"}}, ["timer_id"], entity="timer"),
        make_op("list_timers", "read", {"service_name": {"type": "string"}}, entity="timer"),
    ]  # fmt: skip
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        made = [t for seed in range(4) for t in propose(world, random.Random(seed))]
    finally:
        world.close()
    names = {c["name"] for t in made for c in t.calls}
    assert "rename_timer" in names and "update_timer" not in names, names


def test_a_new_record_s_chosen_key_reads_like_a_name_a_person_gives(tmp_path):
    """A create that takes its record's string key (a Kubernetes namespace's name) is given one a
    person would choose (`checkout-staging`), not a stand-in like `new-namespace-137`."""
    key = {"namespace_id": {"type": "string"}}
    ops = [
        make_op("create_namespace", "create", {**key, "size": {"type": "integer"}}, ["namespace_id"],
                entity="namespace"),
        make_op("get_namespace", "read", key, ["namespace_id"], entity="namespace"),
        make_op("delete_namespace", "delete", key, ["namespace_id"], entity="namespace"),
        make_op("update_namespace", "update", {**key, "size": {"type": "integer"}}, ["namespace_id"],
                entity="namespace"),
        make_op("list_namespaces", "read", {"size": {"type": "integer"}}, entity="namespace"),
    ]  # fmt: skip
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        made = [
            c["arguments"]["namespace_id"]
            for t in propose(world, random.Random(0))
            for c in t.calls
            if c["name"] == "create_namespace"
        ]
    finally:
        world.close()
    assert made
    for value in made:
        assert re.fullmatch(r"[a-z]+-[a-z]+", value) and "new" not in value, value


def test_a_field_named_after_another_thing_names_that_thing_not_the_row(tmp_path):
    """A group policy's `group_name` is its group's name: a person does not name the policy by it."""
    ops = [
        make_op("get_group", "read", {"group_id": {"type": "string"}, "group_name": {"type": "string"}},
                ["group_id"], entity="group"),
        make_op("create_group_policy", "create", {"group_name": {"type": "string"}, "policy_name": {"type": "string"},
                "country_code": {"type": "string"}, "state_code": {"type": "string"},
                "auth_code": {"type": "string"}},
                ["group_name", "policy_name", "country_code", "state_code"], entity="group_policy"),
        make_op("get_group_policy", "read", {"group_policy_id": {"type": "string"}}, ["group_policy_id"],
                entity="group_policy"),
        make_op("list_group_policies", "read", {"group_name": {"type": "string"}}, entity="group_policy"),
    ]  # fmt: skip
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        policies = world.schema.tables["group_policies"]
        assert "group_name" in policies.columns and "group_name" not in world.names(policies)
        assert "country_code" in policies.columns and "country_code" not in world.names(policies)
        assert "state_code" in policies.columns and "state_code" not in world.names(policies)
        assert "auth_code" in policies.columns and "auth_code" not in world.names(policies)  # a secret
    finally:
        world.close()
    assert (
        say.field_phrase("no_of_nights") == "number of nights"
        and say.field_phrase("num_pages") == "number of pages"
        and say.field_phrase("number_nodes") == "number of nodes"
        and say.field_phrase("number_format") == "number format"
    )
    assert say.field_phrase("no_reply") == "no reply" and say.field_phrase("def_name") == "definition name"


def test_a_new_value_with_none_to_copy_is_made_like_the_column_s_seed(tmp_path):
    """With no row's value to reuse, a field's new value is made as the seed makes that column's
    values (a session code, a city), not a stand-in like `reviewed 20`."""
    props = {"widget_id": {"type": "string"}, "session": {"type": "string"}, "city": {"type": "string"}}
    ops = [
        make_op("get_widget", "read", {"widget_id": {"type": "string"}}, ["widget_id"]),
        make_op("update_widget", "update", props, ["widget_id"]),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        tool = next(t for t in world.tools if t.name == "update_widget")
        world.rows["widgets"] = []  # (no value to reuse)
        for b in tool.role("field"):
            value = world.value_for(random.Random(1), tool, b, None)
            assert isinstance(value, str) and not re.fullmatch(r"[a-z ]+ \d+", value), (b.param, value)
    finally:
        world.close()


def test_no_date_is_an_amount_and_no_test_decides_a_fact() -> None:
    """A date held as a number (`expected_availability_date: 1700000000`) is no measure to
    compare or sum; a sweep never writes where a row is or how to reach it on another field's
    test (`change the address country of the ones whose amount is less than 920`)."""
    from toolgen.synth.errands import _FACT_WORDS
    from toolgen.synth.questions import measures
    from toolgen.synth.schema import ColumnPlan, TablePlan

    table = TablePlan("topups", "topup", "topup_id", {
        "topup_id": ColumnPlan("topup_id", "string"),
        "amount": ColumnPlan("amount", "integer"),
        "expected_availability_date": ColumnPlan("expected_availability_date", "integer"),
    })  # fmt: skip
    assert measures(table) == ["amount"]
    assert {"country", "email", "address", "currency"} <= _FACT_WORDS


@pytest.mark.parametrize(
    ("noun", "text", "said"),
    [
        ("vote", "Get the votes for a specific baseball match.", True),
        ("concert ticket", "Buy concert tickets for a show.", True),
        ("cake recipe", "Get Cake Recipe by ID", True),
        ("menu", "Get menu details using KV.", True),
        ("order", "Cancel an order.", True),
        ("tirto", "detail tirto news", False),  # a news source, not a thing: `tirto news` is
        ("popular", "Get Popular", False),
        ("team image", "Get player image in PNG format for a specific team.", False),
        ("wnba box", "This endpoint returns the WNBA game box score data.", False),
    ],
)
def test_a_noun_is_said_as_a_thing_when_it_heads_its_phrase(noun, text, said):
    assert said_as_a_thing(noun, [text]) is said


def test_no_task_names_a_table_its_function_list_never_says_as_a_thing(tmp_path):
    """Function-list operations declare no records: a table named from a function's words alone
    (`tirto` of `tirto_detail`: "detail tirto news") gets no task; the widgets, which the
    descriptions name, do."""
    name, key = {"name": {"type": "string"}}, {"widget_id": {"type": "string"}}
    forecast = {"city": {"type": "string"}}
    ops = [
        make_op(
            "create_widget",
            "create",
            {**name, "size": {"type": "integer"}},
            ["name"],
            description="Create a widget.",
        ),
        make_op("get_widget", "read", key, ["widget_id"], description="Get a widget by its id."),
        make_op("list_widgets", "read", name, [], description="List the widgets with a name."),
        make_op(
            "update_widget",
            "update",
            {**key, "size": {"type": "integer"}},
            ["widget_id"],
            description="Resize a widget.",
        ),
        make_op("delete_widget", "delete", key, ["widget_id"], description="Delete a widget."),
        make_op(
            "tirto_detail",
            "read",
            {"id": {"type": "integer"}},
            ["id"],
            entity="tirto",
            description="detail tirto news",
        ),
        make_op(
            "tirto_search",
            "read",
            {"q": {"type": "string"}},
            [],
            entity="tirto",
            description="search tirto news data",
        ),
        # records declared, but `daily` only qualifies (`the daily whose city is ...`) and `get
        # membership` is named after a call
        *(
            make_op(
                f"{verb}_{entity}",
                "read",
                args,
                list(args)[:1] if verb == "get" else [],
                entity=entity,
                description=f"Returns a {entity.replace('_', ' ')} for a city.",
                record_schema={
                    "type": "object",
                    "properties": {**args, **forecast, "max_temp": {"type": "number"}},
                },
            )
            for entity in ("daily", "get_membership", "eligible")
            for verb, args in (
                ("get", {f"{entity}_id": {"type": "string"}}),
                ("list", {"city": forecast["city"]}),
            )
        ),
    ]
    plan, by_id = planned_from(*ops)
    from toolgen.synth.tasks import _tools_on_unsaid_things

    schema = infer_schema(plan, by_id)
    unsaid = _tools_on_unsaid_things(schema, compile_tools(schema))
    assert {"get_daily", "list_daily", "get_get_membership", "list_get_membership"} <= unsaid
    assert {"get_eligible", "list_eligible"} <= unsaid  # (`order an eligible`: an adjective)
    assert not unsaid & {"get_widget", "list_widgets"}
    result = synthesize_domain(plan, by_id, tmp_path, {}, seed=0)
    assert result.kept, result.reason
    assert result.tasks_rejected[UNSAID] > 0
    tasks = [
        json.loads(line) for line in (Path(result.folder or "") / "tasks.jsonl").read_text().splitlines()
    ]
    called = {call["name"] for task in tasks for call in task["calls"]}
    assert "get_widget" in called or "list_widgets" in called
    assert not called & {"tirto_detail", "tirto_search", "get_daily", "list_daily"}
    assert not called & {"get_get_membership", "list_get_membership"}


def test_a_person_s_phone_is_copied_only_from_a_record_of_another_kind(tmp_path):
    """`the same city as the member ...` reads as a person would say it; `the same phone as the
    member ...` for a new member does not: one person's phone is two members' only by mistake."""
    props = {"name": {"type": "string"}, "phone": {"type": "string"}, "city": {"type": "string"}}
    ops = [
        make_op("get_member", "read", {"member_id": {"type": "string"}}, ["member_id"], entity="member"),
        make_op("list_members", "read", {"name": {"type": "string"}}, [], entity="member"),
        make_op("create_member", "create", props, ["name", "phone"], entity="member"),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        tool = next(t for t in world.tools if t.name == "create_member")
        copies = {
            b.column: [world.copied(random.Random(i), tool, b, None) for i in range(20)]
            for b in tool.role("field")
        }
    finally:
        world.close()
    assert any(copies["city"]), "a city is copied from another member"
    assert not any(copies["phone"])


def test_no_question_asks_a_field_named_as_the_thing_itself():
    """`the phone number of each of the phone numbers PN-1013, ...` (or of each of the numbers)
    goes round in a circle."""
    from toolgen.synth.questions import _answers
    from toolgen.synth.schema import ColumnPlan, TablePlan

    table = TablePlan(
        "phone_numbers",
        "phone_number",
        "phone_number_id",
        {
            "phone_number_id": ColumnPlan("phone_number_id", "string"),
            "phone_number": ColumnPlan("phone_number", "string"),
            "carrier": ColumnPlan("carrier", "string"),
        },
    )
    assert _answers(table) == {"phone_number_id", "carrier"}
    numbers = TablePlan(
        "numbers",
        "number",
        "number_id",
        {c: ColumnPlan(c, "string") for c in ("number_id", "phone_number", "url")},
    )
    assert _answers(numbers) == {"number_id", "url"}  # (not `the phone number of each of the numbers`)
    sessions = TablePlan(
        "user_sessions", "user_session", "id", {c: ColumnPlan(c, "string") for c in ("id", "name", "ip")}
    )
    assert _answers(sessions) == {"id", "ip"}  # (no one asks the name of a session)
    people = TablePlan(
        "people", "person", "id", {c: ColumnPlan(c, "string") for c in ("id", "date", "birthday")}
    )
    assert _answers(people) == {"id", "birthday"}  # (no `the date of each of the people`: of what?)


def test_settings_are_not_quoted_by_id():
    """`the address of the settings SET-1009`: one has settings, one does not count them."""
    from toolgen.synth.questions import _counted
    from toolgen.synth.schema import ColumnPlan, TablePlan

    def table(entity: str) -> TablePlan:
        return TablePlan(f"{entity}s", entity, "id", {"id": ColumnPlan("id", "string")})

    assert not _counted(table("clan_invite_settings")) and not _counted(table("settings"))
    assert _counted(table("order")) and _counted(table("setting_group"))


def test_a_write_sets_no_search_bound_as_a_field(tmp_path):
    """`a new alert ... with min creation date "..." and max creation date "..."`: the bounds of a
    search the operation also takes are no fields a person sets."""
    props = {
        "title": {"type": "string"},
        "note": {"type": "string"},
        "min_creation_date": {"type": "string", "format": "date-time"},
        "max_creation_date": {"type": "string", "format": "date-time"},
    }
    ops = [
        make_op("get_alert", "read", {"alert_id": {"type": "string"}}, ["alert_id"], entity="alert"),
        make_op("create_alert", "create", props, ["title"], entity="alert"),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        tool = next(t for t in world.tools if t.name == "create_alert")
        proposer = Proposer(world, random.Random(0))
        given = {b.param for i in range(10) for b, _ in (proposer._fields(tool, None, extra=4) or [])}
    finally:
        world.close()
    assert "title" in given and not given & {"min_creation_date", "max_creation_date"}


def test_only_a_thing_a_person_runs_opens_an_errand_as_its_manager():
    from toolgen.synth.errands import openers

    assert any("I manage" in o for o in openers("guild")) and any("I manage" in o for o in openers("droplet"))
    assert not any(
        "I manage" in o or "I look after" in o for o in openers("column") + openers("external_reference")
    )


def test_no_kept_task_quotes_a_key_a_pattern_drew(tmp_path):
    """Orders keyed `^[A-Z0-9]{8}$` get keys like `KPXXUEFP`: no person quotes one, so a candidate
    that says one is rejected as an opaque id, whatever its letters."""
    key = {"order_id": {"type": "string", "pattern": "^[A-Z0-9]{8}$"}}
    ops = [
        make_op("get_order", "read", key, ["order_id"], entity="order", description="Get an order."),
        make_op("create_order", "create", {"total": {"type": "number"}}, ["total"], entity="order"),
        make_op("delete_order", "delete", key, ["order_id"], entity="order", description="Delete an order."),
        make_op("update_order", "update", {**key, "total": {"type": "number"}}, ["order_id"], entity="order"),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        keys = {str(r["order_id"]) for r in world.rows["orders"]}
        candidates = propose(world, random.Random(0))
    finally:
        world.close()
    assert all(re.fullmatch(r"[A-Z0-9]{8}", k) for k in keys), keys
    quoting = [c for c in candidates if any(k in c.instruction for k in keys)]
    assert quoting, "some candidates name orders by their keys"
    kept, rejected = validate_candidates(world.domain, quoting)
    assert not kept and rejected.get("instruction: opaque id") == len(quoting)


def test_a_new_value_is_the_column_s_kind_or_none_never_a_stand_in(tmp_path):
    """A DNS record's `type` whose only example is `NS` has no other value to change to: no write
    sets it, rather than `change the type to "priority 5"`."""
    typed = {"type": {"type": "string", "examples": ["NS"]}, "name": {"type": "string"}}
    key = {"record_id": {"type": "string"}}
    ops = [
        make_op("create_record", "create", typed, ["name", "type"], entity="record"),
        make_op("list_records", "read", {"name": {"type": "string"}}, entity="record"),
        make_op("update_record", "update", {**key, **typed}, ["record_id"], entity="record"),
    ]
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "records")
    try:
        tool = next(t for t in world.tools if t.name == "update_record")
        b = next(b for b in tool.role("field") if b.param == "type")
        values = {world.value_for(random.Random(i), tool, b, "NS") for i in range(20)}
    finally:
        world.close()
    assert values == {None}, values


@pytest.mark.parametrize(
    ("entity", "key", "consumes"),
    [
        ("ssh_public_key", "ssh_public_key_id", "public_key"),  # (`id_entity` keeps two words)
        ("signing_certificate", "certificate_id", "certificate"),
    ],
)
def test_a_key_named_like_its_own_entity_is_its_own(tmp_path, entity, key, consumes):
    """IAM's `DeleteSSHPublicKey(UserName, SSHPublicKeyId)` and `DeleteSigningCertificate(UserName,
    CertificateId)`: the id is the op's own row's, not a `public key` or a `certificate` of its own
    (`delete the signing certificate of the certificate CER-1011`)."""
    ops = [
        make_op(f"{verb}_{entity}", kind, {"user_name": {"type": "string"}, key: {"type": "string"}},
                ["user_name", key], entity=entity, consumes=[consumes])
        for verb, kind in (("get", "read"), ("delete", "delete"))
    ]  # fmt: skip
    plan, by_id = planned_from(*ops)
    schema = infer_schema(plan, by_id)
    for op_id, bindings in schema.bindings.items():
        (found,) = [b for b in bindings if b.param == key]
        assert (found.role, found.table) == ("key", f"{entity}s"), (op_id, found)
    assert f"{consumes}s" not in schema.tables


def test_no_request_says_a_flag_by_its_name(tmp_path):
    """Xero's leave type needs `IsPaidLeave` and `ShowOnPayslip`: `with is paid leave false and
    show on payslip false` is no one's request, so no task creates one; a plain field still is."""
    flags = {"is_paid_leave": {"type": "boolean"}, "show_on_payslip": {"type": "boolean"}}
    ops = [
        make_op("create_leave_type", "create", {"name": {"type": "string"}, **flags}, ["name", *flags], entity="leave_type"),
        make_op("list_leave_types", "read", {"name": {"type": "string"}}, entity="leave_type"),
        make_op("create_note", "create", {"title": {"type": "string"}}, ["title"], entity="note"),
        make_op("list_notes", "read", {"title": {"type": "string"}}, entity="note"),
    ]  # fmt: skip
    made = [c.instruction for c in _proposed(ops, tmp_path)]
    assert any("note" in text for text in made), made
    assert not [text for text in made if "paid leave" in text or "payslip" in text], made


def test_an_update_that_says_no_change_is_no_request(tmp_path):
    """Google Drive's `replies_update(replyId)` with no field: `Can you update the reply REP-1024?`
    asks for nothing; such a call gets no task, while a delete of the same row does."""
    key = {"reply_id": {"type": "string"}}
    ops = [
        make_op("api_replies_create", "create", {"content": {"type": "string"}}, ["content"], entity="reply"),
        make_op("api_replies_list", "read", {"content": {"type": "string"}}, entity="reply"),
        make_op("api_replies_update", "update", key, ["reply_id"], entity="reply"),
        make_op("api_replies_delete", "delete", key, ["reply_id"], entity="reply"),
    ]
    made = _proposed(ops, tmp_path)
    called = {x["name"] for c in made for x in c.calls}
    assert "api_replies_delete" in called and "api_replies_update" not in called, called


def test_a_name_made_only_for_a_search_names_no_row(tmp_path):
    """Stripe's `search_payment_intents(query)` on records with no name: the column the search
    matches is made up, so no request names a payment intent by it (`the payment intents whose
    names are "Orchestration Payment Intent", ...`) nor asks for it."""
    record = {
        "type": "object",
        "properties": {
            "payment_intent_id": {"type": "string"},
            "amount": {"type": "integer", "minimum": 1, "maximum": 900},
            "currency": {"type": "string"},
        },
    }
    key = {"payment_intent_id": {"type": "string"}}
    ops = [
        make_op("get_payment_intent", "read", key, ["payment_intent_id"], entity="payment_intent", record_schema=record),
        make_op("search_payment_intents", "read", {"query": {"type": "string"}}, ["query"], entity="payment_intent",
                record_schema=record),
        make_op("cancel_payment_intent", "update", key, ["payment_intent_id"], entity="payment_intent"),
    ]  # fmt: skip
    world, *_ = _world_of(*planned_from(*ops), 0, tmp_path / "d")
    try:
        table = world.schema.tables["payment_intents"]
        assert table.columns["name"].searched and "name" not in world.names(table)
        asked = [c.instruction for c in propose(world, random.Random(0))]
    finally:
        world.close()
    assert asked and not [text for text in asked if "name" in text], asked


def test_a_goal_joins_a_request_and_a_question_about_the_same_row(tmp_path):
    """`Cancel the order ... of the customer C. Also, what is the email of that customer?`: the
    second need names a row the first names (said again as `that <noun>`), touches no table the
    first writes, deletes nothing, runs its calls after the first's and validates."""
    goals = []
    for seed in range(4):
        world, *_ = _world(SHOP, seed, tmp_path / f"shop{seed}")
        try:
            for c in [c for c in propose(world, random.Random(seed)) if c.kind == "goal"]:
                kept, _ = validate_candidates(world.domain, [c])
                goals.append((world.domain, c, kept))
        finally:
            world.close()
    assert goals, "the shop's requests name customers and orders its questions ask about"
    for domain, c, _ in goals:
        first, second = c.instruction.split(" Also, ")
        assert " that " in second, c.instruction
        named_by = set(re.findall(r'whose ([a-z ]+?) is "', first))
        assert not any(f" {f} of that " in second for f in named_by), c.instruction  # (not circular)
        assert any(domain.tools[x["name"]].writes for x in c.calls)
        assert not domain.tools[c.calls[-1]["name"]].destructive  # (never `Also, delete that user`)
    assert any(kept for *_, kept in goals)


def test_every_row_of_a_plural_named_table_is_all_of_them(tmp_path):
    """OpenAI's fine-tuning checkpoint `permissions` keep their plural name: `delete all the
    permissions of the checkpoint ...`, never `every permissions`."""
    permission = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "checkpoint_id": {"type": "string"}},
    }
    checkpoint = {
        "type": "object",
        "properties": {"checkpoint_id": {"type": "string"}, "name": {"type": "string"}},
    }
    ops = [
        make_op("list_checkpoints", "read", {}, entity="checkpoint", record_schema=checkpoint),
        make_op("list_permissions", "read", {"checkpoint_id": {"type": "string"}}, ["checkpoint_id"],
                entity="permissions", record_schema=permission, consumes=["checkpoint"]),
        make_op("delete_permission", "delete", {"checkpoint_id": {"type": "string"}, "id": {"type": "string"}},
                ["checkpoint_id", "id"], entity="permissions", consumes=["checkpoint"]),
    ]  # fmt: skip
    made = [c.instruction for c in _proposed(ops, tmp_path) if c.kind == "every"]
    assert made and all("all the permissions of" in text for text in made), made


def test_a_thing_s_name_names_its_row_and_another_thing_s_name_does_not():
    """A recipe's `recipe name`, a directory's `dir name`, a user's `display name` name the row;
    a text's `font name` and a scorer's `league name` name something else."""
    from toolgen.synth.lookups import names_another

    for column, entity in [
        ("recipe name", "recipe"),
        ("dir name", "directory"),
        ("display name", "user"),
        ("template name", "css template"),
        ("instance profile name", "instance profile"),
        ("name", "font"),
    ]:
        assert not names_another(column.split(), entity.split()), column
    for column, entity in [
        ("font name", "text"),
        ("league name", "scorer"),
        ("service name", "service instance"),
    ]:
        assert names_another(column.split(), entity.split()), column


def test_a_new_or_renamed_row_gets_a_name_no_other_row_has(tmp_path):
    """`create a new user named "knorton"` when a user is already so named, or `change the name of
    the widget "A" to "B"` when another widget is "B", is no request a person makes."""
    for seed in range(3):
        world = _widget_world(tmp_path, seed)
        try:
            names = {r["name"] for r in world.rows["widgets"]}
            p = Proposer(world, random.Random(seed))
            made = [p.one_write(t, lookup=False) for t in p.writes() for _ in range(3)]
        finally:
            world.close()
        given = [w.args["name"] for w in made if w is not None and "name" in w.args]
        assert given and not names.intersection(given), given


def test_a_total_adds_up_amounts_not_settings(tmp_path):
    """No one adds up plans' `interval count`s (how often each bills); their amounts, yes."""
    record = {
        "type": "object",
        "properties": {
            "plan_id": {"type": "string"},
            "nickname": {"type": "string"},
            "interval_count": {"type": "integer", "minimum": 1, "maximum": 12},
            "amount": {"type": "integer", "minimum": 100, "maximum": 9000},
        },
    }
    key = {"plan_id": {"type": "string"}}
    ops = [
        make_op("get_plan", "read", key, ["plan_id"], entity="plan", record_schema=record),
        make_op("list_plans", "read", {}, entity="plan", record_schema=record),
    ]
    totals = []
    for seed in range(3):
        world, *_ = _world_of(*planned_from(*ops), seed, tmp_path / f"plans{seed}")
        try:
            totals += [c.instruction for c in Proposer(world, random.Random(seed)).totals(4)]
        finally:
            world.close()
    assert totals and all("amount" in t and "interval" not in t for t in totals), totals


def test_a_row_told_apart_by_its_state_is_said_as_a_person_says_it():
    """`the stopped chart of the column COL-1`, `the in-progress order of ...`; not `the chart
    whose status is "stopped" of ...`; a state that is a number stays a field."""
    assert (
        say.row_where("chart", [("status", "stopped")], ["the column COL-1"])
        == "the stopped chart of the column COL-1"
    )
    assert say.row_where("bank_transfer", [("Status", "AUTHORISED")], ["the tenant T-1"]) == (
        "the authorised bank transfer of the tenant T-1"
    )
    assert say.row_where("order", [("state", "in_progress")]) == "the in-progress order"
    assert say.row_where("alert", [("message_status", 1)]) == "the alert whose message status is 1"


def test_verbs_read_as_a_person_says_them_and_no_value_is_filler():
    """`cancel_2` is `cancel`; `reply` takes `to`; a state change whose verb is one word says
    what it changes (`close the dispute of ...`, not `close for ...`); a string no maker can make
    is left out, never filler (`priority 12`)."""
    import random as _random

    from toolgen.synth.lookups import _from_schema

    assert say.verb_phrase(["cancel", "2"], "reservation") == "cancel"
    assert say.acting_on("reply") == "reply to" and say.acting_on("cancel") == "cancel"
    for prop in ({"type": "string"}, {"type": ["string", "null"]}, {"type": "string", "format": "uri"}):
        assert _from_schema(_random.Random(0), prop, None) is None, prop


def test_tasks_never_name_a_record_the_api_never_names():
    # `vec_id` makes a `vecs` table no tool acts on, and no text of the API says `vec`: a task
    # may not name one (`the archival memory of the vec 16`); `find` of the Gorilla file system
    # acts on nothing its name says, only on the api's own name
    from toolgen.synth.tasks import _named_after_api, _unsaid_owners

    vec = {"vec_id": {"type": "integer", "description": "The ID of the entry to be removed."}}
    memory = [
        make_op(f"{verb}_archival_memory", kind, vec, ["vec_id"], entity="archival_memory", consumes=["vec"])
        for verb, kind in (("remove", "delete"), ("retrieve", "read"))
    ]
    plan, by_id = planned_from(*memory)
    schema = infer_schema(plan, by_id)
    assert "vecs" in schema.tables
    owners = _unsaid_owners(schema)
    assert owners is not None and owners.search("Delete the archival memory of the vec 16.")
    assert not owners.search("Delete the archival memory 16.")
    said = [
        make_op(
            o.name,
            o.kind,
            o.input_schema["properties"],
            description="Remove a vec by id.",
            entity="archival_memory",
            consumes=["vec"],
        )
        for o in memory
    ]
    assert _unsaid_owners(infer_schema(*planned_from(*said))) is None

    # `messaging` names an activity unless some text counts it (`a messaging`, `messagings`)
    from toolgen.synth.tasks import _mass_noun

    assert _mass_noun("messaging", ["Twilio messaging service settings.", "Send messaging"])
    assert not _mass_noun("booking", ["Create a booking."]) and not _mass_noun("meeting", ["List meetings"])
    assert not _mass_noun("order", [])

    fs = "gorilla_file_system"
    assert _named_after_api(make_op("find", "read", {}, api=fs, entity=fs))
    assert not _named_after_api(make_op("list_gorilla_file_systems", "read", {}, api=fs, entity=fs))
    assert not _named_after_api(make_op("find", "read", {}, api=fs, entity="file"))


def test_a_new_row_is_never_made_for_a_type(tmp_path):
    """A row is of a type, not for one: `create a new account for the account type whose name is
    "Indigo Account Type"` is no request a person makes; the account is made for its user."""
    name = {"name": {"type": "string", "description": "the name"}}
    kinds = {"account_type_id": {"type": "string", "description": "the account type"}}
    user = {"user_id": {"type": "string", "description": "the user"}}
    ops = [
        make_op("create_account_type", "create", name, ["name"], entity="account_type"),
        make_op("list_account_types", "read", name, [], entity="account_type"),
        make_op("create_user", "create", name, ["name"], entity="user"),
        make_op("list_users", "read", name, [], entity="user"),
        make_op("create_account", "create", {**name, **kinds, **user}, ["name"], entity="account"),
        make_op("list_accounts", "read", {**name, **kinds, **user}, [], entity="account"),
    ]
    said = [t for t in _instructions_of(ops, tmp_path, 4) if "a new account " in t]
    assert said and any(" for the user" in t for t in said), said
    assert not any("for the account type" in t for t in said), said


def test_a_row_a_new_one_only_uses_is_no_owner():
    """DigitalOcean's `POST /cdn/endpoints` takes an optional `certificate_id`: `create a new CDN
    endpoint ... using the certificate ...`, not `for the certificate`; a row the path is under, a
    required one, a person or any row of a function list owns the new one."""
    from toolgen.synth.walks import owns

    cdn = make_op("create_cdn", "create", {}, format="openapi-3.0", pointer="/paths/~1cdn~1endpoints/post")
    keys = make_op(
        "create_key", "create", {}, format="openapi-3.0", pointer="/paths/~1projects~1{project_id}~1keys/post"
    )
    assert not owns(cdn, "certificate_id", "certificate", optional=True)
    assert owns(cdn, "certificate_id", "certificate", optional=False) and owns(
        cdn, "user_id", "user", optional=True
    )
    assert owns(keys, "project_id", "project", optional=True)
    assert owns(make_op("create_cdn", "create", {}), "certificate_id", "certificate", optional=True)
    said = say.create_clause("create", "cdn_endpoint", [], [("origin", "a.com")], ['the certificate "C"'])
    assert said == 'create a new CDN endpoint with origin "a.com" using the certificate "C"'
