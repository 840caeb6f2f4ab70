"""Requests about related rows, each said once: errands, batches, every-row writes, sweeps, changes.

    errands(proposer, most), batches(proposer, most), everys(proposer, most) -> [Candidate]

An errand: several writes on the rows of one row a person knows (`cancel its orders "A" and "B"`).
A batch: one change to several named rows. An every-row write: each row of a parent, or those with
a value. A sweep: of rows a person lists, the ones with a value, each read then written or left.
Changes: one field of several rows, each its own value. `merged` says alike clauses once.
Design notes: docs/design/toolgen.md.
Over 500 lines: five kinds of request over related rows, sharing `goals` and `merged`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from scoring.calls import PREFIX as CALL_REF
from toolgen.naming import plural_phrase, words

from . import instructions as say
from .checks import opaque, unsayable
from .lexicon import is_payload
from .lookups import Args, Ref, Row, Tool, reveals, scalar, seq
from .questions import _SURVEY_SIZES, Candidate, measures
from .schema import TablePlan

if TYPE_CHECKING:
    from .walks import Proposer, Write

__all__ = ["batches", "changes", "errands", "everys", "goals", "merged", "openers", "sweeps"]

#: how many writes an errand or a batch holds at most (it keeps what runs)
_SIZES = (3, 4, 5, 6, 8, 10)
#: how many rows a sweep lists (it keeps those its reads can show)
_SWEEP_SIZES = (6, 8, 10)
_SWEEP_SAYINGS = (
    "Of {rows}, please {c}; leave the others as they are.",
    "Please go through {rows} and {c}.",
    "Could you check {rows} and {c}?",
    "I have a list: {rows}. {C}, and leave the rest alone.",
)
_CHANGES_SAYINGS = (
    "Please change the {field} of these {rows}: {pairs}.",
    "I have new {fields} for these {rows}: {pairs}. Could you make the changes?",
    "Could you update the {field} of these {rows}? {Pairs}.",
)
#: a row said as one phrase: `the order whose number is "A"`, `its order ORD-1`
_NAMED = re.compile(
    r"(?P<own>the|its) (?P<noun>[A-Za-z0-9 ]+?) (?:whose (?P<field>[a-z0-9 ]+?) is "
    r'(?P<value>"(?:[^"\\]|\\.)*"|-?[0-9.]+)|(?P<id>[A-Za-z0-9_.:-]+))'
)
_OPENERS = (
    "For {p}, please {c}.",
    "This is about {p}: I need you to {c}.",
)
#: openers of a person who runs the owner: only for things a person runs (`the guild GUI-1004`)
_MANAGER_OPENERS = (
    "I look after {p}. Could you {c}?",
    "Hi, I manage {p}. Please {c}.",
)
#: things a person looks after or manages (not `the column COL-1021`, `the external reference ...`)
_MANAGED = frozenset(
    "account team guild site project workspace organization organisation org customer store shop "
    "restaurant company group channel server droplet cluster namespace app application repository "
    "repo board calendar folder course class school hotel property portfolio campaign business "
    "merchant tenant realm space community venue fleet warehouse department office network "
    "database library playlist list inventory instance domain zone portal".split()
)


def openers(owner: str) -> tuple[str, ...]:
    """How an errand about the rows of `owner` opens: as a person who runs it only when a person
    runs such a thing (`I manage the guild ...`; `For the column ..., please ...`)."""
    return _OPENERS + (_MANAGER_OPENERS if _MANAGED.intersection(words(owner)[-1:]) else ())


def _keyed_writes(p: Proposer) -> dict[str, list[Tool]]:
    """The writes that act on one row found by its key, by table."""
    out: dict[str, list[Tool]] = {}
    for tool in p.writes():
        if tool.plan.compiled_as in ("update", "status", "delete") and tool.key is not None:
            out.setdefault(tool.table.name, []).append(tool)
    return out


def _name_column(p: Proposer, table: TablePlan, rows: Sequence[Row], listed: Any) -> str | None:
    """A column that names each of `rows` apart from the others, shown by the listing `listed`."""
    pk = table.primary_key
    for column in p.w.names(table):
        values = [r.get(column) for r in rows]
        if not all(isinstance(v, str) and v.strip() for v in values) or len(set(values)) < len(values):
            continue
        if all(reveals(listed, column, r[column]) and reveals(listed, pk, r[pk]) for r in rows):
            return column
    return None


def _parts(w: Write) -> tuple[str, str, str] | None:
    """(`the` or `its`, field, value as said) of a write's row named by one field or by its id
    (field ""), when its text names it once."""
    if not w.phrase or w.text.count(w.phrase) != 1:
        return None
    m = _NAMED.fullmatch(w.phrase)
    if m is None or m["noun"] != say.noun(w.entity):
        return None
    return m["own"], m["field"] or "", m["value"] or m["id"]


def merged(writes: Sequence[Write]) -> list[str]:
    """The writes' clauses, those alike but for their row said once over the rows (`delete its
    orders whose numbers are "A" and "B"`, `delete the tasks TAS-1 and TAS-2`)."""
    groups: dict[tuple[str, ...], list[tuple[Write, str]]] = {}
    for i, w in enumerate(writes):
        parts = _parts(w)
        if parts is None:
            groups[(str(i),)] = [(w, "")]
            continue
        own, field, value = parts
        groups.setdefault((w.text.replace(w.phrase, "\0"), own, w.entity, field), []).append((w, value))
    clauses = []
    for key, members in groups.items():
        if len(members) == 1:
            clauses.append(members[0][0].text)
            continue
        template, own, entity, field = key
        values = say.join_clauses([value for _, value in members])
        many = f"{own} {plural_phrase(say.noun(entity))}"
        many += f" whose {plural_phrase(field)} are {values}" if field else f" {values}"
        clauses.append(template.replace("\0", many))
    return clauses


def errands(p: Proposer, most: int) -> list[Candidate]:
    """Writes on the rows of one parent row (2-10), found by the parent's lookup and the listing
    of its rows; each write commutes with the others, as the request does not order them."""
    out: list[Candidate] = []
    tools = _keyed_writes(p)
    pairs = [
        (lister, b, parent)
        for lister in p.w.tools
        if lister.plan.compiled_as == "list" and lister.table.name in tools
        for b in lister.role("parent")
        if b.column is not None
        and lister.required <= {b.param}
        and (parent := p.w.parent_of(lister, b)) is not None
        and parent.name != lister.table.name
    ]
    p.rng.shuffle(pairs)
    for lister, b, parent in pairs * 2:
        if len(out) >= most:
            break
        made = _errand(p, lister, b.param, b.column or "", parent, tools[lister.table.name])
        if made is not None and all(c.calls != made.calls for c in out):
            out.append(made)
    return out


def _errand(
    p: Proposer, lister: Tool, param: str, column: str, parent: TablePlan, tools: list[Tool]
) -> Candidate | None:
    table = lister.table
    groups: dict[Any, list[Row]] = {}
    for row in p.w.rows.get(table.name, []):
        if isinstance(row.get(column), str | int):
            groups.setdefault(row[column], []).append(row)
    owners = [k for k, rows in groups.items() if len(rows) >= 2]
    p.rng.shuffle(owners)
    for owner in owners[:3]:
        prow = next((r for r in p.w.rows.get(parent.name, []) if r.get(parent.primary_key) == owner), None)
        if prow is None:
            continue
        ref = p.w.by_name(parent, prow) or Ref(say.id_phrase(parent.entity, owner), [])
        if opaque(ref.phrase):
            continue
        listing: tuple[str, Args] = (lister.name, {param: owner})
        kids = groups[owner]
        named = _name_column(p, table, kids, p.w.read(*listing))
        if named is None:
            continue
        prefix = seq(ref.calls, [listing])
        phrases = [say.row_phrase(table.entity, named, kid[named]).replace("the ", "its ", 1) for kid in kids]
        done = _writes(p, tools, kids, [Ref(phrase, prefix) for phrase in phrases], prefix)
        if len(done) < 2:
            continue
        writes, used = zip(*done, strict=True)
        clauses = merged(writes)
        text = p.rng.choice(openers(parent.entity)).format(p=ref.phrase, c=say.join_clauses(clauses))
        calls = prefix
        for w in writes:
            calls = seq(calls, w.calls)
        return Candidate("errand", text, p._gold(calls))
    return None


def _writes(
    p: Proposer, tools: list[Tool], rows: list[Row], refs: list[Ref], prefix: list[tuple[str, Args]]
) -> list[tuple[Write, int]]:
    """Up to a size from `_SIZES` writes on distinct rows (each named by its ref, found by
    `prefix` alone), pairwise commuting, added while the whole request runs."""
    size = p.rng.choice(_SIZES)
    order = list(range(len(rows)))
    p.rng.shuffle(order)
    done: list[tuple[Write, int]] = []
    chosen: list[Tool] = []
    calls = list(prefix)
    odds, p.copy_odds = p.copy_odds, 0.0  # (its values are its own: no copies from other rows)
    try:
        for i in order:
            if len(done) >= size:
                break
            tool = p.rng.choice(tools)
            if not all(p._commute(tool, t) for t in chosen):
                continue
            w = p.keyed(tool, rows[i], refs[i])
            if w is None or w.lookups != prefix:
                continue
            trial = seq(calls, w.calls)
            said = say.join_clauses(merged([*(d for d, _ in done), w]))
            if p._reads_well(said, trial) and p._succeeds(trial):
                done.append((w, i))
                chosen.append(tool)
                calls = trial
    finally:
        p.copy_odds = odds
    return done


def batches(p: Proposer, most: int) -> list[Candidate]:
    """One write with the same values on several rows of one table (3-8), each named by what a
    person knows of it and found by its own lookup: a delete, a state change, or an update of
    fields that are not names."""
    return _per_tool(p, [t for found in _keyed_writes(p).values() for t in found], _batch, most)


def _per_tool(
    p: Proposer,
    tools: list[Tool],
    make: Callable[[Proposer, Tool], Candidate | None],
    most: int,
    rounds: int = 1,
) -> list[Candidate]:
    """Up to `most` candidates, one `make` a tool, over the tools in a random order (`rounds`
    times round), each unlike those before."""
    out: list[Candidate] = []
    tools = p.rng.sample(tools, len(tools))
    for tool in tools * rounds:
        if len(out) >= most:
            break
        made = make(p, tool)
        if made is not None and all(c.calls != made.calls for c in out):
            out.append(made)
    return out


def _names_all(p: Proposer, tool: Tool, w: Write) -> bool:
    """Whether `w` writes a field rows are named by: one name for several rows is no change a
    person asks for (`change the name to "Jackson Harrell" for every member of ...`)."""
    names = p.w.names(tool.table)
    return any(b.column in names for b in tool.role("field") if b.param in w.args)


#: last words of a field that states a fact about a row (where it is, how to reach it), which
#: no test on another field decides (`change the address country of the ones whose amount is ...`)
_FACT_WORDS = frozenset(
    "address street city country zip postcode region email phone url website currency".split()
)


def _facts(tool: Tool, w: Write) -> bool:
    """Whether `w` writes a field that states a fact about its row (`_FACT_WORDS`)."""
    return any(
        _FACT_WORDS.intersection(words(b.column or "")[-1:]) for b in tool.role("field") if b.param in w.args
    )


def _batch(p: Proposer, tool: Tool) -> Candidate | None:
    table = tool.table
    rows = list(p.w.rows.get(table.name, []))
    p.rng.shuffle(rows)
    names = p.w.names(table)
    size = p.rng.choice(_SIZES)
    writes: list[Write] = []
    phrases: list[str] = []
    calls: list[tuple[str, Args]] = []
    column = ""
    odds, p.copy_odds = p.copy_odds, 0.0
    try:
        for row in rows[: 3 * size]:
            if len(writes) >= size:
                break
            ref = p.w.by_name(table, row)
            said = next(
                (c for c in names if ref and ref.phrase == say.row_phrase(table.entity, c, row[c])), ""
            )
            if ref is None or not said or said != (column or said):
                continue
            w = p.keyed(tool, row, ref)
            if w is None or w.lookups != ref.calls:
                continue
            if writes:  # the same values as the first
                fixed = {k: v for k, v in writes[0].args.items() if k not in _own_args(tool, writes[0])}
                w.args.update(fixed)
                w.text = writes[0].text.replace(phrases[0], ref.phrase)
            elif _names_all(p, tool, w):
                return None
            trial = seq(calls, w.calls)
            if p._succeeds(trial):
                column = said
                writes.append(w)
                phrases.append(ref.phrase)
                calls = trial
    finally:
        p.copy_odds = odds
    if len(writes) < 3:
        return None
    clauses = merged(writes)
    return Candidate("batch", say.write_sentence(p.rng, clauses), p._gold(calls))


def _own_args(tool: Tool, w: Write) -> set[str]:
    """The arguments that find a write's row (its key and parents), not the values it writes."""
    own = {b.param for b in tool.role("parent")}
    if tool.key is not None:
        own.add(tool.key.param)
    return own & set(w.args)


def everys(p: Proposer, most: int) -> list[Candidate]:
    """One write with the same values on every row of a parent (`cancel every order of the
    customer whose email is ...`), or on every row of it, or of the table, that has a value
    (`... with status "pending"`): the parent's lookup, the listing that shows which rows,
    then the write on each."""
    out: list[Candidate] = []
    listers = [t for t in p.w.tools if t.plan.compiled_as == "list"]
    # (deletes last: a change that leaves the rows teaches more)
    tools = sorted(
        (t for found in _keyed_writes(p).values() for t in found),
        key=lambda t: t.plan.compiled_as == "delete",
    )
    for tool in tools:
        if len(out) >= most:
            break
        for lister in [t for t in listers if t.table.name == tool.table.name]:
            made = _every(p, tool, lister)
            if made is not None:
                out.append(made)
                break
    return out


def _groups(p: Proposer, lister: Tool) -> list[tuple[Args, str, list[tuple[str, Args]], list[Row]]]:
    """The row sets `lister` lists: (its arguments, how the request names the set's owner, the
    lookups that find the owner, the rows), a few owners per parent, or the whole table."""
    table = lister.table
    rows = list(p.w.rows.get(table.name, []))
    if not lister.required:
        return [({}, "", [], rows)]
    out: list[tuple[Args, str, list[tuple[str, Args]], list[Row]]] = []
    for b in lister.role("parent"):
        parent = p.w.parent_of(lister, b)
        if parent is None or b.column is None or not lister.required <= {b.param}:
            continue
        groups: dict[Any, list[Row]] = {}
        for row in rows:
            if isinstance(row.get(b.column), str | int):
                groups.setdefault(row[b.column], []).append(row)
        owners = [k for k, found in groups.items() if 2 <= len(found) <= 10]
        p.rng.shuffle(owners)
        for owner in owners[:3]:
            prow = next(
                (r for r in p.w.rows.get(parent.name, []) if r.get(parent.primary_key) == owner), None
            )
            if prow is None:
                continue
            ref = p.w.name_row(parent, prow, p.rng, lookup=True, besides=table.name, via=False)
            ref = ref if ref is not None and ref.calls else Ref(say.id_phrase(parent.entity, owner), [])
            if opaque(ref.phrase):
                continue
            out.append(({b.param: owner}, ref.phrase, list(ref.calls), groups[owner]))
    return out


#: who a person is, which no one picks rows to act on by (`the ones with gender "male"`)
_TRAITS = frozenset("gender sex race ethnicity religion pronoun pronouns nationality marital".split())


def _condition(
    p: Proposer, table: TablePlan, rows: list[Row], listed: Any, tool: Tool, others: int = 1
) -> tuple[str, Any] | None:
    """A column and a value that 2+ of `rows` have and `others`+ not (the listing shows it for
    each, when there is one): the rows a request picks out (`with status "pending"`); never a
    value the tool's name already says (`deny pending for every group with status "pending"`)."""
    said = set(words(tool.op_name))
    names = set(p.w.names(table))
    columns = [
        c
        for c, col in table.columns.items()
        if col.enum
        and col.plain
        and c != table.primary_key
        and c not in names
        and not col.references
        and not _TRAITS.intersection(words(c))
    ]
    p.rng.shuffle(columns)
    for column in columns:
        values = [r.get(column) for r in rows]
        if not all(isinstance(v, str | bool) for v in values) or not all(
            listed is None or reveals(listed, column, v) for v in values
        ):
            continue
        counts = {v: values.count(v) for v in values}
        picked = [
            v
            for v, n in sorted(counts.items(), key=str)
            if 2 <= n <= len(values) - others and not said & set(words(str(v)))
        ]
        if picked:
            return column, p.rng.choice(picked)
    return None


def _every(p: Proposer, tool: Tool, lister: Tool) -> Candidate | None:
    table, key = tool.table, tool.key
    assert key is not None
    for args, owner, lookups, rows in _groups(p, lister):
        listing = (lister.name, args)
        listed = p.w.read(*listing)
        if not isinstance(listed, list) or len(listed) != len(rows) or not rows:
            continue
        where = _condition(p, table, rows, listed, tool)
        if where is None and (not owner or len(rows) < 3):
            continue  # (every row of a table is no errand: one with a value is)
        if where is not None:
            rows = [r for r in rows if r.get(where[0]) == where[1]]
        noun = say.noun(table.entity)
        each = (
            f"all the {noun}" if plural_phrase(noun) == noun else f"every {noun}"
        )  # (not `every permissions`)
        phrase = each + (f" of {owner}" if owner else "")
        if where is not None:
            phrase += f" with {say.field_phrase(where[0])} {say.value_text(where[1])}"
        odds, p.copy_odds = p.copy_odds, 0.0
        try:
            first = p.keyed(tool, rows[0], Ref(phrase, seq(lookups, [listing])))
        finally:
            p.copy_odds = odds
        if first is None or first.lookups != seq(lookups, [listing]) or _names_all(p, tool, first):
            continue
        calls = list(first.calls)
        for row in rows[1:]:
            calls.append((tool.name, {**first.args, **_finding(tool, row)}))
        if p._succeeds(calls):
            return Candidate("every", say.write_sentence(p.rng, [first.text]), p._gold(calls))
    return None


def _finding(tool: Tool, row: Row) -> Args:
    """The arguments that find `row` for `tool`: its key and its parents' keys."""
    found: Args = {}
    if tool.key is not None:
        found[tool.key.param] = row[tool.table.primary_key]
    for b in tool.role("parent"):
        if b.column is not None and b.param in tool.required and row.get(b.column) is not None:
            found[b.param] = row[b.column]
    return found


def sweeps(p: Proposer, most: int) -> list[Candidate]:
    """One write on those of 6-10 listed rows of one table that have a value: each row found by
    its lookup (and read by the table's getter when that does not show the value), then written
    when it has the value; at least two rows are written and two left as they are."""
    tools = [t for found in _keyed_writes(p).values() for t in found if p._commute(t, t)]
    return _per_tool(p, tools, _sweep, most)


def _sweep(p: Proposer, tool: Tool) -> Candidate | None:
    table = tool.table
    for said_field, found in sorted(p._named(table).items()) + sorted(p._by_id(table).items()):
        found = found[: p.rng.choice(_SWEEP_SIZES)]
        if len(found) < 4:
            continue
        test = _sweep_test(p, tool, [row for row, *_ in found])
        if test is None:
            continue
        column, said, has = test
        # (a row whose reads do not show the value is left out)
        reads = [p.reads_showing(table, row, lookups, [column]) or [] for row, _, lookups in found]
        kept = [(f, r) for f, r in zip(found, reads, strict=True) if r]
        hits = [i for i, ((row, *_), _) in enumerate(kept) if has(row)]
        if len(hits) < 2 or len(kept) - len(hits) < 2:
            continue
        phrase = f"the ones {said}"
        (first_row, *_), first_reads = kept[hits[0]]
        odds, p.copy_odds = p.copy_odds, 0.0
        try:
            first = p.keyed(tool, first_row, Ref(phrase, first_reads))
        finally:
            p.copy_odds = odds
        if first is None or first.lookups != first_reads or _names_all(p, tool, first) or _facts(tool, first):
            continue
        calls: list[tuple[str, Args]] = []
        for i, ((row, *_), shown) in enumerate(kept):
            calls = seq(calls, shown)
            if i in hits:
                calls.append((tool.name, {**first.args, **_finding(tool, row)}))
        if not p._succeeds(calls):
            continue
        rows = say.rows_phrase(table.entity, said_field, [text for (_, text, _), _ in kept])
        saying = p.rng.choice(_SWEEP_SAYINGS)
        text = saying.format(rows=rows, c=first.text, C=first.text[:1].upper() + first.text[1:])
        return Candidate("sweep", text, p._gold(calls))
    return None


def _sweep_test(p: Proposer, tool: Tool, rows: list[Row]) -> tuple[str, str, Callable[[Row], bool]] | None:
    """(column, how the request says it, whether a row passes) of a test 2+ of `rows` pass and
    2+ fail: a value (`with status "pending"`) or a bound (`whose price is more than 50`)."""
    table = tool.table
    where = _condition(p, table, rows, None, tool, others=2)
    if where is not None and isinstance(where[1], str):
        column, value = where
        return (
            column,
            f"with {say.field_phrase(column)} {say.value_text(value)}",
            lambda r: r.get(column) == value,
        )
    numbers = measures(table)
    p.rng.shuffle(numbers)
    for column in numbers:
        values = sorted(
            v for r in rows if isinstance(v := r.get(column), int | float) and not isinstance(v, bool)
        )
        if len(values) != len(rows) or len(values) < 4:
            continue
        k = p.rng.randrange(2, len(values) - 1)  # (2+ below the bound, 2+ above)
        bound = _round_between(values[k - 1], values[k])
        if bound is None:
            continue
        field = say.field_phrase(column)
        if p.rng.random() < 0.5:
            return (
                column,
                f"whose {field} is more than {say.value_text(bound)}",
                lambda r, c=column, b=bound: r[c] > b,
            )
        return (
            column,
            f"whose {field} is less than {say.value_text(bound)}",
            lambda r, c=column, b=bound: r[c] < b,
        )
    return None


def _round_between(low: float, high: float) -> float | None:
    """The roundest number above `low` and below `high` (50 between 42.3 and 57), if one with
    at most two decimals fits."""
    for exponent in range(9, -3, -1):
        for step in (5 * 10**exponent, 10**exponent):
            bound = (math.floor(low / step) + 1) * step
            if low < bound < high:
                return int(bound) if step >= 1 else round(bound, 2)
    return None


def changes(p: Proposer, most: int) -> list[Candidate]:
    """One field of 4-12 rows of one table, each set to its own value by one update tool: each
    row found by its lookup (named by one field, or by its id through the getter), then
    updated."""
    tools = [
        t
        for found in _keyed_writes(p).values()
        for t in found
        if t.plan.compiled_as == "update" and p._commute(t, t)
    ]
    return _per_tool(p, tools, _changes, most, rounds=2)


def _changes(p: Proposer, tool: Tool) -> Candidate | None:
    table = tool.table
    used = p.w.domain.tools[tool.name].arguments_read
    finding = {b.param for b in tool.role("parent")} | ({tool.key.param} if tool.key else set())
    if not tool.required <= finding:
        return None
    fields = [
        b
        for b in tool.role("field")
        if b.column in table.columns
        and b.param in used
        and table.columns[b.column].plain
        and table.columns[b.column].type != "json"
        and not table.columns[b.column].server_set
        and not p.w.placeholder(table, b.column)
        and not is_payload(table.entity, b.column)
    ]
    if not fields:
        return None
    b = p.rng.choice(fields)
    column = b.column or ""
    groups = sorted(p._named(table).items()) + sorted(p._by_id(table).items())
    if not groups:
        return None
    said_field, found = p.rng.choice(groups)
    if said_field == say.field_phrase(column):
        return None
    size = p.rng.choice(_SURVEY_SIZES)
    pairs: list[str] = []
    calls: list[tuple[str, Args]] = []
    values: set[str] = set()
    for row, text, lookups in found:
        if len(pairs) >= size:
            break
        value = p.w.value_for(p.rng, tool, b, row.get(column))
        if value is None or not scalar(value) or repr(value) in values or unsayable(column, say.plain(value)):
            continue
        trial = seq(calls, lookups, [(tool.name, {**_finding(tool, row), b.param: value})])
        if p._succeeds(trial):
            named = f"{say.noun(table.entity)} {text}" if said_field == "id" else text
            pairs.append(f"{named} to {say.value_text(value)}")
            values.add(repr(value))
            calls = trial
    if len(pairs) < 4:
        return None
    entity = plural_phrase(say.noun(table.entity))
    # (`these roles: "Ops Role" to ...`; `these customers (by email): ...`)
    rows = f"{entity} (by {said_field})" if said_field and said_field not in ("id", "name") else entity
    field = say.field_phrase(column)
    listed = say.join_clauses(pairs)
    text = p.rng.choice(_CHANGES_SAYINGS).format(
        field=field,
        fields=plural_phrase(field),
        rows=rows,
        pairs=listed,
        Pairs=listed[:1].upper() + listed[1:],
    )
    return Candidate("changes", text, p._gold(calls))


#: kinds that change something; those that can follow one (asks of one or two rows, small writes)
_GOAL_FIRSTS = ("errand", "batch", "every", "sweep", "changes", "chain", "double", "single")
_GOAL_SECONDS = ("read", "compare", "single", "chain", "changes")
#: the first words of a request or a question that can follow another after `Also,`
_FOLLOWS = re.compile(r"(What|Which|How|Tell|Look|Add|Please|Can you|Could you|I need|[A-Z][a-z]+ the) ")


def goals(p: Proposer, by_kind: dict[str, list[Candidate]], most: int) -> list[Candidate]:
    """Two needs about one row in one message (`Can you cancel the order O-1 of the customer
    C? Also, what is the email of that customer?`): the second names a row as the first does
    (said again as `that <noun>`), and neither touches a table the other writes, so they
    commute; the second deletes nothing; their gold calls run one after the other."""
    tables = {t.name: t.table.name for t in p.w.tools}
    written = {t.name for t in p.w.tools if t.plan.kind == "write"}
    deleting = {
        name for name, tool in p.w.domain.tools.items() if tool.destructive
    }  # (`Also, delete that user`)

    def plain(c: Candidate) -> bool:  # (no call refers to another's result, none fails)
        return not any(call.get("expect_error") for call in c.calls) and CALL_REF not in json.dumps(c.calls)

    def parts(c: Candidate) -> tuple[set[str], set[str], set[str]]:  # (tables touched, changed; rows said)
        return (
            {tables[x["name"]] for x in c.calls},
            {tables[x["name"]] for x in c.calls if x["name"] in written},
            {m.group(0) for m in say.ROW.finditer(c.instruction)},
        )

    seconds = [
        (c, parts(c))
        for kind in _GOAL_SECONDS
        for c in by_kind.get(kind, [])
        if plain(c)
        and _FOLLOWS.match(c.instruction)
        and not deleting.intersection(x["name"] for x in c.calls)
    ]
    firsts = [c for kind in _GOAL_FIRSTS for c in by_kind.get(kind, []) if plain(c)]
    p.rng.shuffle(firsts)
    firsts.sort(key=lambda c: -len(c.calls))  # (the longest errands first: a goal adds to them)
    out: list[Candidate] = []
    for first in firsts:
        if len(out) >= most:
            break
        touched, changed, said = parts(first)
        fitting = [
            (c, (t, ch, s))
            for c, (t, ch, s) in seconds
            if c is not first
            and said & s
            and not t & changed
            and not ch & touched
            and not any(str(f) in first.instruction for f in c.answer_facts)  # (not told already)
            and not any(f" {f} of " in c.instruction for f in _fields(said & s))  # (`the name of that group`)
        ]
        if not fitting:
            continue
        second = p.rng.choice(fitting)
        seconds.remove(second)
        text = second[0].instruction
        text = text if text.startswith("I ") else text[:1].lower() + text[1:]
        out.append(
            Candidate(
                "goal",
                f"{first.instruction} Also, {text}",
                [*first.calls, *second[0].calls],
                [*first.answer_facts, *second[0].answer_facts],
            )
        )
    return out


def _fields(phrases: set[str]) -> set[str]:
    """The fields rows are named by in `phrases` (`the group whose name is "A"`: name)."""
    return {f for phrase in phrases for f in re.findall(r'(?:whose|,|and) ([a-z0-9 ]+?) is "', phrase)}
