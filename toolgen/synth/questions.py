"""Questions on a generated domain: one row's value, surveys of several, counts and comparisons.

    Asker(world, rng).reads() -> [Candidate]   # then .surveys(most), .roundups(most), .compares(most)

The question kinds of `walks` (which adds the writes), with the candidate every kind makes.
Over 500 lines: one class, `Asker`, whose question kinds share the world's lookups.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.builders import call
from toolgen.naming import singular, words

from . import instructions as say
from .checks import opaque, text_problems
from .lexicon import handle_columns, is_payload, is_unnamed, table_kind
from .lookups import Args, Ref, Row, World, reveals, scalar, seq
from .schema import ColumnPlan, TablePlan

__all__ = ["Asker", "Candidate"]

#: how many rows a `survey` names, and how many surveys one table gets at most
_SURVEY_SIZES = (6, 10, 12)
_SURVEYS_A_TABLE = 5
#: how many rows a `roundup` question names
_ROUNDUP_SIZES = (4, 6, 8, 10)
#: questions about single rows drawn per domain (a survey picks among them)
_QUESTIONS = 32
#: how many rows a `compare` request names
_COMPARE_SIZES = (5, 8, 10)
#: last words of numeric fields that are codes, not amounts (a card number is not compared)
_CODE_FIELDS = frozenset("id ids number no num code zip pin cvv cvc phone sha256 hash checksum".split())
#: last words of a column that holds an id (asked only when a row holds nothing else)
_ID_WORDS = frozenset("id ids uuid guid sid arn".split())
#: words of a number that sets how a row behaves, not an amount it holds: no one adds up plans'
#: `interval count`s or `max retries`
_SETTINGS = frozenset("interval max maximum min minimum limit retry retries threshold default".split())
#: last words of a measure whose sum means something (a total price; not a total temperature)
_ADDITIVE = frozenset(
    "price amount total balance cost fee fees quantity count size weight duration distance calories "
    "points votes views likes followers goals assists wins losses revenue income profit sales seats stock "
    "population area volume capacity mileage servings".split()
)
#: last words of a column no person asks to be told (a credential)
_SECRET_WORDS = frozenset("password passwd secret token hash salt".split())
#: a row named by one value of one field: `the product whose name is "Kettle"`
_ONE_FIELD = re.compile(
    r'the (?P<noun>[a-z0-9 ]+?) whose (?P<field>[a-z0-9 ]+?) is (?P<value>"(?:[^"\\]|\\.)*")'
)


@dataclass
class Candidate:
    """A task before validation."""

    kind: str
    instruction: str
    calls: list[dict[str, Any]]
    answer_facts: list[Any] = field(default_factory=list)

    @property
    def long(self) -> bool:
        """3+ calls where lookups come first and feed a write (or the write refused)."""
        return (
            self.kind
            in (
                "chain",
                "double",
                "errand",
                "batch",
                "every",
                "sweep",
                "changes",
                "survey",
                "roundup",
                "compare",
                "total",
                "refusal",
                "goal",
            )
            and len(self.calls) >= 3
        )


class Asker:
    """The questions a domain's rows answer."""

    def __init__(self, world: World, rng: random.Random):
        self.w = world
        self.rng = rng
        self._tool_names = [t.name for t in world.tools]

    def _gold(self, calls: Sequence[tuple[str, Args]], failing: int | None = None) -> list[dict[str, Any]]:
        return [
            call(name, self.w.full(name, args), expect_error=i == failing)
            for i, (name, args) in enumerate(calls)
        ]

    def reads(self) -> list[Candidate]:
        out = []
        tables = list(self.w.schema.tables.values())
        self.rng.shuffle(tables)
        for table in tables:
            asked = 0
            rows = list(self.w.rows.get(table.name, []))
            self.rng.shuffle(rows)
            for row in rows[:12]:  # up to 12 rows tried, 8 questions kept (12 in a small domain)
                if asked >= (12 if len(tables) <= 2 else 8):
                    break
                found = self._question(table, row)
                if found is None:
                    continue
                asked += 1
                ref, column = found
                if table.columns[column].references:  # `the name of the customer of the order ...`
                    followed = self._followed(table, row, column, ref)  # (never the id it holds)
                    if followed is not None:
                        text, calls, answer = followed
                        out.append(Candidate("read", text, self._gold(calls), [answer]))
                    continue
                text = say.ask_sentence(self.rng, column, ref.phrase, table.entity)
                out.append(Candidate("read", text, self._gold(ref.calls), [row[column]]))
                if len(out) >= _QUESTIONS:
                    return out
        return out

    def counts(self) -> list[Candidate]:
        """`How many <entities> have <field> <value>?`, answered by a listing filtered on that field."""
        out: list[Candidate] = []
        for tool in self.w.tools:
            if tool.plan.compiled_as != "list":
                continue
            table = tool.table
            for b in tool.role("field"):
                col = table.columns.get(b.column or "")
                if col is None or not col.enum or not tool.required <= {b.param}:
                    continue
                rows = self.w.rows.get(table.name, [])
                column = b.column or ""
                values = sorted({str(r[column]) for r in rows if isinstance(r.get(column), str)})
                if not values:
                    continue
                value = self.rng.choice(values)
                count = sum(1 for r in rows if r.get(column) == value)
                result = self.w.read(tool.name, {b.param: value})
                if isinstance(result, list) and len(result) == count:
                    text = say.count_sentence(self.rng, table.entity, b.column or b.param, value)
                    out.append(Candidate("read", text, self._gold([(tool.name, {b.param: value})]), [count]))
                    break
        return out

    def surveys(self, most: int) -> list[Candidate]:
        """One or two values of 6-12 rows of one table in one sentence (`What are the name and
        the country of each of the crews CRE-1019, CRE-1010, ...?`): a person's list of rows to
        look up, each row found by its own lookups (named by a field, else by its id through
        the getter); the answer facts are every value asked, row by row."""
        out: list[Candidate] = []
        tables = list(self.w.schema.tables.values())
        self.rng.shuffle(tables)
        for table in tables:
            if len(out) >= most:
                break
            groups = sorted(self._named(table).items()) + sorted(self._by_id(table).items())
            texts: set[str] = set()
            for said_field, found in groups * _SURVEYS_A_TABLE:
                if len(texts) >= _SURVEYS_A_TABLE or len(out) >= most:
                    break
                width = self.rng.choice((1, 2))
                shuffled = self.rng.sample(found, len(found))
                made = self._survey(table, said_field, shuffled, _SURVEY_SIZES, width, "survey")
                if made is not None and len(made.calls) >= 3 and made.instruction not in texts:
                    texts.add(made.instruction)
                    out.append(made)
        return out

    def _by_id(self, table: TablePlan) -> dict[str, list[tuple[Row, str, list[tuple[str, Args]]]]]:
        """Rows of `table` named by their ids and read by its getter (`the crews CRE-1019 and
        CRE-1010`; whole-number ids `whose ids are 19 and 14`), as `_named` gives them."""
        getter = self.w.getter(table)
        if getter is None or getter.key is None or not _counted(table):
            return {}
        rows = list(self.w.rows.get(table.name, []))
        self.rng.shuffle(rows)
        found = [
            (row, str(key), [(getter.name, {getter.key.param: key})])
            for row in rows[:16]
            if (key := row.get(table.primary_key)) is not None
            and not isinstance(key, bool)
            and not opaque(str(key))
        ]
        numbers = any(isinstance(row[table.primary_key], int) for row, *_ in found)
        return {"id" if numbers else "": found} if found else {}

    def roundups(self, most: int) -> list[Candidate]:
        """One question about one value of several rows of a table, named by one field (`Tell me
        the currency of each of the shipping rates whose display names are "A", "B" and "C".`),
        each row found by its own lookup (and the table's getter when that does not show the
        value): the answer facts are every value asked, in order."""
        out: list[Candidate] = []
        tables = list(self.w.schema.tables.values())
        self.rng.shuffle(tables)
        for table in tables:
            if len(out) >= most:
                break
            for said_field, found in sorted(self._named(table).items()):
                made = self._survey(table, said_field, found)
                if made is not None:
                    out.append(made)
                    break
        return out

    def _named(self, table: TablePlan) -> dict[str, list[tuple[Row, str, list[tuple[str, Args]]]]]:
        """Rows of `table` named the same way (`whose name is ...`), by field: (row, value as
        said, lookups)."""
        rows = list(self.w.rows.get(table.name, []))
        self.rng.shuffle(rows)
        named: dict[str, list[tuple[Row, str, list[tuple[str, Args]]]]] = {}
        for row in rows[:16]:
            ref = self.w.by_name(table, row)
            m = _ONE_FIELD.fullmatch(ref.phrase) if ref is not None else None
            if ref is not None and m is not None and m["noun"] == say.noun(table.entity):
                named.setdefault(m["field"], []).append((row, m["value"], ref.calls))
        return named

    def reads_showing(
        self, table: TablePlan, row: Row, lookups: list[tuple[str, Args]], columns: Sequence[str]
    ) -> list[tuple[str, Args]] | None:
        """The reads that show `row`'s `columns`: its lookups, then the table's getter when the
        last lookup does not show them; None when neither does."""
        reads = list(lookups)
        if all(reveals(self.w.read(*reads[-1]), c, row[c]) for c in columns):
            return reads
        getter = self.w.getter(table)
        if getter is None or getter.key is None or reads[-1][0] == getter.name:
            return None
        reads.append((getter.name, {getter.key.param: row[table.primary_key]}))
        return reads if all(reveals(self.w.read(*reads[-1]), c, row[c]) for c in columns) else None

    def _survey(
        self,
        table: TablePlan,
        said_field: str,
        found: list[tuple[Row, str, list[tuple[str, Args]]]],
        sizes: Sequence[int] = _ROUNDUP_SIZES,
        width: int = 1,
        kind: str = "roundup",
    ) -> Candidate | None:
        """`width` values of up to a size from `sizes` rows, in one sentence (only rows that hold
        every value asked: a field some rows leave empty is asked of the others)."""
        if len(found) < 3:
            return None
        answers = _answers(table)

        def holds(row: Row, c: str) -> bool:  # (a value a person reads out: not empty, not yes/no)
            return scalar(row.get(c)) and not isinstance(row.get(c), bool)

        def filled(c: str) -> list[Any]:
            return [r[c] for r, *_ in found if holds(r, c)]

        asked = [
            c
            for c, col in table.columns.items()
            if c in answers
            and col.type != "json"
            and col.plain
            and not col.references
            and c != table.primary_key
            and not _ID_WORDS.intersection(words(c)[-1:])
            and not said_field.endswith(" ".join(words(c)))  # (`the name of ... whose character names are`)
            and len(filled(c)) >= 3
            and len({repr(v) for v in filled(c)}) >= 2
        ]
        if not asked:
            return None
        # one field per way of saying it (`name` and `group_name` of a group are both its name)
        asked = list({say.own_field(c, table.entity): c for c in sorted(asked)}.values())
        columns = self.rng.sample(asked, min(width, len(asked)))
        found = [f for f in found if all(holds(f[0], c) for c in columns)]
        if any(len({repr(row[c]) for row, *_ in found}) < 2 for c in columns):
            return None
        size = self.rng.choice(sizes)
        said: list[str] = []
        facts: list[Any] = []
        calls: list[tuple[str, Args]] = []
        held = {repr(r.get(c)) for r in self.w.rows.get(table.name, []) for c in columns if scalar(r.get(c))}
        for row, text, lookups in found[:size]:
            wanted = [*facts, *(row[c] for c in columns)]
            if len(held - {repr(v) for v in wanted}) <= len(wanted):
                break  # (no more rows than other values: an answer listing them all must fail)
            reads = self.reads_showing(table, row, lookups, columns)
            if reads is None:
                continue
            said.append(text)
            facts += [row[c] for c in columns]
            calls = seq(calls, reads)
        if len(said) < 3:
            return None
        text = say.ask_many(self.rng, columns, table.entity, said_field, said)
        if text_problems(text, self._gold(calls), self._tool_names) is not None:
            return None
        return Candidate(kind, text, self._gold(calls), facts)

    def compares(self, most: int) -> list[Candidate]:
        """`Of the products whose name is "A", "B", "C" or "D", which has the highest price?`: rows
        of one table named by one field, each found by its lookup (then read by the table's getter
        when the lookup does not show the value); the answer is computed from what was read."""
        out: list[Candidate] = []
        tables = list(self.w.schema.tables.values())
        self.rng.shuffle(tables)
        for table in tables:
            numeric = measures(table)
            if not numeric or len(out) >= most:
                continue
            rows = list(self.w.rows.get(table.name, []))
            self.rng.shuffle(rows)
            named: dict[str, list[tuple[Row, str, list[tuple[str, Args]]]]] = {}
            for row in rows[:16]:  # rows named the same way (`whose name is ...`), by field
                ref = self.w.by_handle(table, row)
                m = _ONE_FIELD.fullmatch(ref.phrase) if ref is not None and ref.calls else None
                if ref is not None and m is not None and m["noun"] == say.noun(table.entity):
                    named.setdefault(m["field"], []).append((row, m["value"], ref.calls))
            for said_field, found in sorted(named.items()):
                if said_field.split()[-1] in _CODE_FIELDS | {"pk", "key"}:
                    continue  # `the assets whose site id is ...`: a list of ids is no way to name rows
                made = self._compare(table, self.rng.choice(numeric), said_field, found)
                if made is not None:
                    out.append(made)
                    break
        return out

    def totals(self, most: int) -> list[Candidate]:
        """`What is the total price of the orders whose numbers are "A", ..., "F"?`: one measure
        that adds up (`_ADDITIVE`: a price, a count, not a temperature or a year) of 6-12 rows of
        one table named alike (by a field, or by id through the getter), each read; the answer
        is their sum."""
        out: list[Candidate] = []
        tables = list(self.w.schema.tables.values())
        self.rng.shuffle(tables)
        for table in tables:
            numeric = [
                c
                for c in measures(table)
                if _ADDITIVE.intersection(words(c)[-1:]) and not _SETTINGS.intersection(words(c))
            ]
            if not numeric or len(out) >= most:
                continue
            for said_field, found in sorted(self._named(table).items()) + sorted(self._by_id(table).items()):
                made = self._total(table, self.rng.choice(numeric), said_field, found)
                if made is not None:
                    out.append(made)
                    break
        return out

    def _total(
        self,
        table: TablePlan,
        column: str,
        said_field: str,
        found: list[tuple[Row, str, list[tuple[str, Args]]]],
    ) -> Candidate | None:
        got = self._measured(table, column, found, self.rng.choice(_SURVEY_SIZES), distinct=False)
        if got is None:
            return None
        values, said, calls = got
        total = sum(values)
        answer = total if all(isinstance(v, int) for v in values) else round(total, 2)
        text = say.total_sentence(self.rng, table.entity, said_field, said, column)
        return Candidate("total", text, self._gold(calls), [answer])

    def _measured(
        self,
        table: TablePlan,
        column: str,
        found: list[tuple[Row, str, list[tuple[str, Args]]]],
        size: int,
        distinct: bool = True,
    ) -> tuple[list[float], list[str], list[tuple[str, Args]]] | None:
        """(`column`'s values, the rows as said, the reads) of up to `size` of the `found` rows
        whose reads show the value (their lookups, then the getter when those do not); None
        when fewer than 3."""
        values: list[float] = []
        said: list[str] = []
        calls: list[tuple[str, Args]] = []
        for row, text, lookups in found:
            value = row.get(column)
            if len(values) >= size:
                break
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or (distinct and value in values)
            ):
                continue
            reads = self.reads_showing(table, row, lookups, [column])
            if reads is None:
                continue
            values.append(value)
            said.append(text)
            calls = seq(calls, reads)
        return (values, said, calls) if len(values) >= 3 else None

    def _compare(
        self,
        table: TablePlan,
        column: str,
        said_field: str,
        found: list[tuple[Row, str, list[tuple[str, Args]]]],
    ) -> Candidate | None:
        got = self._measured(table, column, found, self.rng.choice(_COMPARE_SIZES))
        if got is None:
            return None
        values, said, calls = got
        highest = self.rng.random() < 0.5
        text = say.compare_sentence(self.rng, table.entity, said_field, said, column, highest)
        answer = max(values) if highest else min(values)
        return Candidate("compare", text, self._gold(calls), [answer])

    def _followed(
        self, table: TablePlan, row: Row, column: str, ref: Ref
    ) -> tuple[str, list[tuple[str, Args]], Any] | None:
        """For a reference `column` (an order's `customer_id`), the question a person asks
        instead of its id: the referenced row's name, fetched through it (`the name of the
        customer of the order ...`); None when that row has no name a getter shows."""
        target = table.columns[column].references
        other = self.w.schema.tables.get(target.split(".")[0]) if target else None
        if other is None or other.name == table.name:
            return None
        getter = self.w.getter(other)
        if getter is None or getter.key is None:
            return None
        found = [r for r in self.w.rows.get(other.name, []) if r.get(other.primary_key) == row[column]]
        if len(found) != 1:
            return None
        args = {getter.key.param: row[column]}
        result = self.w.read(getter.name, args)
        for handle in handle_columns(self.w.domain.spec.tables[other.name], other.name):
            value = found[0].get(handle)
            if isinstance(value, str) and value.strip() and reveals(result, handle, value):
                target_phrase = say.via_phrase(other.entity, table.entity, ref.phrase)
                text = say.ask_sentence(self.rng, handle, target_phrase, other.entity)
                return text, [*ref.calls, (getter.name, args)], value
        return None

    def _question(self, table: TablePlan, row: Row) -> tuple[Ref, str] | None:
        """A way to find `row` and a value of it to ask for: named by what a person knows of it
        (lookups), else by its id through a getter; the value one the reads show and the name
        does not state (a reference to another row counts: `the customer id of ...`, and so does
        the row's own id when nothing else is shown)."""
        refs = []
        ref = self.w.name_row(table, row, self.rng, lookup=True)
        if ref is not None and ref.calls:
            refs.append(ref)
        getter = self.w.getter(table)
        if (
            getter is not None
            and getter.key is not None
            and _counted(table)
            and not opaque(str(row[table.primary_key]))
        ):
            args = {getter.key.param: row[table.primary_key]}
            refs.append(Ref(say.id_phrase(table.entity, row[table.primary_key]), [(getter.name, args)]))
        answers = _answers(table)
        for ref in refs:
            result = self.w.read(*ref.calls[-1])
            asked = [
                c
                for c, col in table.columns.items()
                if c in answers
                and col.type != "json"
                and (col.plain or col.references)
                and scalar(row.get(c))
                and not isinstance(row.get(c), bool)
                and c not in ref.phrase
                and str(row.get(c)) not in ref.phrase
                and reveals(result, c, row[c])
            ]
            rows = self.w.rows.get(table.name, [])
            # a value every row shares is no answer (nothing else could be said): the most varied first
            varied = {c: len({repr(r.get(c)) for r in rows}) for c in asked}
            asked = [c for c in asked if varied[c] >= max(2, min(4, max(varied.values(), default=0)))]
            # its own values first (codes named `… id` last), then a row it refers to (whose name
            # `_followed` asks for); never its own id: no person asks for that
            plain = [c for c in asked if not table.columns[c].references and c != table.primary_key]
            named = [c for c in plain if not _ID_WORDS.intersection(words(c)[-1:])]
            refers = [c for c in asked if table.columns[c].references]
            if named or refers or plain:
                return ref, self.rng.choice(sorted(named or refers or plain))
        return None


_WHEN_WORDS = frozenset("date time at on timestamp day year".split())
#: things one has one of, not rows a person counts and quotes by number (`the settings SET-1009`)
_SINGLETONS = frozenset("settings setting preferences preference configuration".split())


def _counted(table: TablePlan) -> bool:
    """Whether a person names rows of `table` by their ids: not the settings of something."""
    ws = words(table.entity)
    return not (ws and ws[-1] in _SINGLETONS)


def measures(table: TablePlan) -> list[str]:
    """The columns of `table` holding an amount a person compares (`price`, `elevation`): plain
    numbers that are no code, key, reference or choice."""
    return [
        c
        for c, col in table.columns.items()
        if col.type in ("integer", "number")
        and col.plain
        and not col.references
        and not col.enum
        and c != table.primary_key
        and not _CODE_FIELDS.intersection(words(c)[-1:])
        and not _WHEN_WORDS.intersection(words(c)[-1:])  # (a date held as a number is no amount)
    ]


def _answers(table: TablePlan) -> set[str]:
    """The columns a question may ask for: the record's fields when the API answers with one
    (an argument only a read takes, `top_k`, `search_term`, is no answer), else every column;
    never a credential (`password`), a label the server stamps (`_stamp`), a field named as
    the thing itself (`the phone number of each of the numbers`) nor a copy of a fact of
    a row it belongs to (`the city name of the forecast ... of the city ...`), nor a field with a
    twin (a library's `name` and `library_name`, both said `name`: one names the row), nor a
    person's bare `date` (of what?)."""
    parents = {
        tuple(singular(w) for w in words(col.references.split(".")[0]))
        for col in table.columns.values()
        if col.references
    }
    recorded = {c for c, col in table.columns.items() if col.recorded and c != table.primary_key}
    spelled = {words(c) for c in table.columns}
    found = (
        recorded | {c for c, col in table.columns.items() if col.references}
        if recorded
        else set(table.columns)
    )
    return {
        c
        for c in found
        if not _SECRET_WORDS.intersection(words(c)[-1:])  # (nor a credential)
        and not is_payload(table.entity, c)  # (nor an image's `content`: bytes)
        and not _stamp(table.columns[c])
        and not table.columns[
            c
        ].searched  # (a name made for a search to match: `Orchestration Payment Intent`)
        and words(c)[-len(words(table.entity)) :]
        != words(table.entity)  # (nor `the phone number of the number`)
        and not _twin(words(table.entity), words(c), spelled)  # (`name` beside `library_name`: one fact)
        and not (is_unnamed(table.entity) and words(c) == ("name",))  # (`the name of each of the sessions`)
        and not (
            words(c) in (("date",), ("time",)) and table_kind(table.name) == "person"
        )  # (a person's `date`)
        and not any(
            table.columns[c].references is None and len(words(c)) > len(ws) and words(c)[: len(ws)] == ws
            for ws in parents
        )
    }


def _twin(entity: tuple[str, ...], ws: tuple[str, ...], spelled: set[tuple[str, ...]]) -> bool:
    """Whether another column is this one with the entity's words before it, or this one is
    another with them (`library_name` and `name` of a library, said alike: `its name`), or its
    `<thing>_name` beside a column named as the thing (a color's `color_name` and `color`)."""
    n = len(entity)
    if len(ws) > n and ws[:n] == entity and ws[n:] == ("name",) and entity in spelled:
        return True  # (a color's `color_name` beside its `color`: both its name)
    return (*entity, *ws) in spelled or (len(ws) > n and ws[:n] == entity and ws[n:] in spelled)


def _stamp(col: ColumnPlan) -> bool:
    """A label the server stamps on a record (Kubernetes' `kind`, an `etag`, a `selfLink`): text
    the spec says the server sets, of no format or set of values: no one asks for it."""
    return col.server_set and col.type == "string" and not col.enum and not col.hint.get("format")
