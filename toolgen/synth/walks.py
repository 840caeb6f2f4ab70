"""Walks on a generated domain's tool graph: candidate tasks of every kind, executed on the simulator.

    propose(world, rng) -> [Candidate]   # each kind up to its quota, interleaved

See `toolgen.synth.tasks` for the kinds and for how candidates are validated and kept.
Over 500 lines: one class, `Proposer`, whose candidate kinds share quotas and lookups.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scoring.calls import NO_RESULT, resolve_arguments
from simulator.builders import call, calls_ref
from simulator.errors import ToolgymError
from toolgen.model import Operation
from toolgen.naming import plural_phrase, words
from toolgen.pure import path_params

from . import instructions as say
from .checks import opaque, text_problems, unsayable
from .effects import STATE_VERBS, Repoint, StateChange
from .errands import batches, changes, errands, everys, goals, merged, sweeps
from .lexicon import is_classifier, is_payload, table_kind
from .lookups import Args, Ref, Row, Tool, World, scalar, seq
from .questions import Asker, Candidate
from .schema import Binding, TablePlan

__all__ = ["MAX_CANDIDATES", "Candidate", "Proposer", "Write", "propose"]

#: most candidates proposed per domain
MAX_CANDIDATES = 56
_KEYED = frozenset(("status", "update", "delete", "event", "reference"))
#: how many of each kind a domain's candidates hold at most (chains first: they teach the most)
_QUOTA = {
    "sweep": 8,
    "changes": 8,
    "every": 6,
    "errand": 12,
    "batch": 8,
    "roundup": 6,
    "survey": 14,
    "double": 12,
    "chain": 8,
    "read": 4,
    "compare": 4,
    "total": 4,
    "refusal": 2,
    "single": 4,
    "goal": 6,
}


#: verbs of an operation that computes rather than records (`calculate_bmi` on a POST): no row
#: a person creates
#: first words of an operation that changes fields: with none said, no request
_CHANGING = frozenset("update modify edit change patch put set".split())
#: the words of a key a person chooses for a new record (`checkout-staging`, `billing-archive`)
_KEY_TEAMS = "billing checkout search support reports analytics marketing inventory shipping payments web mobile".split()
_KEY_KINDS = "staging prod dev test main archive east west backup beta".split()
#: first words of an argument that bounds a search, not a field a person sets
_RANGE_ENDS = frozenset("min max minimum maximum since until before after".split())
_COMPUTING_VERBS = frozenset(
    "calculate compute convert estimate predict analyze analyse detect evaluate solve check validate verify "
    "classify recognize extract parse translate summarize measure".split()
)


#: the most fields one request changes on one row (`the frequency to 584, the body name to ...,
#: the repeats to 9, the service name to ... and the description to ...` is a form, not a request)
_MOST_CHANGES = 3


@dataclass
class Write:
    """One write of a task: its clause, the lookups that find its ids, the call."""

    text: str
    lookups: list[tuple[str, Args]]
    tool: str
    args: Args
    entity: str = ""
    phrase: str = ""
    """How the text names the row written (`the order whose number is "A"`), when it is one."""

    @property
    def calls(self) -> list[tuple[str, Args]]:
        return [*self.lookups, (self.tool, self.args)]


class Proposer(Asker):
    """Candidates of every kind for one domain: the questions (`Asker`) and the writes."""

    def __init__(self, world: World, rng: random.Random):
        super().__init__(world, rng)
        #: the odds that a write with lookups copies one value from another looked-up row
        self.copy_odds = 0.7

    def _fields(
        self, tool: Tool, row: Row | None, extra: int, lookup: bool = False
    ) -> list[tuple[Binding, Any]] | None:
        """Field arguments: every required one and up to `extra` optional ones (None: cannot fill).
        With `lookup`, one value may be another row's (`say.Said`: found by that row's lookups)."""
        chosen: list[tuple[Binding, Any]] = []
        used = self.w.domain.tools[tool.name].arguments_read  # (one the tool ignores is not checkable)
        optional = [
            b
            for b in tool.role("field")
            if b.param not in tool.required and b.column is not None and b.param in used
        ]
        optional = [
            b
            for b in optional
            if tool.table.columns[b.column or ""].type != "json"
            and not tool.table.columns[b.column or ""].server_set
            and tool.table.columns[b.column or ""].plain
            and not self.w.placeholder(tool.table, b.column or "")
            and not _RANGE_ENDS.intersection(words(b.param)[:1])  # (`min creation date`: a search's)
            and not (row is None and words(b.column or "")[-1:] in (("status",), ("state",)))
        ]  # (a new event starts in its first state: no one creates one `with status "cancelled"`)
        self.rng.shuffle(optional)
        copy = lookup and self.rng.random() < self.copy_odds
        for b in [b for b in tool.bindings if b.param in tool.required and b.role == "field"] + optional[
            :extra
        ]:
            current = row.get(b.column) if row is not None and b.column else None
            value = self.w.copied(self.rng, tool, b, current) if copy else None
            copy = copy and value is None
            if value is None and not self.w.placeholder(tool.table, b.column or ""):
                value = self.w.value_for(self.rng, tool, b, current)
            col = tool.table.columns.get(b.column or "")
            flag = isinstance(value, bool) and col is not None and col.flag  # (`with is paid leave false`)
            payload = is_payload(tool.table.entity, b.column or "")  # (an attachment's body)
            if value is None or flag or payload or unsayable(b.column or "", say.plain(value)):
                if b.param in tool.required:
                    return None  # (a record written out, a stand-in code or a UUID: no person says it)
                continue
            chosen.append((b, value))
        return chosen

    def _covered(self, tool: Tool, given: set[str]) -> bool:
        return tool.required <= given

    def keyed(self, tool: Tool, row: Row, ref: Ref, *, expect_error: bool = False) -> Write | None:
        """(clause, lookups, arguments) of a write on one row."""
        table = tool.table
        key = tool.key
        args: Args = {key.param: row[table.primary_key]} if key is not None else {}
        point = tool.plan.effect if isinstance(tool.plan.effect, Repoint) else None
        owners = []
        for b in tool.role("parent"):
            if point is not None and b.param == point.param:
                continue  # the row it is to point at: chosen below
            if b.param in tool.required and b.column is not None:
                if row.get(b.column) is None:
                    return None
                args[b.param] = row[b.column]
                parent = self.w.parent_of(tool, b)
                if not ref.calls and parent is not None and not opaque(str(row[b.column])):
                    owners.append(
                        say.id_phrase(parent.entity, row[b.column])
                    )  # (named by id: its parents' too)
                elif not ref.calls:
                    return None
        if len(dict.fromkeys(owners)) > 1:
            return None  # (`the exception EXC-3 of the guild GUI-7 and the event SE-5`: a riddle)
        if owners:  # (after its own values, as `row_where`)
            ref = Ref(f"{ref.phrase} of {say.owners_phrase(owners)}", ref.calls)
        extra = 0 if tool.plan.compiled_as != "update" else self.rng.choice((1, 1, 2))
        fields = self._fields(tool, row, extra, lookup=bool(ref.calls))
        if fields is None or (tool.plan.compiled_as == "update" and not fields):
            return None
        if tool.plan.compiled_as == "update" and len(fields) > _MOST_CHANGES:
            return None  # (a PUT that restates the record: no one asks for five changes in one breath)
        if not fields and point is None and _CHANGING.intersection(words(tool.op_name)):
            return None  # (`update the document DOC-1002`, `replies_update`: with no change said, no request)
        lookups = list(ref.calls)
        for b, value in fields:
            args[b.param] = say.plain(value)
            lookups = seq(lookups, value.calls if isinstance(value, say.Said) else [])
        pointed = self._pointed(point, row, bool(ref.calls)) if point is not None else None
        if point is not None:
            if pointed is None:
                return None
            args[point.param] = pointed.value
            lookups = seq(lookups, pointed.calls)
        if not self._covered(tool, set(args)):
            return None
        settings = [(b.param, v) for b, v in fields]
        change = tool.plan.effect if isinstance(tool.plan.effect, StateChange) else None
        if point is not None and pointed is not None:
            entity = self.w.schema.tables[point.table].entity
            text = say.update_clause(ref.phrase, [(entity, pointed), *settings])
        elif change is not None and change.aspect:  # `enable roaming for the line ...`
            verb = say.verb_phrase(words(tool.op_name), table.entity)
            if " " not in verb:  # (`close the dispute of the charge ...`, not `close for the charge ...`)
                verb = f"{verb} the {' '.join(words(change.aspect))} of"
            else:
                verb += " for"
            text = say.clause(verb, ref.phrase, settings)
        elif tool.plan.compiled_as == "update":
            text = say.update_clause(ref.phrase, settings)
        elif tool.plan.compiled_as == "delete":
            text = say.clause("delete", ref.phrase, settings)
        else:
            verb = say.verb_phrase(words(tool.op_name), table.entity, self._parent_words(tool))
            text = say.clause(*say.marking(verb, ref.phrase), settings)
        return Write(text, lookups, tool.name, args, table.entity, ref.phrase)

    def _parent_words(self, tool: Tool) -> set[str]:
        """The words of the tables `tool`'s table belongs to (`guild` of `sync_guild_template`)."""
        tables = self.w.schema.tables
        owners = {(col.references or "").split(".")[0] for col in tool.table.columns.values()}
        return {w for name in owners if name in tables for w in words(tables[name].entity)}

    def _pointed(self, point: Repoint, row: Row, lookup: bool) -> say.Said | None:
        """Another row for `row` to point at (its reference changes): named as a person would
        (with its lookups) when `lookup`, else by id."""
        other = self.w.schema.tables[point.table]
        pk = other.primary_key
        rows = [r for r in self.w.rows.get(other.name, []) if r.get(pk) != row.get(point.column)]
        self.rng.shuffle(rows)
        for candidate in rows[:6]:
            ref = self.w.name_row(other, candidate, self.rng, lookup=lookup)
            if ref is not None and (ref.calls or not lookup):
                return say.Said(candidate[pk], ref.phrase, list(ref.calls))
        return None

    def create(self, tool: Tool, lookup: bool) -> Write | None:
        verb = say.verb_phrase(words(tool.op_name), tool.table.entity).split(" ")[0]
        if verb in _COMPUTING_VERBS or not say.creates(verb):
            return None  # (`calculate a new area circle`, `create a new array`: no record)
        args: Args = {}
        owners: list[str] = []
        used_rows: list[str] = []  # (a CDN made with a certificate: not `a new CDN for the certificate`)
        lookups: list[tuple[str, Args]] = []
        used = self.w.domain.tools[tool.name].arguments_read
        for b in tool.role("parent"):
            parent = self.w.parent_of(tool, b)
            optional = b.param not in tool.required
            if (
                parent is None
                or is_classifier(parent.entity)
                or (optional and (b.param not in used or len(owners) >= 2 or self.rng.random() < 0.5))
            ):  # (a new row for two of its owners at most: not for a consumer, a user, a lead, ...)
                if b.param in tool.required:
                    return None
                continue
            alone = len(tool.role("parent")) < 2  # (two owners each named through a child: a riddle)
            named = self.w.some_row(parent, self.rng, lookup=lookup, besides=tool.table.name, via=alone)
            if named is None:
                if b.param in tool.required:
                    return None
                continue
            row, ref = named
            args[b.param] = row[parent.primary_key]
            (owners if owns(tool.op, b.param, parent.entity, optional) else used_rows).append(ref.phrase)
            lookups = seq(lookups, ref.calls)
        key = tool.key
        if key is not None and key.param in tool.required:
            args[key.param] = self._new_key(tool.table)
        fields = self._fields(tool, None, self.rng.choice((1, 2)), lookup=lookup)
        if fields is None or not self._covered(tool, set(args) | {b.param for b, _ in fields}):
            return None
        for b, value in fields:
            args[b.param] = say.plain(value)
            lookups = seq(lookups, value.calls if isinstance(value, say.Said) else [])
        settings = [(b.param, v) for b, v in fields]
        if key is not None and key.param in args:
            settings.insert(0, (key.param, args[key.param]))
        text = say.create_clause(verb, tool.table.entity, owners, settings, used_rows)
        return Write(text, lookups, tool.name, args)

    def _new_key(self, table: TablePlan) -> Any:
        if table.columns[table.primary_key].type == "integer":
            taken = [r.get(table.primary_key) for r in self.w.rows.get(table.name, [])]
            return max([t for t in taken if isinstance(t, int)] or [0]) + 100 + self.rng.randint(1, 99)
        used = {str(r.get(table.primary_key)) for r in self.w.rows.get(table.name, [])}
        key = ""
        for attempt in range(50):  # what a person names a new one (`checkout-staging`), not a stand-in
            key = f"{self.rng.choice(_KEY_TEAMS)}-{self.rng.choice(_KEY_KINDS)}" + (
                f"-{attempt}" if attempt > 20 else ""
            )
            if key not in used:
                break
        return key

    def rows_of(self, table: TablePlan) -> list[Row]:
        rows = list(self.w.rows.get(table.name, []))
        self.rng.shuffle(rows)
        return rows[:6]

    def _parents(self, tool: Tool) -> list[tuple[Binding, TablePlan]]:
        """The required parent arguments of a write that finds its row by them, not by a key (a
        sub-resource: `PATCH /deployments/{name}/status`): each with the table it refers to."""
        found = []
        for b in tool.role("parent"):
            parent = self.w.parent_of(tool, b)
            if b.param in tool.required and b.column is not None and parent is not None:
                found.append((b, parent))
        return found

    def by_parents(self, tool: Tool, row: Row, lookup: bool) -> Ref | None:
        """`the status of the deployment whose name is ...`: a row that a key-less write finds by
        its parents (the first of theirs, as the tool takes it), the parents named as a person
        would (with lookups) or, without `lookup`, left to `keyed` to give by id."""
        parents = self._parents(tool)
        table = tool.table
        same = [
            r
            for r in self.w.rows.get(table.name, [])
            if all(r.get(b.column or "") == row.get(b.column or "") for b, _ in parents)
        ]
        if not parents or len(same) != 1:
            return None  # (`the claim of the namespace ...` is its only one, or the request is unclear)
        if not lookup:
            return Ref(f"the {say.noun(table.entity)}", [])
        phrases: list[str] = []
        calls: list[tuple[str, Args]] = []
        for b, parent in parents:
            prow = next(
                (
                    r
                    for r in self.w.rows.get(parent.name, [])
                    if r.get(parent.primary_key) == row.get(b.column or "")
                ),
                None,
            )
            ref = (
                self.w.name_row(parent, prow, self.rng, lookup=True, besides=table.name)
                if prow is not None
                else None
            )
            if ref is None or not ref.calls:
                return None
            phrases.append(ref.phrase)
            calls = seq(calls, ref.calls)
        return Ref(f"the {say.noun(table.entity)} of {say.join_clauses(phrases)}", calls)

    def one_write(self, tool: Tool, lookup: bool, long: bool = False) -> Write | None:
        """One write of `tool` that runs (with lookups that find its ids, when `lookup`); with
        `long`, only one of 3+ calls (a value copied from another looked-up row when it can)."""
        if long:
            self.copy_odds = 1.0
            try:
                made = self._one_write(tool, lookup, tries=5, enough=3)
            finally:
                self.copy_odds = 0.7
            return made
        return self._one_write(tool, lookup)

    def _one_write(self, tool: Tool, lookup: bool, tries: int = 3, enough: int = 0) -> Write | None:
        if tool.plan.compiled_as in _KEYED and (tool.key is not None or self._parents(tool)):
            for row in self.rows_of(tool.table):
                ref = (
                    self.w.name_row(tool.table, row, self.rng, lookup=lookup)
                    if tool.key is not None
                    else self.by_parents(tool, row, lookup)
                )
                if ref is None or (lookup and not ref.calls):
                    continue
                made = self.keyed(tool, row, ref)
                if made is not None and len(made.calls) >= enough and self._succeeds(made.calls):
                    return made
            return None
        if tool.plan.compiled_as == "create":
            for _ in range(tries):
                made = self.create(tool, lookup)
                if made is None or not made.args or (lookup and not made.lookups) or len(made.calls) < enough:
                    continue
                if self._succeeds(made.calls):
                    return made
        return None

    def _succeeds(self, calls: list[tuple[str, Args]], failing: int | None = None) -> bool:
        """Whether the calls run as planned on a fresh episode (call `failing` must fail)."""
        return self._run(calls, failing) is not None

    def _run(self, calls: list[tuple[str, Args]], failing: int | None = None) -> list[Any] | None:
        """The calls' results on a fresh episode (`$calls.N.path` arguments resolved), or None
        when one does not run as planned (call `failing` must fail)."""
        results: list[Any] = []
        with self.w.domain.episode(seed=0) as ep:
            for i, (name, args) in enumerate(calls):
                try:
                    results.append(
                        ep.call(
                            name,
                            resolve_arguments(
                                call(name, self.w.full(name, args))["arguments"], results, index=i
                            ),
                        )
                    )
                except ToolgymError:
                    if i != failing:
                        return None
                    results.append(NO_RESULT)
                    continue
                if i == failing:
                    return None
        return results

    def followups(self) -> list[Candidate]:
        """A create, then a write on the row it made (`create a new ticket ..., then change the
        priority of the new ticket to 2`): the second write takes the new row's id from the
        create's result (`$calls.N.<key>`), so the two run in one order only, whatever they do
        to the clock; the create's lookups feed it."""
        out: list[Candidate] = []
        for tool in [t for t in self.writes() if t.plan.compiled_as == "create"]:
            table = tool.table
            pk = table.primary_key
            then = [
                t
                for t in self.writes()
                if t.table.name == table.name
                and t.plan.compiled_as in ("update", "status")
                and t.key is not None
            ]
            if not then:
                continue
            first = self.one_write(tool, lookup=True)
            results = self._run(first.calls) if first is not None else None
            made = results[-1] if results else None
            if first is None or not isinstance(made, dict) or not scalar(made.get(pk)):
                continue
            at = len(first.calls) - 1
            written = {b.column for b in tool.bindings if b.param in first.args}
            for _ in range(3):  # a second write that changes what the create wrote would hide it
                other = self.rng.choice(then)
                second = self.keyed(other, made, Ref(f"the new {say.noun(table.entity)}", first.calls))
                if second is None or second.lookups[: len(first.calls)] != first.calls:
                    continue
                if any(b.column in written for b in other.role("field") if b.param in second.args):
                    continue
                assert other.key is not None
                second.args[other.key.param] = calls_ref(at, pk)
                calls = [*second.lookups, (other.name, second.args)]
                if len(calls) >= 3 and self._succeeds(calls):
                    text = say.write_sentence(self.rng, [first.text, "then " + second.text])
                    out.append(Candidate("double", text, self._gold(calls)))
                    break
        return out

    def writes(self) -> list[Tool]:
        return [t for t in self.w.tools if t.plan.kind == "write"]

    def singles(self) -> list[Candidate]:
        out: list[Candidate] = []
        for _ in range(2):
            for tool in self.writes():
                made = self.one_write(tool, lookup=False)
                if made is not None and all(c.calls[-1]["arguments"] != made.args for c in out):
                    out.append(self._candidate("single", [made]))
        return out

    def chains(self) -> list[Candidate]:
        """Each write after the lookups that find its ids, twice round the write tools: first
        only chains of 3+ calls (a value copied from another looked-up row, a row named through
        its parent), then any; the longer ones first."""
        out: list[Candidate] = []
        for long in (True, False):
            for tool in self.writes():
                made = self.one_write(tool, lookup=True, long=long)
                if made is not None and all(c.calls[-1]["arguments"] != made.args for c in out):
                    out.append(self._candidate("chain", [made]))
        return sorted(out, key=lambda c: not c.long)

    def _commute(self, a: Tool, b: Tool) -> bool:
        """Whether two writes on different rows leave the same state in either order: neither
        stamps the clock (each write's time is the number of writes before it) and they do not
        both draw a generated id of one table (the ids would trade places)."""
        tools = self.w.domain.tools
        if tools[a.name].uses_now or tools[b.name].uses_now:
            return False
        drawn = [
            t.table.name
            for t in (a, b)
            if t.plan.compiled_as in ("create", "event") and (t.key is None or t.key.param not in t.required)
        ]
        return len(drawn) < 2 or drawn[0] != drawn[1]

    def refusals(self) -> list[Candidate]:
        out = []
        for tool in self.writes():
            change = tool.plan.effect
            if tool.plan.compiled_as != "status" or not isinstance(change, StateChange) or tool.key is None:
                continue
            status = change.column
            for row in self.rows_of(tool.table):
                state = row.get(status)
                already = state == change.value
                if isinstance(state, bool) and already and change.verb in STATE_VERBS:
                    state = STATE_VERBS[change.verb][0]  # `enabled`, as the refusal says it
                if not isinstance(state, str):
                    continue
                ref = self.w.name_row(tool.table, row, self.rng, lookup=True)
                if ref is None or not ref.calls:
                    continue
                if already and set(words(state)) <= set(words(ref.phrase)):
                    continue  # (not `cancel the cancelled run`: asked of a row said to be so already)
                made = self.keyed(tool, row, ref)
                if made is None:
                    continue
                calls = made.calls
                if self._succeeds(calls, failing=len(calls) - 1):
                    text = say.refusal_sentence(self.rng, made.text)
                    out.append(Candidate("refusal", text, self._gold(calls, failing=len(calls) - 1), [state]))
                    break
        return out

    def _reads_well(self, text: str, calls: Sequence[tuple[str, Args]]) -> bool:
        """Whether `text` passes the instruction checks that need no result (a clause added to a
        long request is dropped, not the whole request)."""
        return text_problems(text, self._gold(calls), self._tool_names) is None

    def _candidate(self, kind: str, writes: list[Write]) -> Candidate:
        calls: list[tuple[str, Args]] = []
        for w in writes:
            calls = seq(calls, w.lookups)
            calls.append((w.tool, w.args))
        return Candidate(kind, say.write_sentence(self.rng, merged(writes)), self._gold(calls))


def propose(world: World, rng: random.Random) -> list[Candidate]:
    """Candidates of every kind, interleaved (chains first), at most `MAX_CANDIDATES`."""
    p = Proposer(world, rng)
    questions = p.reads()
    by_kind = {
        "sweep": sweeps(p, _QUOTA["sweep"]),
        "changes": changes(p, _QUOTA["changes"]),
        "every": everys(p, _QUOTA["every"]),
        "errand": errands(p, _QUOTA["errand"]),
        "batch": batches(p, _QUOTA["batch"]),
        "roundup": p.roundups(_QUOTA["roundup"]),
        "survey": p.surveys(_QUOTA["survey"]),
        "double": p.followups(),
        "chain": p.chains(),
        "read": questions + p.counts(),
        "compare": p.compares(_QUOTA["compare"]),
        "total": p.totals(_QUOTA["total"]),
        "refusal": p.refusals(),
        "single": p.singles(),
    }
    # (no task about a thing named after an operation: `the bypostcodes ...`)
    unsaid = [n for t in world.unsaid() for n in (say.noun(t.entity), plural_phrase(say.noun(t.entity)))]
    if unsaid:
        named = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in unsaid) + r")\b", re.IGNORECASE)
        by_kind = {
            kind: [c for c in found if not named.search(c.instruction)] for kind, found in by_kind.items()
        }
    by_kind["goal"] = goals(p, by_kind, _QUOTA["goal"])
    spare = {kind: found[_QUOTA[kind] :] for kind, found in by_kind.items()}
    for kind, found in by_kind.items():
        del found[_QUOTA[kind] :]
    out: list[Candidate] = []
    for pools in (by_kind, spare):  # each kind up to its quota first, then whatever is left
        while any(pools.values()) and len(out) < MAX_CANDIDATES:
            for found in pools.values():
                if found:
                    out.append(found.pop(0))
    return out[:MAX_CANDIDATES]


def owns(op: Operation, param: str, parent: str, optional: bool) -> bool:
    """Whether the row an argument names owns the new row (`for the user ...`): a person's or a
    company's, a required one, or one its HTTP path is under (`POST /projects/{id}/keys`); a
    row an optional argument in the body of a request names is one the new row uses (a CDN's
    certificate: `create a new CDN ... using the certificate ...`)."""
    if table_kind(parent) in ("person", "company") or not optional:
        return True
    scope = path_params(op)
    return param in scope or not scope and not op.pointer.startswith("/paths/")
