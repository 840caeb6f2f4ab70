"""Validation: deliberately broken tasks are each reported with the right status."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from scoring import load_domain
from scoring.curation.curate import curate, parse_mix
from scoring.validation.domains import validate_domains
from scoring.validation.orders import Footprint, ReadTrace, alternative_orders
from scoring.validation.reach import searches
from scoring.validation.sandbox import NetworkBlocked, no_network
from scoring.validation.validate import check_task
from tests.conftest import FIXTURES
from toolgym.cli import app

ORDER = {
    "name": "place_order",
    "arguments": {"customer_id": "C-0003", "items": [{"sku": "SKU-002", "quantity": 1}]},
}
TASKS = {
    "good": {
        "id": "good",
        "instruction": "Customer C-0004 wants order O-0004 cancelled.",
        "calls": [{"name": "cancel_order", "arguments": {"order_id": "O-0004"}}],
    },
    "always-errors": {
        "id": "always-errors",
        "instruction": "Cancel order O-0001 for C-0001.",
        "calls": [{"name": "cancel_order", "arguments": {"order_id": "O-0001"}}],
    },
    "seed-bound": {
        "id": "seed-bound",
        "instruction": "Add customer Zed (z@z.z) and note 'vip' on the new record.",
        "calls": [
            {"name": "add_customer", "arguments": {"name": "Zed", "email": "z@z.z"}},
            {"name": "set_note", "arguments": {"customer_id": "C-c4d7e84c", "notes": "vip"}},
        ],
    },
    "no-op": {
        "id": "no-op",
        "instruction": "Customer C-0001 asks for their balance.",
        "calls": [{"name": "get_customer", "arguments": {"customer_id": "C-0001"}}],
    },
    "no-op-with-fact": {
        "id": "no-op-with-fact",
        "instruction": "Customer C-0001 asks for their balance.",
        "calls": [{"name": "get_customer", "arguments": {"customer_id": "C-0001"}}],
        "answer_facts": [100],
    },
    "blind-scorer": {
        "id": "blind-scorer",
        "instruction": "Customer C-0002 wants order O-0002 cancelled and the note 'call after 5pm' on their record.",
        "calls": [
            {"name": "cancel_order", "arguments": {"order_id": "O-0002"}},
            {"name": "set_note", "arguments": {"customer_id": "C-0002", "notes": "call after 5pm"}},
        ],
        "ignore_columns": ["customers.notes"],
    },
    "free-memo": {
        "id": "free-memo",
        "instruction": "Register Zed (zed@x.org) as a customer, with any welcome note you like.",
        "calls": [
            {
                "name": "add_customer",
                "arguments": {"name": "Zed", "email": "zed@x.org", "notes": "anything"},
                "free": ["notes"],
            }
        ],
        "ignore_columns": ["customers.notes"],
    },
    "secret-id": {
        "id": "secret-id",
        "instruction": "A customer wants their pending order cancelled.",
        "calls": [{"name": "cancel_order", "arguments": {"order_id": "O-0006"}}],
    },
    "looked-up-id": {
        "id": "looked-up-id",
        "instruction": "Customer C-0006 wants their pending order cancelled.",
        "calls": [{"name": "cancel_order", "arguments": {"order_id": "O-0006"}}],
    },
    "nowhere-answer": {
        "id": "nowhere-answer",
        "instruction": "Customer C-0001 asks which animal their account is named after.",
        "calls": [{"name": "get_customer", "arguments": {"customer_id": "C-0001"}}],
        "answer_facts": ["platypus"],
    },
    "computed-answer": {  # a total no table holds: the agent computes it
        "id": "computed-answer",
        "instruction": "Customer C-0001 asks for their balance plus 23.45.",
        "calls": [{"name": "get_customer", "arguments": {"customer_id": "C-0001"}}],
        "answer_facts": [123.45],
    },
    "two-independent": {
        "id": "two-independent",
        "instruction": "C-0002 and C-0006: set notes 'a' on C-0002 and 'b' on C-0006.",
        "calls": [
            {"name": "set_note", "arguments": {"customer_id": "C-0002", "notes": "a"}},
            {"name": "set_note", "arguments": {"customer_id": "C-0006", "notes": "b"}},
        ],
    },
}
EXPECTED = {
    "good": "valid",
    "always-errors": "broken-gold",
    "seed-bound": "flaky",
    "no-op": "no-op-passes",
    "no-op-with-fact": "valid",
    "blind-scorer": "weak-verifier",
    "free-memo": "valid",
    "secret-id": "unreachable-fact",
    "looked-up-id": "valid",  # list_orders(C-0006) reveals it
    "two-independent": "valid",
    "nowhere-answer": "unreachable-answer",
    "computed-answer": "valid",
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("v") / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    with (folder / "domain.yaml").open("a") as fh:
        fh.write(LIST_ORDERS)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TASKS.values()))
    return folder


#: a one-argument read tool: an agent who knows a customer id can learn that customer's order ids
LIST_ORDERS = """
  - name: list_orders
    description: A customer's orders.
    kind: read
    input_schema: {type: object, properties: {customer_id: {type: string}}, required: [customer_id], additionalProperties: false}
    operation: {list: orders, where: [{column: customer_id, value: $args.customer_id}]}
"""


@pytest.mark.parametrize("task_id", sorted(EXPECTED))
def test_each_broken_task_gets_its_status(broken, task_id):
    result = check_task(str(broken), task_id)
    assert result.status == EXPECTED[task_id], result.findings


def test_findings_say_what_was_missed(broken):
    weak = check_task(str(broken), "blind-scorer")
    assert any("notes: 'call after 5pm' -> " in f.message for f in weak.findings)
    assert "uses 'O-0006'" in check_task(str(broken), "secret-id").findings[0].message
    assert "only work under seed 0" in check_task(str(broken), "seed-bound").findings[0].message
    assert check_task(str(broken), "two-independent").orders_tried == 1
    assert (
        "answer fact 'platypus' appears nowhere"
        in check_task(str(broken), "nowhere-answer").findings[0].message
    )


def test_validate_domains_with_reruns_in_separate_processes(broken):
    report = validate_domains([broken], reruns=2, workers=2, fuzz=5)
    (domain,) = report.domains
    assert {t.task: t.status for t in domain.tasks} == EXPECTED
    assert all(len(t.rerun_digests) == 1 and t.rerun_digests[0] == t.digest for t in domain.tasks if t.digest)
    assert domain.fingerprint == load_domain(broken).fingerprint()


def validate_cli(domain: Path, manifest_dir: Path, *extra: str) -> Result:
    """`toolgym validate DOMAIN --reruns 1 --workers 1 --json --manifest-dir DIR [extra]`."""
    args = ["validate", str(domain), "--reruns", "1", "--workers", "1", "--json", "--fuzz", "5"]
    return CliRunner().invoke(app, [*args, "--manifest-dir", str(manifest_dir), *extra])


#: tools whose operations hit engine errors on arguments an agent may choose
ENGINE_ERRORS = """
  - name: split_balance
    description: Divide a customer's balance into equal parts.
    kind: write
    input_schema: {type: object, properties: {customer_id: {type: string}, parts: {type: integer}}, required: [customer_id, parts], additionalProperties: false}
    operation: {update: customers, key: {customer_id: $args.customer_id}, set: {balance: {div: [$row.balance, $args.parts]}}}
  - name: scale_stock
    description: Multiply a product's stock.
    kind: write
    input_schema: {type: object, properties: {sku: {type: string}, factor: {type: integer}}, required: [sku, factor], additionalProperties: false}
    operation: {update: products, key: {sku: $args.sku}, set: {stock: {mul: [$row.stock, $args.factor]}}}
"""
ENGINE_TASKS = [
    {
        "id": "divide-by-zero",
        "instruction": "Split C-0001's balance into 0 parts.",
        "calls": [{"name": "split_balance", "arguments": {"customer_id": "C-0001", "parts": 0}}],
    },
    {
        "id": "overflow",
        "instruction": "Multiply the stock of SKU-001 by 10^30.",
        "calls": [
            {"name": "get_customer", "arguments": {"customer_id": "C-0001"}},
            {"name": "scale_stock", "arguments": {"sku": "SKU-001", "factor": 10**30}},
        ],
    },
    TASKS["good"],
]


@pytest.fixture(scope="module")
def engine_errors(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("e") / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    with (folder / "domain.yaml").open("a") as fh:
        fh.write(ENGINE_ERRORS)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in ENGINE_TASKS))
    return folder


def test_a_gold_call_hitting_an_engine_error_is_broken_gold(engine_errors, tmp_path):
    zero = check_task(str(engine_errors), "divide-by-zero")
    assert zero.status == "broken-gold"
    assert "gold call 0 (split_balance)" in zero.findings[0].message
    assert "divide by zero" in zero.findings[0].message
    over = check_task(str(engine_errors), "overflow")
    assert over.status == "broken-gold" and "gold call 1 (scale_stock)" in over.findings[0].message
    assert check_task(str(engine_errors), "no-such-task").status == "broken-gold"
    result = validate_cli(engine_errors, tmp_path)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    statuses = {t["task"]: t["status"] for t in json.loads(result.stdout)["domains"][0]["tasks"]}
    assert statuses == {"divide-by-zero": "broken-gold", "overflow": "broken-gold", "good": "valid"}


#: a two-argument search: a customer's orders in one status
FIND_ORDERS = """
  - name: find_orders_by_status
    description: A customer's orders in one status.
    kind: read
    input_schema: {type: object, properties: {customer_id: {type: string}, status: {type: string, enum: [pending, shipped, cancelled]}}, required: [customer_id, status], additionalProperties: false}
    operation: {list: orders, where: [{column: customer_id, value: $args.customer_id}, {column: status, value: $args.status}]}
"""
SEARCH_TASKS = [
    {
        "id": "searched",
        "instruction": "Customer C-0006 wants their pending order cancelled.",
        "calls": [{"name": "cancel_order", "arguments": {"order_id": "O-0006"}}],
    },
    {
        "id": "not-searchable",
        "instruction": "Customer C-0006 wants an order cancelled.",
        "calls": [{"name": "cancel_order", "arguments": {"order_id": "O-0006"}}],
    },
]


def test_reachability_follows_searches_filled_with_known_facts(tmp_path):
    """find_orders_by_status(C-0006, pending) reveals O-0006 when the instruction states both."""
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    with (folder / "domain.yaml").open("a") as fh:
        fh.write(FIND_ORDERS)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in SEARCH_TASKS))
    assert check_task(str(folder), "searched").status == "valid"
    assert check_task(str(folder), "not-searchable").status == "unreachable-fact"
    domain = load_domain(folder)
    found = searches(domain, "C-0006 pending; C-0001 shipped")
    assert len(found.splitlines()) == 4 and found.count("order_id") == 2 and "O-0006" in found  # 2 x 2 calls
    assert len(searches(domain, "C-0006 pending; C-0001 shipped", limit=1).splitlines()) == 1  # bounded


def test_validate_cli_strict_and_manifest(broken, tmp_path):
    result = validate_cli(broken, tmp_path, "--strict")
    assert result.exit_code == 1
    manifest = json.loads((tmp_path / "shop@0.1.0.manifest.json").read_text())
    assert sorted(manifest["valid_tasks"]) == sorted(k for k, v in EXPECTED.items() if v == "valid")


def test_validate_on_ray(broken):
    pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
    report = validate_domains([broken], reruns=1, workers=2, executor="ray", fuzz=5)
    assert {t.task: t.status for t in report.domains[0].tasks} == EXPECTED


def test_network_is_blocked_and_recorded():
    with no_network() as attempts:
        with pytest.raises(NetworkBlocked):
            socket.create_connection(("127.0.0.1", 9))
        with pytest.raises(NetworkBlocked):
            socket.getaddrinfo("example.org", 80)
    assert len(attempts) == 2
    socket.getaddrinfo("127.0.0.1", 80)  # restored


def test_alternative_orders_swap_only_independent_writes():
    prints = [
        Footprint(reads={("c", "*")}),
        Footprint(reads={("c", 1)}, writes={("c", 1)}),
        Footprint(reads={("c", 2)}, writes={("c", 2)}),
        Footprint(reads={("c", 1)}, writes={("o", 9)}),  # reads what call 1 wrote: not independent of it
    ]
    assert alternative_orders(prints) == [[0, 2, 1, 3], [0, 1, 3, 2]]
    prints[2].refs = {1}  # call 2 uses call 1's result
    prints[3].reads.add(("c", 2))  # call 3 reads what call 2 wrote
    assert alternative_orders(prints) == []


def test_curate_filters_buckets_and_mixes():
    results = []
    for task, passes in (("a", 0), ("b", 2), ("c", 5), ("d", 10)):
        results += [
            {"domain": "bank@1.0.0", "task": task, "reward": 1.0 if i < passes else 0.0} for i in range(10)
        ]
    results += [{"domain": "bank@1.0.0", "task": "b", "status": "failed-infra"}] * 5
    results += [{"domain": "office@1.0.0", "task": "x", "reward": float(i % 2)} for i in range(10)]
    m = curate(results, min_pass=0.1, max_pass=0.9, mix=parse_mix("bank=2,office=1"), seed=3)
    kept = {(t.domain, t.task): t for t in m.tasks if t.kept}
    assert set(kept) == {("bank@1.0.0", "b"), ("bank@1.0.0", "c"), ("office@1.0.0", "x")}
    assert (
        kept[("bank@1.0.0", "b")].pass_rate == 0.2 and kept[("bank@1.0.0", "b")].bucket == "hard"
    )  # infra excluded
    bank = next(d for d in m.domains if d.domain == "bank@1.0.0")
    assert bank.infra_failures == 5 and bank.error_rate == round(5 / 45, 4)
    counts = {d: sum(1 for e in m.mixture if e.domain == d) for d in ("bank@1.0.0", "office@1.0.0")}
    assert counts == {"bank@1.0.0": 2, "office@1.0.0": 1}
    assert curate(results, mix=parse_mix("bank=2,office=1"), seed=3) == m  # seeded: reproducible


def test_score_refuses_tasks_outside_the_manifest(broken, tmp_path):
    from simulator.runtime.transcript import FileSink

    runner = CliRunner()
    assert validate_cli(broken, tmp_path).exit_code == 0
    manifest = tmp_path / "shop@0.1.0.manifest.json"
    domain = load_domain(broken)
    for task_id in ("good", "no-op"):
        sink = FileSink(tmp_path / f"{task_id}.jsonl")
        ep = domain.episode(task=task_id, transcript=sink)
        for call in domain.task(task_id).calls:
            ep.call(call.name, call.arguments)
        sink.close()
    ok = runner.invoke(
        app,
        [
            "score",
            str(tmp_path / "good.jsonl"),
            "--domain",
            str(broken),
            "--manifest",
            str(manifest),
            "--json",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["fingerprint"] == domain.fingerprint()
    refused = runner.invoke(
        app, ["score", str(tmp_path / "no-op.jsonl"), "--domain", str(broken), "--manifest", str(manifest)]
    )
    assert refused.exit_code == 1 and "did not pass validation" in refused.stderr


def test_reads_are_traced_by_the_observer_the_episode_is_given():
    """Read tracing is an observer handed to the episode (the grading side's `ReadTrace`): a get
    reads its row, a search scans its table, a write's change is not a read; `stop` ends it."""
    shop = load_domain(FIXTURES / "shop")
    trace = ReadTrace()
    with shop.episode(observer=trace) as ep:
        ep.call("get_customer", {"customer_id": "C-0002"})
        assert trace.take() == {("customers", "C-0002")}
        ep.call("search_products", {"query": "mug"})
        assert ("products", "*") in trace.take()
        assert trace.take() == set()
        trace.stop()
        ep.call("get_customer", {"customer_id": "C-0001"})
        assert trace.take() == set()
    with shop.episode() as ep:  # no observer: nothing is traced, the calls answer the same
        assert ep.reads is None and ep.call("get_customer", {"customer_id": "C-0002"})["name"] == "Customer 2"
