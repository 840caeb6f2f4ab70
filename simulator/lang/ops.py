"""The eager operators: each evaluates its operands, then applies one Python function.

Registered here, in docs order within each category. Messages name the operator as the agent
would read it; a failure on the values is an `EvalError` (the agent's tool error).
Over 500 lines on purpose: one registration table and the small functions it names, read together.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from ..runtime.budget import charge, count_of, member
from .calc import calc
from .errors import EvalError
from .registry import VARIABLE, Category, NullPolicy, Operator, register
from .values import brief, dt, dt_text, json_type, num, ranged, seq, show, whole

N = NullPolicy


def _sum(values: Any) -> Any:
    total: float | int = 0
    for v in seq(values, "sum"):
        total += num(v, "sum")
    return ranged(total, "sum")


def _add(*vs: Any) -> Any:
    total: float | int = 0
    for v in vs:
        total += num(v, "add")
    return ranged(total, "add")


def _sub(a: Any, b: Any) -> Any:
    return ranged(num(a, "sub") - num(b, "sub"), "sub")


def _mul(*vs: Any) -> Any:
    total: float | int = 1
    for v in vs:
        total = ranged(total * num(v, "mul"), "mul")
    return total


def _div(a: Any, b: Any) -> Any:
    if num(b, "div") == 0:
        raise EvalError("div: cannot divide by zero")
    return ranged(num(a, "div") / b, "div")


def _cmp(op: str) -> Callable[[Any, Any], bool]:
    fn = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}[op]

    def compare(a: Any, b: Any) -> bool:
        if a is None or b is None:
            return False
        try:
            return bool(fn(a, b))
        except TypeError:
            raise EvalError(f"{op}: cannot compare {json_type(a)} with {json_type(b)}") from None

    return compare


def _minmax(fn: Callable[..., Any]) -> Callable[..., Any]:
    def apply(*vs: Any) -> Any:
        values = vs[0] if len(vs) == 1 and isinstance(vs[0], list) else list(vs)
        values = [v for v in values if v is not None]
        return fn(values) if values else None

    return apply


def _round(value: Any, digits: Any = 0) -> Any:
    n = whole(digits, "round")
    return round(num(value, "round"), max(-400, min(n, 400)))  # beyond that, rounding changes nothing


def _at(values: Any, index: Any) -> Any:
    items = seq(values, "at")
    i = whole(index, "at")
    return items[i] if -len(items) <= i < len(items) else None


def _unique(values: Any) -> list[Any]:
    items = seq(values, "unique")
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
    return member(seq(container, "contains"), value)


def _append(items: Any, value: Any) -> list[Any]:
    items = seq(items, "append")
    charge(len(items))
    return [*items, value]


def _concat_lists(*lists: Any) -> list[Any]:
    out: list[Any] = []
    for items in lists:
        out.extend(seq(items, "concat_lists"))
    charge(len(out))
    return out


def _flatten(values: Any) -> list[Any]:
    out: list[Any] = []
    for item in seq(values, "flatten"):
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    charge(len(out))
    return out


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


def _key(key: Any, op: str) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, int | float) and not isinstance(key, bool):
        return show(key)
    raise EvalError(f"{op}: a key is a string or a number, got {brief(key)}")


def _set_key(obj: Any, key: Any, value: Any) -> dict[str, Any]:
    if obj is not None and not isinstance(obj, dict):
        raise EvalError(f"set_key: expected an object, got {brief(obj)}")
    out = dict(obj or {})
    charge(len(out))
    out[_key(key, "set_key")] = value
    return out


def _has_key(obj: Any, key: Any) -> bool:
    return isinstance(obj, dict) and _key(key, "has") in obj


def _pluck(values: Any, field: Any) -> list[Any]:
    items = seq(values, "pluck")
    charge(len(items))
    return [v.get(field) if isinstance(v, dict) else None for v in items]


def _exists(value: Any) -> bool:
    return value is not None and value != [] and value != {} and value != ""


def _concat(*vs: Any) -> str:
    text = "".join(show(v) for v in vs if v is not None)
    charge(len(text))
    return text


def _slice(value: Any, start: Any, end: Any = None) -> Any:
    if value is None:
        return None
    if not isinstance(value, str | list):
        raise EvalError(f"slice: expected a string or a list, got {brief(value)}")
    lo = None if start is None else whole(start, "slice")
    hi = None if end is None else whole(end, "slice")
    part = value[lo:hi]
    charge(len(part))
    return part


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _ieq(a: Any, b: Any) -> bool:
    """Case-insensitive equality, as the `ieq` filter compares (Unicode lower case)."""
    return bool(_lower(a) == _lower(b))


def _icontains(a: Any, b: Any) -> bool:
    return isinstance(a, str) and isinstance(b, str) and b.lower() in a.lower()


def _datetime_add(value: Any, seconds: Any) -> str:
    try:
        moved = dt(value, "datetime_add") + timedelta(seconds=num(seconds, "datetime_add"))
    except OverflowError:
        raise EvalError("datetime_add: the resulting date-time is out of range (years 1 to 9999)") from None
    return dt_text(moved, value)


def _datetime_diff(a: Any, b: Any) -> float:
    try:
        seconds = (dt(a, "datetime_diff") - dt(b, "datetime_diff")).total_seconds()
    except OverflowError:  # e.g. year 1 in one time zone minus year 9999 in another
        raise EvalError("datetime_diff: the date-times are too far apart") from None
    return int(seconds) if seconds.is_integer() else seconds


def _sort(values: Any, field: Any = None) -> list[Any]:
    """Ascending (nulls first); `field` sorts objects by a field, `-field` descending. Stable."""
    items = list(seq(values, "sort"))
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
    ks, vs = seq(keys, "object_from"), seq(values, "object_from")
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
    names = seq(keys, "pick")
    if keep:
        return {k: obj[k] for k in names if k in obj}
    return {k: v for k, v in obj.items() if k not in names}


def _known_keys(keep: bool) -> Callable[[tuple[Any, ...]], Callable[[Any], Any] | None]:
    """`pick`/`omit` of a constant list of text keys: the keys read once, at load (`Operator.specialize`)."""
    name = "pick" if keep else "omit"

    def specialize(operands: tuple[Any, ...]) -> Callable[[Any], Any] | None:
        obj, keys = operands
        if obj is not VARIABLE or not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            return None
        names = tuple(keys)
        dropped = frozenset(names)  # (text keys: a set finds what the list would)

        def known(o: Any) -> dict[str, Any]:
            if not isinstance(o, dict):
                raise EvalError(f"{name}: expected an object, got {brief(o)}")
            if keep:
                return {k: o[k] for k in names if k in o}
            return {k: v for k, v in o.items() if k not in dropped}

        return known

    return specialize


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, sort_keys=True)


def _join(values: Any, sep: Any = ", ") -> str:
    items = seq(values, "join")
    charge(len(items))
    return str(sep).join(show(v) for v in items)


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


def _length(a: Any) -> int:
    return len(seq(a, "len")) if not isinstance(a, str | dict) else len(a)


def _op(
    name: str,
    category: str,
    signature: str,
    doc: str,
    null: NullPolicy,
    fn: Callable[..., Any],
    arity: int | None,
    *aliases: str,
    specialize: Callable[[tuple[Any, ...]], Callable[[Any], Any] | None] | None = None,
) -> None:
    register(
        Operator(
            name, category, signature, doc, null, fn=fn, arity=arity, aliases=aliases, specialize=specialize
        )
    )


A, C, L, CO, OB, S, ORD, T, D = (
    Category.ARITHMETIC,
    Category.COMPARISON,
    Category.LOGIC,
    Category.COLLECTIONS,
    Category.OBJECTS,
    Category.STRINGS,
    Category.ORDERING,
    Category.TEXT_NUMBERS,
    Category.DATETIMES,
)

_op("add", A, "[a, b, ...]", "sum of the numbers", N.ERROR, _add, None)
_op("sub", A, "[a, b]", "a minus b", N.ERROR, _sub, 2)
_op("mul", A, "[a, b, ...]", "product of the numbers", N.ERROR, _mul, None)
_op("div", A, "[a, b]", "a divided by b (a float; dividing by zero is a tool error)", N.ERROR, _div, 2)
_op("neg", A, "a", "minus a", N.ERROR, lambda a: -num(a, "neg"), 1)
_op("abs", A, "a", "absolute value", N.ERROR, lambda a: abs(num(a, "abs")), 1)
_op(
    "round",
    A,
    "[a, digits]",
    "a rounded to `digits` places (default 0; banker's rounding)",
    N.ERROR,
    _round,
    None,
)
_op(
    "min",
    A,
    "[list] or [a, b, ...]",
    "the least value (of a list, or of several values)",
    N.SKIP,
    _minmax(min),
    None,
)
_op(
    "max",
    A,
    "[list] or [a, b, ...]",
    "the greatest value (of a list, or of several values)",
    N.SKIP,
    _minmax(max),
    None,
)
_op("eq", C, "[a, b]", "a equals b (`1 == 1.0`)", N.VALUE, lambda a, b: a == b, 2)
_op("ne", C, "[a, b]", "a differs from b", N.VALUE, lambda a, b: a != b, 2)
#: the ordering comparisons as registered (simulator.lang.fused knows them by identity)
COMPARISONS = {name: _cmp(name) for name in ("lt", "le", "gt", "ge")}
for _name, _word in (("lt", "less than"), ("le", "at most"), ("gt", "greater than"), ("ge", "at least")):
    _op(_name, C, "[a, b]", f"a is {_word} b (false when either is null)", N.FALSE, COMPARISONS[_name], 2)
_op("ieq", C, "[a, b]", "equal ignoring case (as the `ieq` filter)", N.VALUE, _ieq, 2)
_op("in", C, "[a, list]", "a is a member of the list", N.VALUE, lambda a, b: member(seq(b, "in"), a), 2)
_op(
    "not_in",
    C,
    "[a, list]",
    "a is not a member of the list",
    N.VALUE,
    lambda a, b: not member(seq(b, "not_in"), a),
    2,
)
_op("not", L, "a", "true when a is falsy (null, false, 0, empty)", N.VALUE, lambda a: not a, 1)
_op("is_null", L, "a", "a is null", N.VALUE, lambda a: a is None, 1)
_op("exists", L, "a", 'a is not null and not empty (`[]`, `{}`, `""`)', N.VALUE, _exists, 1)
_op("len", CO, "a", "length of a list, string or object", N.EMPTY, _length, 1)
_op("sum_of", CO, "list", "sum of a list of numbers", N.EMPTY, _sum, 1, "sum")
_op(
    "count_of",
    CO,
    "[list, value]",
    "how often value occurs in the list",
    N.EMPTY,
    lambda xs, v: count_of(seq(xs, "count"), v),
    2,
    "count",
)
_op(
    "at",
    CO,
    "[list, index]",
    "the item at index (negative: from the end; null past either end)",
    N.EMPTY,
    _at,
    2,
)
_op("unique", CO, "list", "items without repeats, first occurrences in order", N.EMPTY, _unique, 1)
_op("append", CO, "[list, value]", "a new list with value added at the end", N.EMPTY, _append, 2)
_op("concat_lists", CO, "[list, list, ...]", "the lists joined end to end", N.EMPTY, _concat_lists, None)
_op("flatten", CO, "list", "items of nested lists spliced in, one level deep", N.EMPTY, _flatten, 1)
_op("contains", CO, "[list_or_string, value]", "list membership, or substring", N.FALSE, _contains, 2)
_op("pluck", CO, "[list_of_objects, field]", "the field of every object", N.EMPTY, _pluck, 2)
_op("merge", OB, "[a, b, ...]", "shallow merge, later keys win", N.SKIP, _merge, None)
_op("get_key", OB, "[obj, key]", "the value at key (a list index for a list)", N.PROPAGATE, _get, 2, "get")
_op("set_key", OB, "[obj, key, value]", "a new object with key (computed) set to value", N.EMPTY, _set_key, 3)
_op("object_from", OB, "[keys, values]", "an object from parallel lists", N.EMPTY, _object_from, 2)
_op(
    "index_by",
    OB,
    "[list_of_objects, field]",
    "objects keyed by a field",
    N.EMPTY,
    lambda xs, f: _object_from(_pluck(xs, f), xs),
    2,
)
for _name, _keep, _doc in (("pick", True, "only these keys"), ("omit", False, "all but these keys")):
    _op(
        _name,
        OB,
        "[obj, [keys]]",
        _doc,
        N.ERROR,
        lambda o, ks, keep=_keep: _pick(o, ks, keep),
        2,
        specialize=_known_keys(_keep),
    )
_op(
    "compact",
    OB,
    "obj",
    "drops null fields",
    N.PROPAGATE,
    lambda o: {k: v for k, v in o.items() if v is not None} if isinstance(o, dict) else o,
    1,
)
_op("concat", S, "[a, b, ...]", "text of the values joined (nulls skipped)", N.SKIP, _concat, None)
_op("lower", S, "s", "lower case (Unicode)", N.PROPAGATE, _lower, 1)
_op("upper", S, "s", "upper case (Unicode)", N.PROPAGATE, lambda a: a.upper() if isinstance(a, str) else a, 1)
_op("starts_with", S, "[s, prefix]", "s begins with prefix", N.FALSE, _str_test(str.startswith), 2)
_op("ends_with", S, "[s, suffix]", "s ends with suffix", N.FALSE, _str_test(str.endswith), 2)
_op(
    "icontains", S, "[s, part]", "substring ignoring case (as the `icontains` filter)", N.FALSE, _icontains, 2
)
_op(
    "slice",
    S,
    "[s_or_list, start, end]",
    "characters or items from start up to end (Python slicing: negative from the end; end optional)",
    N.PROPAGATE,
    _slice,
    None,
)
_op("join", S, "[list, sep]", "items as text joined by sep (default `, `)", N.EMPTY, _join, None)
_op("chars", S, "s", "list of characters", N.EMPTY, lambda a: list(a) if isinstance(a, str) else [], 1)
_op(
    "sort",
    ORD,
    "list or [list_of_objects, field]",
    "ascending, stable, nulls first; `-field` descending",
    N.EMPTY,
    _sort,
    None,
)
_op(
    "calc",
    T,
    '"2 * (3 + 4)"',
    "arithmetic text, Python semantics, never `eval`; null when invalid",
    N.PROPAGATE,
    calc,
    1,
)
_op("to_number", T, "text", "the number in the text, or null", N.PROPAGATE, _to_number, 1)
_op("to_string", T, "value", "Python's `str` of numbers, JSON text of other values", N.VALUE, _to_string, 1)
_op("datetime_add", D, "[dt, seconds]", "dt moved by seconds", N.ERROR, _datetime_add, 2)
_op("datetime_diff", D, "[a, b]", "a minus b in seconds", N.ERROR, _datetime_diff, 2)
_op("weekday", D, "dt", "1 = Monday … 7 = Sunday", N.ERROR, lambda a: dt(a, "weekday").isoweekday(), 1)
_op("date", D, "dt", "the date, `YYYY-MM-DD`", N.ERROR, lambda a: dt(a, "date").date().isoformat(), 1)
