"""An existing domain folder re-expressed through the builders (`lift_domain`), and its parts.

Expressions go through the language's parser (`simulator.lang.parse`) and come back as builder
calls (`ref`, `ops.NAME`, `obj`, `map_`, `template`, ...), steps through the step builders, tasks
through `call`/`calls_ref`; so what the builders emit for a domain can be checked against the
domain as written (tests rebuild every bundled domain and replay its pinned gold digests), and a
generator can start from a hand-written domain and add to it. What comes out is written in the
current spellings (`get` -> `get_key`, filter `prefix` -> `starts_with`): it checks without warnings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from .. import lang
from ..format.callsyntax import CallRef
from ..format.spec import FILTER_ALIASES
from ..lang import nodes
from .domain import NOW_DEFAULT, DomainBuilder, call, calls_ref, column
from .expr import Expr, Formatted, Ref, Template, expr, filter_, has, literal, map_, obj, op, ref, template
from .steps import (
    F,
    Filter,
    Step,
    count,
    create,
    delete,
    fail,
    for_each,
    get,
    let,
    list_,
    require,
    return_,
    sum_,
    update,
    use,
)

__all__ = ["lift_domain", "lift_expr", "lift_steps", "lift_template"]


def lift_expr(raw: Any) -> Expr:
    """An expression as written -> the builder calls that write it (ExprError when malformed)."""
    return _node(lang.parse(raw))


def lift_template(text: str) -> Template:
    """Template text as written -> `template(...)` of its text pieces and holes."""
    return _template(lang.parse_template(text))


def _ref(node: nodes.Ref) -> Ref:
    return ref(node.head, *node.rest)


def _template(node: nodes.Template) -> Template:
    parts: list[str | Ref | Formatted] = []
    for piece in node.pieces:
        if isinstance(piece, str):
            parts.append(piece)
        elif piece.spec is None:
            parts.append(_ref(piece.ref))
        else:
            parts.append(_ref(piece.ref).fmt(piece.spec))
    return template(*parts)


def _node(node: nodes.Node) -> Expr:
    if isinstance(node, nodes.Literal):
        return literal(node.value) if node.spelled == "literal" else Expr(expr(node.value))
    if isinstance(node, nodes.Ref):
        return _ref(node)
    if isinstance(node, nodes.ListNode):
        return Expr([_node(item).raw for item in node.items])
    if isinstance(node, nodes.ObjectNode):
        return obj({key: _node(value) for key, value in node.fields})
    if isinstance(node, nodes.Template):
        return Expr({"format": _template(node).text})
    if isinstance(node, nodes.Binder):
        build = map_ if node.op == "map" else filter_
        return build(_node(node.over), node.var, _node(node.body), node.index)
    if isinstance(node, nodes.Call):
        if node.op == "has" and len(node.args) == 1 and isinstance(node.args[0], nodes.Literal):
            return has(str(node.args[0].value))
        if node.op == "has":
            return has(_node(node.args[0]), _node(node.args[1]))
        return op(node.op, *(_node(a) for a in node.args))
    raise TypeError(f"no builder for {type(node).__name__}")


def _opt(raw: Mapping[str, Any], key: str, fn: Callable[[Any], Any] = lift_expr) -> Any:
    return fn(raw[key]) if key in raw else None


def _filters(raw: Any) -> list[Filter]:
    out = []
    for f in raw or []:
        value = lift_expr(f["value"]) if "value" in f else None
        op = f.get("op", "eq")
        out.append(F(f["column"]).op(FILTER_ALIASES.get(op, op), value, skip_if_null=f.get("skip_if_null")))
    return out


def _values(raw: Any) -> dict[str, Expr] | None:
    return None if raw is None else {str(k): lift_expr(v) for k, v in raw.items()}


def _step(raw: Mapping[str, Any]) -> Step:
    common: dict[str, Any] = {"when": _opt(raw, "when")}
    if raw.get("internal"):
        common["internal"] = True
    if "as" in raw and "for_each" not in raw:
        common["as_"] = raw["as"]
    error = _opt(raw, "error", lift_template)
    if "get" in raw:
        return get(
            raw["get"],
            key=_values(raw.get("key")),
            where=_filters(raw["where"]) if "where" in raw else None,
            order_by=raw.get("order_by", ()),
            error=error,
            optional=raw.get("optional", False),
            join=raw.get("join"),
            **common,
        )
    if "list" in raw or "search" in raw:
        return list_(
            raw.get("list", raw.get("search")),
            where=_filters(raw.get("where")),
            order_by=raw.get("order_by", ()),
            limit=_opt(raw, "limit"),
            offset=_opt(raw, "offset"),
            max_limit=raw.get("max_limit", 100),
            join=raw.get("join"),
            **common,
        )
    if "count" in raw:
        return count(raw["count"], where=_filters(raw.get("where")), **common)
    if "sum" in raw:
        return sum_(raw["sum"], raw["column"], where=_filters(raw.get("where")), **common)
    if "create" in raw:
        return create(raw["create"], _values(raw["values"]) or {}, **common)
    if "update" in raw or "delete" in raw:
        where = _filters(raw["where"]) if "where" in raw else None
        if "update" in raw:
            return update(
                raw["update"],
                _values(raw.get("set")),
                patch=_values(raw.get("patch")),
                key=_values(raw.get("key")),
                where=where,
                error=error,
                **common,
            )
        return delete(raw["delete"], key=_values(raw.get("key")), where=where, error=error, **common)
    if "require" in raw:
        return require(lift_expr(raw["require"]), error, **common)
    if "fail" in raw:
        return fail(lift_template(raw["fail"]), **common)
    if "let" in raw:
        return let(raw["let"], lift_expr(raw["value"]), **common)
    if "for_each" in raw:
        body = lift_steps(raw["steps"])
        over = lift_expr(raw["for_each"])
        return for_each(over, raw["as"], body, index=raw.get("index"), collect=raw.get("collect"), **common)
    if "return" in raw:
        return return_(lift_expr(raw["return"]), **common)
    if "use" in raw:
        return use(raw["use"], _values(raw.get("with")), **common)
    raise ValueError(f"no step builder for a step with keys {sorted(raw)}")


def lift_steps(raw: Any) -> list[Step]:
    """An operation (one step or a list) as written -> step builders."""
    return [_step(s) for s in (raw if isinstance(raw, list) else [raw])]


def _argument(value: Any) -> Any:
    """A gold call's argument as written -> the literal it means, or a `calls_ref`."""
    if isinstance(value, str):
        if value.startswith("$$"):
            return value[1:]
        reference = CallRef.parse(value)
        if reference is not None:
            if reference.index is None:
                raise ValueError(f"{value}: not a reference to a call (write $calls.N.path)")
            return calls_ref(reference.index, *reference.path)
        return value
    if isinstance(value, list):
        return [_argument(v) for v in value]
    if isinstance(value, dict):
        return {k: _argument(v) for k, v in value.items()}
    return value


def _column(raw: Mapping[str, Any]) -> dict[str, Any]:
    options = dict(raw)
    if options.get("default") == "$now":
        options["default"] = NOW_DEFAULT
    return column(**options)


def lift_domain(folder: str | Path) -> DomainBuilder:
    """A domain folder (domain.yaml, policy.md, seed/*.jsonl, tasks.jsonl) rebuilt with the builders."""
    root = Path(folder)
    raw = yaml.safe_load((root / "domain.yaml").read_text(encoding="utf-8"))
    policy = raw.get("policy")
    if policy is None and (root / "policy.md").exists():
        policy = (root / "policy.md").read_text(encoding="utf-8")
    d = DomainBuilder(
        raw["name"],
        raw["version"],
        description=raw.get("description", ""),
        policy=policy,
        clock=raw.get("clock"),
        answers=raw.get("answers"),
    )
    for name, table in raw["tables"].items():
        options = {k: v for k, v in table.items() if k not in ("primary_key", "columns")}
        columns = {c: _column(spec) for c, spec in table["columns"].items()}
        d.table(name, table["primary_key"], columns, **options)
    for name, fragment in (raw.get("fragments") or {}).items():
        d.fragment(name, fragment.get("params", []), lift_steps(fragment["steps"]))
    for tool in raw["tools"]:
        operation = lift_steps(tool["operation"])
        d.tool(
            tool["name"],
            tool["description"],
            tool["kind"],
            tool.get("input_schema", {"type": "object", "properties": {}}),
            operation[0] if isinstance(tool["operation"], dict) else operation,
            output_schema=tool.get("output_schema"),
        )
    for path in sorted((root / "seed").glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        d.seed(path.stem, rows)
    tasks = root / "tasks.jsonl"
    if tasks.exists():
        for line in tasks.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            task = json.loads(line)
            calls = [
                call(c["name"], _argument(c.get("arguments", {})), expect_error=c.get("expect_error", False))
                | {k: v for k, v in c.items() if k not in ("name", "arguments", "expect_error")}
                for c in task.pop("calls", [])
            ]
            d.task(task.pop("id"), task.pop("instruction"), calls, **task)
    return d
