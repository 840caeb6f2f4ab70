"""toolgen.ingest on real files of every format and every hard case of the corpus MANIFEST, and
on hostile inputs made here (an alias bomb, tar bombs, a climbing member, an oversized file, a
file that outlasts the per-file timeout)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from toolgen.ingest import read_file, read_paths

from .conftest import SHARED, shared_file

DEV = SHARED / "corpus" / "dev"

#: file → operations, as count_ops.py counts them (BFCL question files: distinct function names)
SAMPLE = {
    # hard cases of the MANIFEST
    "openapi/vendor/stripe__openapi/openapi/spec3.yaml": 468,
    "openapi/vendor/openai__openai-openapi/openapi.yaml": 288,
    "openapi/vendor/discord__discord-api-spec/specs/openapi.json": 242,
    "openapi/vendor/XeroAPI__Xero-OpenAPI/xero-webhooks.yaml": 0,
    "openapi/vendor/Yifan-Song793__RestGPT/specs/spotify_oas.json": 40,
    "openapi/vendor/digitalocean__openapi/specification/DigitalOcean-public.v2.yaml": 659,
    "openapi/apis-guru/azure.com/network-networkInterface/2018-01-01/swagger.yaml": 11,
    "openapi/apis-guru/epa.gov/eff/2019.10.15/swagger.yaml": 8,
    "openapi/apis-guru/kubernetes.io/unversioned/swagger.yaml": 822,
    "openapi/apis-guru/amazonaws.com/iam/2010-05-08/openapi.yaml": 316,
    "openapi/apis-guru/bungie.net/2.11.1/openapi.yaml": 112,
    # one of every other format
    "openapi/vendor/amzn__selling-partner-api-models/models/tokens-api-model/tokens_2021-03-01.json": 1,
    "openapi/vendor/netlify__open-api/swagger.yml": 174,
    "openapi/vendor/paypal__paypal-rest-api-specifications/openapi/catalogs_products_v1.json": 4,
    "openapi/apis-guru/hackathonwatch.com/0.1/openapi.yaml": 4,
    "function_calling/bfcl/BFCL_v4_simple_javascript.json": 50,
    "function_calling/bfcl_multi_turn_func_doc/memory_rec_sum.json": 5,
    "function_calling/tau_bench/airline_tools.json": 14,
    "function_calling/tau2_bench/mock_tools.json": 5,
    "function_calling/tooluniverse/special_tools.json": 3,
    "function_calling/gorilla_apizoo/aryanvichare.json": 2,
    "function_calling/toolbench_rapidapi/Visual_Recognition.json": 1,
    "mcp/docker_mcp_catalog/alfresco/tools.json": 10,
    "mcp/docker_mcp_catalog/wayfound/tools.json": 4,
    "mcp/docker_mcp_catalog/kubectl-mcp-server/tools.json": 26,
    "mcp/livemcpbench/26_MCP_Server_Mermaid_Validator.json": 1,
    "mcp/tools_list_snapshots/mcp-server-fetch.json": 1,
}
INVALID = [
    "function_calling/gorilla_apizoo/Gmail_API.json",
    "function_calling/gorilla_apizoo/KubernetesPodPodTemplateAPI.json",
]
NOT_SPEC = "mcp/docker_mcp_catalog/wayfound/server.yaml"


@pytest.fixture(scope="module")
def sample():
    shared_file("corpus/dev")
    paths = [DEV / rel for rel in [*SAMPLE, *INVALID, NOT_SPEC]]
    return read_paths(paths, workers=2)


def test_every_format_and_hard_case_counts_as_count_ops(sample):
    ops, failed, stats = sample
    for rel, want in SAMPLE.items():
        assert stats.ops_per_file[str(DEV / rel)] == want, rel
    formats = {op.format for op in ops}
    assert formats >= {"openapi-3.0", "openapi-3.1", "swagger-2.0", "openai-tools", "bfcl", "toolbench",
                       "gorilla-apizoo", "mcp-tools", "function-list"}  # fmt: skip
    assert stats.specs == len(SAMPLE) and stats.not_specs == 1 and stats.failed == 2
    assert ops == sorted(ops, key=lambda op: (op.source, op.pointer))


def test_invalid_json_files_are_reported_with_where(sample):
    _, failed, _ = sample
    assert {f.path for f in failed} == {str(DEV / rel) for rel in INVALID}
    assert all("invalid JSON" in f.reason and "line" in f.reason for f in failed)


def test_multi_file_spec_resolves_sibling_files(sample):
    ops, _, stats = sample
    source = str(DEV / "openapi/vendor/digitalocean__openapi/specification/DigitalOcean-public.v2.yaml")
    do = [op for op in ops if op.source == source]
    listing = next(op for op in do if op.path == "/v2/1-clicks" and op.method == "get")
    assert listing.operation_id == "oneClicks_list" and listing.tags == ["1-Click Applications"]
    assert [p.name for p in listing.parameters] == ["type"]
    assert listing.response_schema and "1_clicks" in json.dumps(listing.response_schema)
    assert not [p for p in stats.problems if p.path.startswith(source)]


def test_dangling_sibling_ref_is_a_problem_of_its_operation(sample):
    ops, failed, stats = sample
    source = str(DEV / "openapi/apis-guru/azure.com/network-networkInterface/2018-01-01/swagger.yaml")
    problems = [p for p in stats.problems if p.path.startswith(source + "#/paths/")]
    assert problems and all("applicationGateway.json" in p.reason for p in problems)
    assert source not in {f.path for f in failed}


def test_refs_are_resolved_and_recursion_cut(sample):
    ops, _, _ = sample
    stripe = [op for op in ops if "stripe" in op.source]
    text = json.dumps([op.response_schema for op in stripe])
    assert "$ref" not in text
    assert "(cut)" in text or "depth bound" in text
    customer = next(op for op in stripe if op.path == "/v1/customers/{customer}" and op.method == "post")
    assert customer.request_schema and customer.request_schema.get("properties")


def test_function_formats_carry_their_schemas():
    anthropic = [{"name": "get_weather", "description": "Weather now.",
                  "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]  # fmt: skip
    ops, failed = read_file("anthropic.json", json.dumps(anthropic).encode())
    assert not failed and ops[0].format == "anthropic-tools"
    assert [(p.name, p.required, p.location) for p in ops[0].parameters] == [("city", True, "argument")]
    bfcl = "\n".join(json.dumps({"id": str(i), "function": [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}}}]}) for i in range(3))  # fmt: skip
    ops, _ = read_file("q.json", bfcl.encode())
    assert len(ops) == 1 and ops[0].format == "bfcl"
    assert ops[0].input_schema == {"type": "object", "properties": {"x": {"type": "number"}}}
    # RapidAPI sends a GET's arguments in the query string; a POST's stay arguments
    group = {"tool_name": "Shop", "api_list": [
        {"api_name": "products/list", "method": "GET", "required_parameters": [{"name": "curpage", "type": "NUMBER"}]},
        {"api_name": "products/add", "method": "POST", "required_parameters": [{"name": "name", "type": "STRING"}]},
    ]}  # fmt: skip
    ops, _ = read_file("shop.json", json.dumps([group]).encode())
    assert [(o.format, [p.location for p in o.parameters]) for o in ops] == [
        ("toolbench", ["query"]),
        ("toolbench", ["argument"]),
    ]
    from toolgen.normalize import normalize

    (listed, _added), _ = normalize(ops)
    assert list(listed.input_schema["properties"]) == ["curpage"] and listed.query == ["curpage"]
    assert not listed.renamed  # (no `argument_curpage` beside it)


def test_alias_bomb_fails_fast_and_others_go_on(tmp_path):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 12)]
    (tmp_path / "bomb.yaml").write_text("openapi: 3.0.0\n" + "\n".join(lines) + "\npaths: {}\n")
    (tmp_path / "cycle.yaml").write_text("openapi: 3.0.0\npaths: &p\n  /x: *p\n")
    (tmp_path / "ok.yaml").write_text("openapi: 3.0.0\ninfo: {title: t}\npaths:\n  /a: {get: {}}\n")
    ops, failed, stats = read_paths([tmp_path])
    reasons = {Path(f.path).name: f.reason for f in failed}
    assert "alias bomb" in reasons["bomb.yaml"]
    # a recursive alias never loops: the YAML 1.2 parser reads the alias of an anchor still being
    # defined as null (no operations), the PyYAML fallback refuses it
    assert "recursive YAML alias" in reasons.get("cycle.yaml", "recursive YAML alias")
    assert [op.path for op in ops] == ["/a"]


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


SPEC = b"openapi: 3.0.0\ninfo: {title: t}\npaths:\n  /a: {get: {}}\n"


def test_archives_are_bounded(tmp_path):
    climbing = _tar(tmp_path / "climb.tar.gz", {"../evil.yaml": SPEC, "good/a.yaml": SPEC})
    many = _tar(tmp_path / "many.tar.gz", {f"m{i}.yaml": SPEC for i in range(30)})
    bomb = _tar(tmp_path / "bomb.tar.gz", {"a.yaml": SPEC, "zeros.json": b"0" * 3_000_000, "b.yaml": SPEC})
    ops, failed, _ = read_paths([climbing, many, bomb], max_members=10, max_archive_bytes=1_000_000)
    reasons = {f.path: f.reason for f in failed}
    assert "leaves the archive" in reasons[f"{climbing}!../evil.yaml"]
    assert "more than 10 members" in reasons[str(many)]
    assert "more than 1,000,000 bytes" in reasons[str(bomb)]
    assert not (tmp_path / "evil.yaml").exists()
    sources = {op.source for op in ops}
    assert f"{climbing}!good/a.yaml" in sources and f"{bomb}!a.yaml" in sources
    assert len([s for s in sources if s.startswith(str(many))]) == 10


def test_oversized_file_is_refused_unread(tmp_path):
    (tmp_path / "big.json").write_bytes(b"[" + b"0," * 600 + b"0]")
    (tmp_path / "ok.yaml").write_bytes(SPEC)
    ops, failed, _ = read_paths([tmp_path], max_file_bytes=1000)
    assert [f.reason for f in failed] == ["file is 1,203 bytes, over the 1,000-byte limit"]
    assert len(ops) == 1


def test_a_file_past_the_timeout_is_killed_and_reported(tmp_path):
    paths = "".join(
        f"  /p{i}/{{id}}:\n    get:\n      parameters: [{{name: id, in: path}}]\n" for i in range(40_000)
    )
    (tmp_path / "slow.yaml").write_text("openapi: 3.0.0\ninfo: {title: slow}\npaths:\n" + paths)
    (tmp_path / "ok.yaml").write_bytes(SPEC)
    ops, failed, stats = read_paths([tmp_path], workers=2, timeout_s=0.05)
    assert [(Path(f.path).name, f.reason) for f in failed] == [
        ("slow.yaml", "reading took longer than 0.05 s: stopped")
    ]
    assert [op.source for op in ops] == [str(tmp_path / "ok.yaml")]


def test_worker_count_does_not_change_the_result(tmp_path):
    shared_file("corpus/dev")
    paths = [DEV / rel for rel in list(SAMPLE)[11:]]
    serial = read_paths(paths, workers=0)
    parallel = read_paths(paths, workers=2)
    assert serial[0] == parallel[0] and serial[1] == parallel[1]


@pytest.mark.parametrize("workers", [0, 2])
def test_with_require_specs_a_named_file_that_is_no_spec_fails_saying_why(tmp_path, workers):
    from toolgen.ingest.files import NOT_A_SPEC

    named = {
        "hello.json": (
            '{"hello": 1}',
            "an object with no `openapi` or `swagger` version and no tools in it (keys: hello)",
        ),
        "list.yaml": ("- a\n- b\n", "a list of 2 items, none of them a tool"),
        "old.json": ('{"swagger": "1.2"}', "Swagger 1.2 is not read"),
        "empty.yaml": ("", "the file is empty"),
        "word.yaml": ("hello\n", "a single str value"),
    }
    for name, (text, _) in named.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "package.json").write_text('{"name": "x"}', encoding="utf-8")
    paths = [tmp_path / name for name in named] + [tmp_path / "corpus"]
    _, failed, stats = read_paths(paths, workers=workers, require_specs=True)
    reasons = {Path(f.path).name: f.reason for f in failed}
    assert set(reasons) == set(named)  # the folder's package.json is counted, not failed
    for name, (_, why) in named.items():
        assert reasons[name].startswith(f"{NOT_A_SPEC}: {why}"), reasons[name]
    assert (stats.failed, stats.not_specs) == (len(named), 1)
    _, failed, stats = read_paths(paths, workers=workers)  # without: every one only counted
    assert failed == [] and stats.not_specs == len(named) + 1


def test_a_scalar_past_the_depth_bound_keeps_its_type():
    """AWS-style chains (response → result → record → `nameType`) nest scalars past the bound:
    the scalar keeps its type and pattern; an object past it is cut to a named stub."""
    from toolgen.ingest.refs import MAX_REF_DEPTH, Resolver

    chain = {
        f"L{i}": {"type": "object", "properties": {"next": {"$ref": f"#/d/L{i + 1}"}}}
        for i in range(MAX_REF_DEPTH)
    }
    chain[f"L{MAX_REF_DEPTH}"] = {
        "type": "string",
        "pattern": "[a-z]+",
        "maxLength": 9,
        "x": {"$ref": "#/d/L0"},
    }
    node = Resolver({"d": chain}).schema({"$ref": "#/d/L0"}, "")
    for _ in range(MAX_REF_DEPTH):
        node = node["properties"]["next"]
    assert node == {"type": "string", "pattern": "[a-z]+", "maxLength": 9}
    cut = Resolver(
        {"d": {**chain, f"L{MAX_REF_DEPTH}": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    )
    node = cut.schema({"$ref": "#/d/L0"}, "")
    for _ in range(MAX_REF_DEPTH):
        node = node["properties"]["next"]
    assert node["type"] == "object" and "properties" not in node and "depth bound" in node["description"]
