"""Expressions of the operation language, compiled once into Python closures.

An expression is a literal, a `$reference` (`$args.x`, `$name.col`, `$now`), a list of
expressions, or a one-key mapping naming an operator (`add`, `eq`, `object`, ...). Compiling
checks every reference against the names in scope, so a typo is a load-time problem, not a
runtime surprise. Evaluation never builds SQL: values reach the database only as bound parameters.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from .budget import charge, count_of, member
from .calc import calc
from .errors import ToolError, ToolgymError
from .tables import json_type

Env = dict[str, Any]
Compiled = Callable[[Env], Any]


class ExprError(ToolgymError):
    """An expression is malformed or refers to a name that is not in scope (load time)."""


class EvalError(ToolError):
    """An expression could not be evaluated on these values: a tool error, worded for the agent.

    The values come from the agent's arguments and the rows they reach, so the failure is the
    agent's to act on (validation replays every gold call, so a domain whose own calls fail is caught).
    """


class Scope:
    """Names visible to an expression: argument names and bound names."""

    def __init__(self, args: Iterable[str] | None, names: Iterable[str] = ()):
        self.args = None if args is None else set(args)
        self.names = set(names) | {"args", "now"}

    def child(self, *names: str) -> Scope:
        scope = Scope(self.args, self.names)
        scope.names.update(n for n in names if n)
        return scope

    def add(self, name: str | None) -> None:
        if name:
            self.names.add(name)


_INDEX = re.compile(r"-?[0-9]+", re.ASCII)
_LIMIT = 10**308  # numbers beyond a double's range are out of range, integers included


def _walk(value: Any, parts: list[str]) -> Any:
    for part in parts:
        if value is None:
            return None
        if isinstance(value, list):
            if _INDEX.fullmatch(part):
                i = int(part)
                value = value[i] if -len(value) <= i < len(value) else None
            else:
                value = [_walk(v, [part]) for v in value]
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def argument_name(expr: Any) -> str | None:
    """The one argument an expression reads (`$args.NAME` anywhere inside it), if exactly one.

    Errors about a value name it in the agent's words: "min_amount is out of range".
    """
    names: set[str] = set()

    def visit(value: Any) -> None:
        if isinstance(value, str) and value.startswith("$args.") and len(names) < 2:
            names.add(value[len("$args.") :].split(".", 1)[0])
        elif isinstance(value, list):
            for v in value:
                visit(v)
        elif isinstance(value, dict) and "literal" not in value:
            for v in value.values():
                visit(v)

    visit(expr)
    return next(iter(names)) if len(names) == 1 else None


def compile_ref(ref: str, scope: Scope) -> Compiled:
    """Compile `$name.path.to.value` (without the `$`)."""
    parts = ref.split(".")
    head, rest = parts[0], parts[1:]
    if head not in scope.names:
        raise ExprError(f"unknown name ${head} (bound names here: {', '.join(sorted(scope.names))})")
    if head == "args" and rest and scope.args is not None and rest[0] not in scope.args:
        raise ExprError(f"$args.{rest[0]} is not a property of the tool's input_schema")
    if not rest:
        return lambda env: env.get(head)
    if len(rest) == 1:
        key = rest[0]

        def one(env: Env) -> Any:
            value = env.get(head)
            if isinstance(value, dict):
                return value.get(key)
            return _walk(value, rest)

        return one
    return lambda env: _walk(env.get(head), rest)


_TEMPLATE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)(?::([^{}]*))?\}")


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(value)
    return json.dumps(value, sort_keys=True, default=str)


def _formatted(ref: Compiled, spec: str) -> Compiled:
    """`{x:.2f}`: a Python format spec applied to the value (the raw value when it does not apply)."""
    try:
        format(1.5, spec)
    except ValueError:
        try:
            format("x", spec)
        except ValueError as exc:
            raise ExprError(f"bad format spec {spec!r} in template") from exc

    def apply(env: Env) -> Any:
        value = ref(env)
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            return value

    return apply


def compile_template(template: str, scope: Scope) -> Callable[[Env], str]:
    """`"No order {args.order_id}"` -> a function of the environment. `{{`/`}}` are literal braces."""
    pieces: list[str | Compiled] = []
    last = 0
    for match in _TEMPLATE.finditer(template):
        pieces.append(template[last : match.start()])
        token = match.group(0)
        if token in ("{{", "}}"):
            pieces.append(token[0])
        elif match.group(2):
            pieces.append(_formatted(compile_ref(match.group(1), scope), match.group(2)))
        else:
            pieces.append(compile_ref(match.group(1), scope))
        last = match.end()
    pieces.append(template[last:])
    if all(isinstance(p, str) for p in pieces):
        text = "".join(p for p in pieces if isinstance(p, str))
        return lambda env: text
    return lambda env: "".join(p if isinstance(p, str) else _show(p(env)) for p in pieces)


def brief(value: Any, limit: int = 60) -> str:
    """A value as JSON text for an error message, cut to `limit` characters."""
    try:
        text = json.dumps(value, default=str, allow_nan=True)
    except ValueError:  # an integer too long to print
        text = f"<{json_type(value)}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _num(value: Any, op: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EvalError(f"{op}: expected a number, got {brief(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise EvalError(f"{op}: expected a finite number, got {value}")
    return value


def _ranged(value: float | int, op: str) -> float | int:
    """An arithmetic result, checked: an overflow is the agent's tool error, never inf or a giant integer."""
    if (
        isinstance(value, float)
        and not math.isfinite(value)
        or isinstance(value, int)
        and abs(value) > _LIMIT
    ):
        raise EvalError(f"{op}: the result is out of range (overflow)")
    return value


def _seq(value: Any, op: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise EvalError(f"{op}: expected a list, got {brief(value)}")
    return value


def _sum(values: Any) -> Any:
    total: float | int = 0
    for v in _seq(values, "sum"):
        total += _num(v, "sum")
    return _ranged(total, "sum")


def _add(*vs: Any) -> Any:
    total: float | int = 0
    for v in vs:
        total += _num(v, "add")
    return _ranged(total, "add")


def _sub(a: Any, b: Any) -> Any:
    return _ranged(_num(a, "sub") - _num(b, "sub"), "sub")


def _mul(*vs: Any) -> Any:
    total: float | int = 1
    for v in vs:
        total = _ranged(total * _num(v, "mul"), "mul")
    return total


def _div(a: Any, b: Any) -> Any:
    if _num(b, "div") == 0:
        raise EvalError("div: cannot divide by zero")
    return _ranged(_num(a, "div") / b, "div")


def _cmp(op: str) -> Callable[[Any, Any], bool]:
    import operator

    fn = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}[op]

    def compare(a: Any, b: Any) -> bool:
        if a is None or b is None:
            return False
        try:
            return bool(fn(a, b))
        except TypeError:
            raise EvalError(f"{op}: cannot compare {json_type(a)} with {json_type(b)}") from None

    return compare


def _minmax(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def apply(*vs: Any) -> Any:
        values = vs[0] if len(vs) == 1 and isinstance(vs[0], list) else list(vs)
        values = [v for v in values if v is not None]
        return fn(values) if values else None

    return apply


def _whole(value: Any, op: str) -> int:
    """A whole number (an integer, or a float without a fraction) as an int."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise EvalError(f"{op}: expected a whole number, got {brief(value)}")
    return value


def _round(value: Any, digits: Any = 0) -> Any:
    n = _whole(digits, "round")
    return round(_num(value, "round"), max(-400, min(n, 400)))  # beyond that, rounding changes nothing


def _at(values: Any, index: Any) -> Any:
    seq = _seq(values, "at")
    i = _whole(index, "at")
    return seq[i] if -len(seq) <= i < len(seq) else None


def _unique(values: Any) -> list[Any]:
    items = _seq(values, "unique")
    charge(len(items))
    try:
        return list(dict.fromkeys(items))  # first occurrences, in order (keys compare as `==` does)
    except TypeError:  # unhashable values (objects, lists): compare pairwise
        charge(len(items) * len(items) // 2)
    seen: list[Any] = []
    for v in items:
        if v not in seen:
            seen.append(v)
    return seen


def _contains(container: Any, value: Any) -> bool:
    if container is None:
        return False
    if isinstance(container, str):
        return isinstance(value, str) and value in container
    return member(_seq(container, "contains"), value)


def _append(items: list[Any], value: Any) -> list[Any]:
    charge(len(items))
    return [*items, value]


def _merge(*objs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for obj in objs:
        if obj is None:
            continue
        if not isinstance(obj, dict):
            raise EvalError(f"merge: expected an object, got {brief(obj)}")
        out.update(obj)
    return out


def _get(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict):
        return obj.get(key if isinstance(key, str) else str(key))
    if isinstance(obj, list) and isinstance(key, int):
        return _at(obj, key)
    return None


def _pluck(values: Any, field: Any) -> list[Any]:
    items = _seq(values, "pluck")
    charge(len(items))
    return [v.get(field) if isinstance(v, dict) else None for v in items]


def _exists(value: Any) -> bool:
    return value is not None and value != [] and value != {} and value != ""


def _concat(*vs: Any) -> str:
    text = "".join(_show(v) for v in vs if v is not None)
    charge(len(text))
    return text


def _dt(value: Any, op: str) -> datetime:
    if not isinstance(value, str):
        raise EvalError(f"{op}: expected an ISO-8601 date-time string, got {brief(value)}")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise EvalError(f"{op}: {brief(value)} is not an ISO-8601 date-time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _dt_text(value: datetime, like: str) -> str:
    if like.endswith("Z") and value.utcoffset() == timedelta(0):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value.isoformat()


def _datetime_add(value: Any, seconds: Any) -> str:
    try:
        moved = _dt(value, "datetime_add") + timedelta(seconds=_num(seconds, "datetime_add"))
    except OverflowError:
        raise EvalError("datetime_add: the resulting date-time is out of range (years 1 to 9999)") from None
    return _dt_text(moved, value)


def _datetime_diff(a: Any, b: Any) -> float:
    try:
        seconds = (_dt(a, "datetime_diff") - _dt(b, "datetime_diff")).total_seconds()
    except OverflowError:  # e.g. year 1 in one time zone minus year 9999 in another
        raise EvalError("datetime_diff: the date-times are too far apart") from None
    return int(seconds) if seconds.is_integer() else seconds


def _sort(values: Any, field: Any = None) -> list[Any]:
    """Ascending (nulls first); `field` sorts objects by a field, `-field` descending. Stable."""
    items = list(_seq(values, "sort"))
    charge(len(items))
    reverse = isinstance(field, str) and field.startswith("-")
    key = field[1:] if reverse else field
    try:
        if key is None:
            return sorted(items, key=lambda v: (v is not None, v), reverse=reverse)
        return sorted(
            items,
            key=lambda v: (v.get(key) is not None, v.get(key)) if isinstance(v, dict) else (False, None),
            reverse=reverse,
        )
    except TypeError:
        raise EvalError("sort: values of different types cannot be ordered") from None


def _object_from(keys: Any, values: Any) -> dict[str, Any]:
    ks, vs = _seq(keys, "object_from"), _seq(values, "object_from")
    if len(ks) != len(vs):
        raise EvalError(f"object_from: {len(ks)} keys but {len(vs)} values")
    out: dict[str, Any] = {}
    for k, v in zip(ks, vs, strict=True):
        if not isinstance(k, str):
            raise EvalError(f"object_from: keys must be strings, got {brief(k)}")
        out[k] = v
    return out


def _pick(obj: Any, keys: Any, keep: bool) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise EvalError(f"{'pick' if keep else 'omit'}: expected an object, got {brief(obj)}")
    names = _seq(keys, "pick")
    if keep:
        return {k: obj[k] for k in names if k in obj}
    return {k: v for k, v in obj.items() if k not in names}


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, sort_keys=True)


def _join(values: Any, sep: Any = ", ") -> str:
    items = _seq(values, "join")
    charge(len(items))
    return str(sep).join(_show(v) for v in items)


def _to_number(value: Any) -> Any:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            number = int(value) if re.fullmatch(r"[+-]?\d+", value.strip()) else float(value)
        except ValueError:  # not a number, or an integer too long to read
            return None
        return number if isinstance(number, int) or math.isfinite(number) else None
    return None


def _str_test(fn: Callable[[str, str], bool]) -> Callable[[Any, Any], bool]:
    return lambda a, b: isinstance(a, str) and isinstance(b, str) and fn(a, b)


# operator name -> (function, arity): arity None = any number of arguments, evaluated eagerly
_FUNCS: dict[str, tuple[Callable[..., Any], int | None]] = {
    "add": (_add, None),
    "sub": (_sub, 2),
    "mul": (_mul, None),
    "div": (_div, 2),
    "neg": (lambda a: -_num(a, "neg"), 1),
    "abs": (lambda a: abs(_num(a, "abs")), 1),
    "round": (_round, None),
    "min": (_minmax(min, "min"), None),
    "max": (_minmax(max, "max"), None),
    "eq": (lambda a, b: a == b, 2),
    "ne": (lambda a, b: a != b, 2),
    "lt": (_cmp("lt"), 2),
    "le": (_cmp("le"), 2),
    "gt": (_cmp("gt"), 2),
    "ge": (_cmp("ge"), 2),
    "in": (lambda a, b: member(_seq(b, "in"), a), 2),
    "not_in": (lambda a, b: not member(_seq(b, "not_in"), a), 2),
    "not": (lambda a: not a, 1),
    "is_null": (lambda a: a is None, 1),
    "exists": (_exists, 1),
    "len": (lambda a: len(_seq(a, "len")) if not isinstance(a, str | dict) else len(a), 1),
    "sum": (_sum, 1),
    "count": (lambda xs, v: count_of(_seq(xs, "count"), v), 2),
    "at": (_at, 2),
    "unique": (_unique, 1),
    "append": (lambda xs, v: _append(_seq(xs, "append"), v), 2),
    "contains": (_contains, 2),
    "pluck": (_pluck, 2),
    "merge": (_merge, None),
    "get": (_get, 2),
    "concat": (_concat, None),
    "lower": (lambda a: a.lower() if isinstance(a, str) else a, 1),
    "starts_with": (_str_test(str.startswith), 2),
    "ends_with": (_str_test(str.endswith), 2),
    "join": (_join, None),
    "sort": (_sort, None),
    "object_from": (_object_from, 2),
    "index_by": (lambda xs, f: _object_from(_pluck(xs, f), xs), 2),
    "pick": (lambda o, ks: _pick(o, ks, True), 2),
    "omit": (lambda o, ks: _pick(o, ks, False), 2),
    "compact": (lambda o: {k: v for k, v in o.items() if v is not None} if isinstance(o, dict) else o, 1),
    "calc": (lambda text: calc(text), 1),
    "to_string": (_to_string, 1),
    "chars": (lambda a: list(a) if isinstance(a, str) else [], 1),
    "to_number": (lambda a: _to_number(a), 1),
    "datetime_add": (_datetime_add, 2),
    "datetime_diff": (_datetime_diff, 2),
    "weekday": (lambda a: _dt(a, "weekday").isoweekday(), 1),
    "date": (lambda a: _dt(a, "date").date().isoformat(), 1),
    "upper": (lambda a: a.upper() if isinstance(a, str) else a, 1),
}

#: every operator name the language knows (the lazy ones are handled in compile_expr)
OPERATORS = frozenset(_FUNCS) | {
    "and",
    "or",
    "if",
    "coalesce",
    "object",
    "format",
    "literal",
    "map",
    "filter",
}


def _operands(name: str, raw: Any, scope: Scope) -> list[Compiled]:
    items = raw if isinstance(raw, list) else [raw]
    arity = _FUNCS[name][1] if name in _FUNCS else None
    if arity is not None and len(items) != arity:
        raise ExprError(f"{name} takes {arity} operand(s), got {len(items)}")
    return [compile_expr(item, scope) for item in items]


def compile_expr(expr: Any, scope: Scope) -> Compiled:
    """Compile an expression into a function of the environment, checking names in scope."""
    if isinstance(expr, str):
        if expr.startswith("$$"):
            text = expr[1:]
            return lambda env: text
        if expr.startswith("$"):
            return compile_ref(expr[1:], scope)
        return lambda env: expr
    if expr is None or isinstance(expr, bool | int | float):
        return lambda env: expr
    if isinstance(expr, list):
        parts = [compile_expr(item, scope) for item in expr]
        return lambda env: [p(env) for p in parts]
    if isinstance(expr, dict):
        if len(expr) != 1:
            raise ExprError(
                f"an operator mapping has exactly one key, got {sorted(expr)}; write literal objects as `object: {{...}}`"
            )
        ((name, raw),) = expr.items()
        return _compile_operator(name, raw, scope)
    raise ExprError(f"cannot compile expression {expr!r}")


def _compile_map(name: str, raw: Any, scope: Scope) -> Compiled:
    """`map: {over, as, to, index?}` and `filter: {over, as, where, index?}`: names bound inside only."""
    body_key = "to" if name == "map" else "where"
    if (
        not isinstance(raw, dict)
        or not {"over", "as", body_key} <= set(raw)
        or set(raw) - {"over", "as", body_key, "index"}
    ):
        raise ExprError(f"{name} takes {{over: LIST, as: NAME, {body_key}: EXPR, index: NAME (optional)}}")
    var, index = raw["as"], raw.get("index")
    over = compile_expr(raw["over"], scope)
    body = compile_expr(raw[body_key], scope.child(var, index or ""))
    missing = object()

    def apply(env: Env) -> Any:
        items = _seq(over(env), name)
        charge(len(items))
        saved = env.get(var, missing), env.get(index, missing) if index else missing
        out = []
        try:
            for i, item in enumerate(items):
                env[var] = item
                if index:
                    env[index] = i
                value = body(env)
                if name == "map":
                    out.append(value)
                elif value:
                    out.append(item)
        finally:
            for key, old in ((var, saved[0]), (index, saved[1])):
                if key and old is missing:
                    env.pop(key, None)
                elif key:
                    env[key] = old
        return out

    return apply


def _compile_operator(name: str, raw: Any, scope: Scope) -> Compiled:
    if name == "literal":
        return lambda env: raw
    if name == "object":
        if not isinstance(raw, dict):
            raise ExprError("object: takes a mapping of key: expression")
        fields = [(k, compile_expr(v, scope)) for k, v in raw.items()]
        return lambda env: {k: f(env) for k, f in fields}
    if name == "format":
        if not isinstance(raw, str):
            raise ExprError("format: takes a template string")
        return compile_template(raw, scope)
    if name in ("map", "filter"):
        return _compile_map(name, raw, scope)
    if name in ("and", "or", "coalesce", "if"):
        ops = [compile_expr(item, scope) for item in (raw if isinstance(raw, list) else [raw])]
        if name == "and":
            return lambda env: all(op(env) for op in ops)
        if name == "or":
            return lambda env: any(op(env) for op in ops)
        if name == "coalesce":

            def coalesce(env: Env) -> Any:
                for op in ops:
                    value = op(env)
                    if value is not None:
                        return value
                return None

            return coalesce
        if len(ops) != 3:
            raise ExprError("if takes [condition, then, else]")
        cond, then, other = ops
        return lambda env: then(env) if cond(env) else other(env)
    if name not in _FUNCS:
        raise ExprError(f"unknown operator {name!r} (known: {', '.join(sorted(OPERATORS))})")
    fn = _FUNCS[name][0]
    operands = _operands(name, raw, scope)
    if len(operands) == 1:
        (a,) = operands

        def one(env: Env) -> Any:
            x = a(env)
            try:
                return fn(x)
            except _UNGUARDED as exc:
                raise _operator_error(name, exc, (x,)) from None

        return one
    if len(operands) == 2:
        a, b = operands

        def two(env: Env) -> Any:
            x, y = a(env), b(env)
            try:
                return fn(x, y)
            except _UNGUARDED as exc:
                raise _operator_error(name, exc, (x, y)) from None

        return two

    def many(env: Env) -> Any:
        values = [op(env) for op in operands]
        try:
            return fn(*values)
        except _UNGUARDED as exc:
            raise _operator_error(name, exc, values) from None

    return many


#: what Python raises when an operator meets values it cannot work on (the values' fault)
_UNGUARDED = (ArithmeticError, ValueError, TypeError, LookupError)


def _operator_error(name: str, exc: Exception, values: Iterable[Any]) -> EvalError:
    """An operator's failure on these values, worded for the agent (no Python internals)."""
    if isinstance(exc, ZeroDivisionError):
        return EvalError(f"{name}: cannot divide by zero")
    if isinstance(exc, OverflowError):
        return EvalError(f"{name}: a number is out of range (overflow)")
    kinds = ", ".join(json_type(v) for v in values)
    return EvalError(f"{name}: cannot work on these values ({kinds})")
