"""Fuzzing tools: schema-valid arguments must give a result or a precise tool error, nothing else.

Calls each tool with arguments drawn from its input JSON Schema (hypothesis, derandomized) and
reports a finding for every call whose arguments reached a bug instead of a worded tool error.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from simulator import Domain, ToolError
from simulator.codegen.fastschema import compile_check
from simulator.errors import CallFailed

from ..tasks import graded

#: Calls per tool unless told otherwise (`toolgym validate --fuzz N`).
#: Distinct errors reported per tool, and the length arguments and errors are cut to.
MAX_FINDINGS = 3
MAX_TEXT = 300
#: What pattern-drawn strings are made of: any character but non-ASCII digits, because a JSON
#: Schema pattern's `\d` (ECMA-262) is [0-9], where Python's matches every Unicode digit — drawn
#: by Python's rules, most strings of a date-time pattern were refused by the check and drawing
#: one took seconds.
PATTERN_ALPHABET = st.characters(exclude_categories=("Nd", "Cs"), include_characters="0123456789")
#: Bounds on drawn sizes (the schema's own bounds win when tighter).
MAX_ITEMS = 4
MAX_CHARS = 24


class ToolFinding(BaseModel):
    """A tool that raised something other than a precise tool error on schema-valid arguments."""

    tool: str
    arguments: str = Field(description="the arguments that triggered it, as JSON (cut to a bounded length)")
    error: str = Field(description="the exception's type and message (cut to a bounded length)")


class ToolFuzz(BaseModel):
    """What fuzzing one tool found."""

    tool: str
    calls: int = 0
    findings: list[ToolFinding] = Field(default_factory=list)


def cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- values the seed and the tasks know, by name ------------------------------------------------

Pools = dict[str, list[Any]]


def _ordered(values: Iterable[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for v in values:
        if isinstance(v, str | int | float) and not isinstance(v, bool):
            seen.setdefault(json.dumps(v), v)
    return [seen[k] for k in sorted(seen)]


def _leaf_values(value: Any, key: str | None, out: dict[str, list[Any]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _leaf_values(v, k, out)
    elif isinstance(value, list):
        for v in value:
            _leaf_values(v, key, out)
    elif key is not None:
        out.setdefault(key, []).append(value)


def pools(domain: Domain) -> Pools:
    """Column name -> its seed values and the values gold calls pass under that name; "" -> the
    seed's string keys and unique values (identifiers)."""
    found: dict[str, list[Any]] = {}
    ids: list[Any] = []
    for name, info in domain.tables.items():
        uniques = {info.pk} | {c for c, spec in info.spec.columns.items() if spec.unique}
        for row in domain.seed_rows.get(name, []):
            for column, value in row.items():
                found.setdefault(column, []).append(value)
                if column in uniques and isinstance(value, str):
                    ids.append(value)
    for task in graded(domain).tasks:
        for call in task.calls:
            _leaf_values(call.arguments, None, found)
    out = {k: _ordered(v) for k, v in found.items()}
    out[""] = _ordered(ids)
    return {k: v for k, v in out.items() if v}


def seen_pools(values: Iterable[Any]) -> Pools:
    """Pools from JSON values an agent has seen (e.g. earlier results): leaf values by the key they
    sit under; "" -> the strings under id-like keys (`id`, `*_id`)."""
    found: dict[str, list[Any]] = {}
    for value in values:
        _leaf_values(value, None, found)
    out = {k: _ordered(v) for k, v in found.items()}
    out[""] = _ordered(v for k, vs in found.items() if k == "id" or k.endswith("_id") for v in vs)
    return {k: v for k, v in out.items() if v}


def _pool(pools: Pools, key: str | None) -> list[Any]:
    if key is None:
        return []
    for name in (key, key[:-1] if key.endswith("s") else key):
        if name in pools:
            return pools[name]
    return []


# -- arguments from a JSON Schema ---------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _numbers(schema: dict[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    low, high = schema.get("minimum"), schema.get("maximum")
    xlow, xhigh = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if integer:
        lo = max(
            [math.ceil(v) for v in (low,) if v is not None]
            + [math.floor(v) + 1 for v in (xlow,) if v is not None],
            default=None,
        )
        hi = min(
            [math.floor(v) for v in (high,) if v is not None]
            + [math.ceil(v) - 1 for v in (xhigh,) if v is not None],
            default=None,
        )
        return st.integers(min_value=lo, max_value=hi)
    floats = st.floats(
        min_value=xlow if low is None else low,
        max_value=xhigh if high is None else high,
        exclude_min=low is None and xlow is not None,
        exclude_max=high is None and xhigh is not None,
        allow_nan=False,
        allow_infinity=False,
    )
    return floats | _numbers(schema, integer=True)


def _strings(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    if "pattern" in schema:  # JSON Schema patterns search, as hypothesis's from_regex does
        base: st.SearchStrategy[str] = st.from_regex(schema["pattern"], alphabet=PATTERN_ALPHABET)
    else:
        base = st.text(min_size=low, max_size=max(low, MAX_CHARS if high is None else int(high)))
    return base


def _typed(schema: dict[str, Any], kind: str, key: str | None, pools: Pools) -> st.SearchStrategy[Any]:
    if kind == "object":
        return _object(schema, pools)
    if kind == "array":
        item = schema.get("items", {})
        low = int(schema.get("minItems", 0))
        high = min(int(schema.get("maxItems", low + MAX_ITEMS)), low + MAX_ITEMS)
        return st.lists(
            strategy(item if isinstance(item, dict) else {}, key, pools), min_size=low, max_size=high
        )
    if kind == "string":
        return _strings(schema)
    if kind in ("integer", "number"):
        return _numbers(schema, integer=kind == "integer")
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return _JSON


def _object(schema: dict[str, Any], pools: Pools) -> st.SearchStrategy[dict[str, Any]]:
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    fixed = {k: strategy(s, k, pools) for k, s in props.items() if k in required}
    optional = {k: strategy(s, k, pools) for k, s in props.items() if k not in required}
    for k in required - set(props):
        fixed[k] = _JSON
    shaped = st.fixed_dictionaries(fixed, optional=optional)
    extra = schema.get("additionalProperties", True)
    if extra is False or (not isinstance(extra, dict) and props):
        return shaped
    more = strategy(extra if isinstance(extra, dict) else {}, None, pools)
    return st.tuples(shaped, st.dictionaries(st.text(max_size=8), more, max_size=2)).map(
        lambda pair: {**pair[1], **pair[0]}
    )


def strategy(
    schema: dict[str, Any], key: str | None = None, pools: Pools | None = None
) -> st.SearchStrategy[Any]:
    """Values valid against `schema` (checked: a drawn value that is not is filtered out); under a
    property named like a column, most of them from that column's known values."""
    pools = pools or {}
    check = compile_check(schema)
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list):
        return st.sampled_from(schema["enum"])
    for combo in ("anyOf", "oneOf"):
        if isinstance(schema.get(combo), list) and schema[combo]:
            rest = {k: v for k, v in schema.items() if k != combo}
            base = st.one_of([strategy({**rest, **sub}, key, pools) for sub in schema[combo]])
            break
    else:
        kinds = schema.get("type")
        names = kinds if isinstance(kinds, list) else [kinds] if kinds else []
        base = st.one_of([_typed(schema, k, key, pools) for k in names]) if names else _JSON
    if check is not None:
        known = [v for v in _pool(pools, key) if check(v)]
        if not known and key is not None and "string" in (schema.get("type") or ""):
            known = [v for v in pools.get("", []) if check(v)]
        if known:
            seeded, drawn = st.sampled_from(known), base
            base = st.integers(0, 3).flatmap(lambda k: drawn if k == 0 else seeded)
        return base.filter(check)
    return base


# -- running -----------------------------------------------------------------------------------


def _problem(exc: BaseException) -> bool:
    """A finding: anything but a failure the engine meant (the agent's ToolError, or an InfraError
    such as the server's wall-clock limit), or a ToolError the engine raised as a backstop."""
    return not isinstance(exc, CallFailed) or isinstance(exc, ToolError) and exc.unguarded


def fuzz_tool(domain: Domain, tool: str, calls: int, known: Pools | None = None) -> ToolFuzz:
    """Call `tool` up to `calls` times with schema-valid arguments on a fresh episode (seeded)."""
    report = ToolFuzz(tool=tool)
    if calls <= 0:
        return report
    schema = domain.tools[tool].spec.input_schema
    validator = domain.validators[tool]
    args_strategy = strategy(schema, None, pools(domain) if known is None else known)
    errors: set[str] = set()
    with domain.episode() as ep:

        def attempt(arguments: dict[str, Any]) -> None:
            if not validator.is_valid(arguments):  # (the strategy filters; this is the engine's word)
                return
            report.calls += 1
            try:
                ep.call(tool, arguments)
            except Exception as exc:
                if not _problem(exc):
                    return
                error = cut(f"{type(exc).__name__}: {exc}")
                signature = error.split(":", 2)[:2]
                if len(report.findings) < MAX_FINDINGS and str(signature) not in errors:
                    errors.add(str(signature))
                    text = json.dumps(arguments, ensure_ascii=False, default=str)
                    report.findings.append(ToolFinding(tool=tool, arguments=cut(text), error=error))

        run: Callable[[], None] = settings(
            max_examples=calls,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )(given(args_strategy)(attempt))
        try:
            run()
        except Exception as exc:  # hypothesis could not draw enough arguments: say so, go on
            report.findings.append(
                ToolFinding(
                    tool=tool,
                    arguments="",
                    error=cut(f"could not draw arguments: {type(exc).__name__}: {exc}"),
                )
            )
    return report


def fuzz_domain(domain: Domain, calls: int) -> list[ToolFuzz]:
    """Fuzz every tool of a domain (see the module docstring)."""
    known = pools(domain)
    return [fuzz_tool(domain, name, calls, known) for name in sorted(domain.tools)]
