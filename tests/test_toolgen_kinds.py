"""What a spec declares an operation does (HTTP method, `type`, MCP annotations, a wrapper's
`tool_type` / `mutates_state`) decides its kind, all the way to the generated tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolgen.ingest import read_file
from toolgen.ingest.declared import http_declared, tool_declared
from toolgen.model import Operation, PlannedDomain
from toolgen.normalize import normalize
from toolgen.synth.schema import infer_schema
from toolgen.synth.tools import compile_tools

DEV = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "dev"
if not DEV.is_dir():
    DEV = Path("/work/shared/corpus/dev")


def _arg(name: str, desc: str, required: bool = True) -> dict[str, object]:
    return {"name": name, "type": "string", "required": required, "description": desc}


#: a customer-service tool list in tau2's summary format: every tool declares READ or WRITE
TELECOM = {
    "telecom": {
        "description": "Tools of a mobile operator's customer service.",
        "tools": [
            {
                "name": "get_customer_by_id",
                "type": "READ",
                "description": "Look a customer up by id.",
                "parameters": [_arg("customer_id", "The customer's id.")],
            },
            {
                "name": "get_details_by_id",
                "type": "READ",
                "description": "Details of a line, a bill or a plan.",
                "parameters": [_arg("line_id", "The line's id.")],
            },
            {
                "name": "suspend_line",
                "type": "WRITE",
                "description": "Suspend a customer's line.",
                "parameters": [
                    _arg("customer_id", "The customer's id."),
                    _arg("line_id", "The line to suspend."),
                    _arg("reason", "Why it is suspended."),
                ],
            },
            {
                "name": "reactivate_line",
                "type": "WRITE",
                "description": "Reactivate a suspended line.",
                "parameters": [_arg("customer_id", "The customer's id."), _arg("line_id", "The line.")],
            },
            {
                "name": "setup_payment_extension",
                "type": "write",
                "description": "Give a customer more time to pay a bill.",
                "parameters": [_arg("customer_id", "The customer's id."), _arg("bill_id", "The bill.")],
            },
            {
                "name": "network_settings",
                "type": "Write",
                "description": "Reset the network settings of a line.",
                "parameters": [_arg("line_id", "The line.")],
            },
            {
                "name": "list_bills",
                "type": "READ",
                "description": "The bills of a customer.",
                "parameters": [_arg("customer_id", "The customer's id.")],
            },
        ],
    }
}


def _ops(tmp_path: Path, doc: object, name: str = "tools.json") -> dict[str, Operation]:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    raw, failed = read_file(str(path), path.read_bytes())
    assert not failed
    ops, _ = normalize(raw)
    return {op.name: op for op in ops}


@pytest.fixture
def telecom(tmp_path: Path) -> dict[str, Operation]:
    return _ops(tmp_path, TELECOM)


def test_a_declared_type_is_recorded_with_where_it_came_from(telecom):
    assert telecom["reactivate_line"].declared == "write"
    assert telecom["reactivate_line"].declared_by == "type: WRITE"
    assert telecom["setup_payment_extension"].declared_by == "type: write"
    assert telecom["get_customer_by_id"].declared == "read"


def test_a_declared_write_named_like_a_noun_acts_on_the_record_it_names(telecom):
    assert telecom["reactivate_line"].kind != "read"
    assert telecom["reactivate_line"].entity == "line"
    assert telecom["setup_payment_extension"].kind != "read"
    assert telecom["setup_payment_extension"].entity == "payment_extension"
    assert telecom["network_settings"].kind != "read"
    assert all(op.kind == "read" for op in telecom.values() if op.declared == "read")


def _compiled(ops: dict[str, Operation]) -> dict[str, tuple[str, str, str]]:
    """{tool: (tool kind, compiled as, table)} of one domain of all `ops`."""
    plan = PlannedDomain(
        name="t", operations=[o.id for o in ops.values()], tools={o.id: o.name for o in ops.values()}
    )
    schema = infer_schema(plan, {o.id: o for o in ops.values()})
    toolset = compile_tools(schema)
    # (a computation naming no record, such as tau2's `calculate`, is reported as not modelled)
    assert all(s.reason.startswith("not modelled: ") for s in toolset.not_compiled), toolset.not_compiled
    return {
        t.name: (t.kind, t.compiled_as, schema.table_of(schema.operations[t.op_id]).name)
        for t in toolset.tools
    }


def test_declared_writes_compile_to_writes_on_their_target_and_reads_to_reads(telecom):
    tools = _compiled(telecom)
    for name, op in telecom.items():
        assert tools[name][0] == ("read" if op.declared == "read" else "write"), (name, tools[name])
    kind, how, table = tools["reactivate_line"]
    assert (kind, table) == ("write", "lines") and how in ("status", "event", "update")
    assert tools["suspend_line"][2] == "lines"
    assert tools["setup_payment_extension"][0] == "write"
    assert "reactivate_lines" not in {t for _, _, t in tools.values()}


def test_a_kind_declared_beside_a_wrapped_function_counts(tmp_path: Path):
    def wrapped(name: str, tool_type: str, mutates: bool) -> dict[str, object]:
        fn = {"name": name, "description": name, "parameters": {"type": "object", "properties": {}}}
        return {
            "schema": {"type": "function", "function": fn},
            "tool_type": tool_type,
            "mutates_state": mutates,
        }

    doc = {
        "assistant": [
            wrapped("get_order_details", "write", True),  # the declaration wins over the name
            wrapped("calculate", "generic", False),
            wrapped("cancel_pending_order", "write", True),
            wrapped("find_user_id_by_email", "read", False),
        ]
    }
    ops = _ops(tmp_path, doc)
    assert (ops["get_order_details"].declared, ops["get_order_details"].kind) == ("write", "action")
    assert (ops["calculate"].declared, ops["calculate"].declared_by) == ("read", "mutates_state: false")
    assert ops["calculate"].kind == "read"
    assert ops["cancel_pending_order"].declared_by == "tool_type: write"
    assert ops["find_user_id_by_email"].kind == "read"


def test_mcp_annotations_declare(tmp_path: Path):
    def tool(name: str, annotations: dict[str, object] | None) -> dict[str, object]:
        return {
            "name": name,
            "description": name,
            "inputSchema": {"type": "object"},
            "annotations": annotations,
        }

    doc = {
        "tools": [
            tool("directory_tree", {"readOnlyHint": True}),
            tool("create_directory", {"readOnlyHint": False, "destructiveHint": False}),
            tool("list_and_prune", {"destructiveHint": True}),
            tool("search_files", None),
        ]
    }
    ops = _ops(tmp_path, doc)
    assert (ops["directory_tree"].declared, ops["directory_tree"].kind) == ("read", "read")
    assert ops["create_directory"].declared == "write"
    assert (ops["list_and_prune"].declared, ops["list_and_prune"].kind) == ("write", "action")
    assert ops["search_files"].declared is None


@pytest.mark.parametrize(
    ("method", "path", "declared"),
    [
        ("get", "/pets", "read"),
        ("head", "/pets/{id}", "read"),
        ("post", "/pets", None),  # POST alone declares nothing
        ("put", "/pets/{id}", "write"),
        ("patch", "/pets/{id}", "write"),
        ("delete", "/pets/{id}", "write"),
        ("get", "/#Action=CreateUser", None),  # the action is the operation, GET its transport
        (None, None, None),
    ],
)
def test_http_methods_declare(method, path, declared):
    assert http_declared(method, path)[0] == declared


@pytest.mark.parametrize(
    ("tool", "wrapper", "declared"),
    [
        ({"name": "x", "type": "READ"}, None, "read"),
        ({"name": "x", "type": "GENERIC"}, None, None),
        ({"type": "function", "function": {"name": "x", "type": "write"}}, None, "write"),
        ({"name": "x"}, {"tool_type": "generic", "mutates_state": True}, "write"),
        ({"name": "x", "annotations": {"readOnlyHint": None, "destructiveHint": None}}, None, None),
    ],
)
def test_tool_declarations(tool, wrapper, declared):
    assert tool_declared(tool, wrapper)[0] == declared


@pytest.mark.parametrize(
    "member",
    ["function_calling/tau2_bench/mock_tools.json", "function_calling/tau2_bench/airline_tools.json"],
)
def test_the_dev_corpus_declared_lists_compile_to_the_declared_kinds(member):
    path = DEV / member
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    raw, _ = read_file(str(path), path.read_bytes())
    ops, _ = normalize(raw)
    declared = [op for op in ops if op.declared is not None]
    assert declared
    tools = _compiled({op.name: op for op in ops})  # (the others are "not modelled": a handoff)
    wrong = [op.name for op in declared if op.name in tools and tools[op.name][0] != op.declared]
    assert wrong == [] and len(tools) >= len(declared) - 1
