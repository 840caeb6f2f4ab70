"""Typed builders: what they emit loads, means what the caller said, and rebuilds real domains exactly.

- any literal (string, number, nested JSON) and any template text survives builder -> YAML ->
  load -> evaluation unchanged (hypothesis): escaping is the builders' job;
- every step kind, written with the typed API, runs as the format documents;
- (tests/test_builders_lift.py) builders and the language's parser agree both ways, and every
  pinned domain rebuilt through the builders replays its gold exactly.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from scoring import load_domain as load_graded
from simulator import Domain, ToolError
from simulator.builders import (
    NOW,
    NOW_DEFAULT,
    DomainBuilder,
    F,
    arg,
    call,
    calls_ref,
    clock,
    column,
    count,
    counter_ids,
    create,
    delete,
    dump_yaml,
    expr,
    fail,
    filter_,
    fmt,
    for_each,
    get,
    has,
    inputs,
    let,
    list_,
    literal,
    map_,
    obj,
    op,
    ops,
    param,
    pattern_ids,
    ref,
    require,
    return_,
    row,
    sum_,
    template,
    update,
    use,
)
from simulator.builders.lift import lift_domain
from simulator.errors import SpecError

from .conftest import ROOT

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
JSON = st.recursive(
    st.none() | st.booleans() | INT64 | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def _notes_domain() -> DomainBuilder:
    d = DomainBuilder("roundtrip", "1.0.0", description="builder round trips")
    d.table("notes", "id", {"id": column("integer"), "text": column("string"), "data": column("json")})
    return d


# ------------------------------------------------------------------ round trips (hypothesis)


@given(texts=st.lists(st.text(), min_size=1, max_size=4))
def test_any_literal_string_and_template_text_survives_yaml_load_and_evaluation(texts: list[str]) -> None:
    d = _notes_domain()
    for i, s in enumerate(texts):
        d.tool(
            f"read_{i}",
            "returns the literal in several places",
            "read",
            inputs({"x": param("string")}),
            return_(
                obj(
                    {
                        "value": s,
                        "in_list": [s, [s]],
                        "in_object": {s: s},
                        "text": fmt(template(s, arg("x"), s)),
                    }
                )
            ),
        )
        d.tool(f"fail_{i}", "fails with the text", "read", inputs({}), fail(template(s)))
        d.tool(
            f"store_{i}", "stores the text", "write", inputs({}), create("notes", {"text": s, "data": [s]})
        )
        d.tool(
            f"find_{i}",
            "finds it by a literal filter",
            "read",
            inputs({}),
            count("notes", where=[F("text").eq(s)]),
        )
    domain = d.load()
    with domain.episode() as ep:
        for i, s in enumerate(texts):
            assert ep.call(f"read_{i}", {"x": "|"}) == {
                "value": s,
                "in_list": [s, [s]],
                "in_object": {s: s},
                "text": s + "|" + s,
            }
            with pytest.raises(ToolError) as refused:
                ep.call(f"fail_{i}", {})
            assert str(refused.value) == s
            before = ep.call(f"find_{i}", {})
            stored = ep.call(f"store_{i}", {})
            assert (stored["text"], stored["data"]) == (s, [s])
            assert ep.call(f"find_{i}", {}) == before + 1  # the filter's literal is the text itself


@given(values=st.lists(JSON, min_size=1, max_size=3))
def test_any_json_literal_survives_as_a_python_value_and_as_literal(values: list[Any]) -> None:
    d = _notes_domain()
    for i, value in enumerate(values):
        d.tool(f"plain_{i}", "a literal", "read", inputs({}), return_(value))
        d.tool(f"literal_{i}", "the literal operator", "read", inputs({}), return_(literal(value)))
    domain = d.load()
    with domain.episode() as ep:
        for i, value in enumerate(values):
            assert ep.call(f"plain_{i}", {}) == value
            assert ep.call(f"literal_{i}", {}) == value


def _resolve(arguments: Any, results: list[Any], index: int) -> Any:
    try:
        from scoring.calls import resolve_arguments
    except ImportError:  # before the `$calls` parser moved out of gold replay
        from simulator.gold import resolve_arguments  # type: ignore[no-redef]
    return resolve_arguments(arguments, results, "echo", index)


@given(texts=st.lists(st.text(), min_size=1, max_size=3))
def test_gold_call_argument_strings_are_literals_and_calls_ref_refers(texts: list[str]) -> None:
    d = _notes_domain()
    d.tool(
        "echo",
        "echo",
        "read",
        inputs({"s": param("string"), "many": param("array")}, required=["s"]),
        return_(obj({"s": arg("s"), "many": arg("many")})),
    )
    d.task(
        "echo",
        "echo the text twice",
        [call("echo", {"s": t, "many": [t, {"k": t}]}) for t in texts]
        + [call("echo", {"s": calls_ref(0, "s")})],
        answer_facts=["x"],
    )
    with tempfile.TemporaryDirectory() as tmp:  # the gold is the grading side's to read
        domain = load_graded(d.write(Path(tmp) / "echo"))
    results: list[Any] = []
    with domain.episode() as ep:
        for i, gold in enumerate(domain.tasks[0].calls):
            results.append(ep.call(gold.name, _resolve(gold.arguments, results, i)))
    assert results == [{"s": t, "many": [t, {"k": t}]} for t in texts] + [{"s": texts[0], "many": None}]


# ------------------------------------------------------------------ the typed API, every step kind


def _library() -> Domain:
    d = DomainBuilder(
        "library",
        "1.0.0",
        description="every step kind",
        clock={"start": "2026-05-01T10:00:00Z", "tick_seconds": 60},
    )
    d.table(
        "books",
        "book_id",
        {
            "book_id": column("string"),
            "title": column("string"),
            "copies": column("integer"),
            "price": column("number"),
            "tags": column("json", default=[]),
        },
    )
    d.table(
        "loans",
        "loan_id",
        {
            "loan_id": column("string"),
            "book_id": column("string", references="books.book_id"),
            "reader": column("string"),
            "status": column("string", enum=["open", "returned"], default="open"),
            "at": column("datetime", default=NOW_DEFAULT),
        },
        id_prefix="L-",
    )
    d.seed(
        "books",
        [
            {"book_id": "B1", "title": "Dune", "copies": 2, "price": 9.5, "tags": ["sf"]},
            {"book_id": "B2", "title": "Emma", "copies": 0, "price": 4, "tags": ["$classic"]},
            {"book_id": "B3", "title": "Ubik", "copies": 1, "price": 7.25, "tags": ["sf"]},
        ],
    )
    book = ref("book")
    d.fragment(
        "book_or_fail",
        ["book_id"],
        [
            get(
                "books",
                key={"book_id": ref("book_id")},
                error=template("No book ", ref("book_id"), "."),
                as_="b",
            ),
            return_(ref("b")),
        ],
    )
    d.tool(
        "lend",
        "Lend books to a reader.",
        "write",
        inputs(
            {"book_ids": param("array", items=param("string")), "reader": param("string")},
            required=["book_ids", "reader"],
        ),
        [
            require(ops.exists(arg("book_ids")), "Name at least one book."),
            for_each(
                arg("book_ids"),
                "id",
                [
                    use("book_or_fail", {"book_id": ref("id")}, as_="book"),
                    fail(
                        template(book.get("title"), " has no copies left {sorry}."),
                        when=ops.le(book.get("copies"), 0),
                    ),
                    update(
                        "books", {"copies": ops.sub(row("copies"), 1)}, key={"book_id": book.get("book_id")}
                    ),
                    create("loans", {"book_id": book.get("book_id"), "reader": arg("reader")}, as_="loan"),
                    let(
                        "line",
                        fmt(
                            template(
                                ref("i").fmt(">2"),
                                ": ",
                                book.get("title"),
                                " at ",
                                book.get("price").fmt(".2f"),
                            )
                        ),
                    ),
                ],
                index="i",
                collect="lines",
            ),
            count("loans", where=[F("reader").eq(arg("reader")), F("status").eq("open")], as_="open"),
            return_(obj({"lines": ref("lines"), "open": ref("open"), "now": NOW})),
        ],
    )
    d.tool(
        "shelf",
        "Books by tag and price.",
        "read",
        inputs({"tag": param("string"), "max_price": param("number"), "limit": param("integer")}),
        [
            list_(
                "books",
                where=[F("price").le(arg("max_price"))],
                order_by=["-price"],
                limit=arg("limit"),
                max_limit=None,
                as_="all",
            ),
            sum_("books", "copies", as_="copies"),
            let("tagged", filter_(ref("all"), "b", lambda b: ops.contains(b.get("tags"), arg("tag")))),
            return_(
                obj(
                    {
                        "titles": map_(
                            ref("tagged"), "b", lambda b, i: ops.concat(i, ":", b.get("title")), index="i"
                        ),
                        "copies": ref("copies"),
                        "tag_given": has("tag"),
                        "first": get_first(),
                    }
                )
            ),
        ],
    )
    d.tool(
        "forget",
        "Delete returned loans, and a book with no copies.",
        "write",
        inputs({"book_id": param("string")}, required=["book_id"]),
        [
            get(
                "books",
                where=[F("book_id").eq(arg("book_id")), F("copies").eq(0)],
                optional=True,
                as_="empty",
            ),
            delete(
                "books", key={"book_id": arg("book_id")}, when=ops.not_(ops.is_null(ref("empty"))), as_="gone"
            ),
            return_(obj({"deleted": ops.not_(ops.is_null(ref("gone")))})),
        ],
    )
    return d.load()


def get_first() -> Any:
    """`at: [list, 0]` through the generic `op` (old spellings are written in their new form)."""
    return op("at", ref("all"), 0)


@pytest.fixture(scope="module")
def library() -> Domain:
    return _library()


def test_every_step_kind_built_with_the_typed_api_runs_as_documented(library: Domain) -> None:
    with library.episode(seed=3) as ep:
        lent = ep.call("lend", {"book_ids": ["B1", "B3"], "reader": "ann"})
        assert lent == {
            "lines": [" 0: Dune at 9.50", " 1: Ubik at 7.25"],
            "open": 2,
            "now": "2026-05-01T10:00:00Z",
        }
        with pytest.raises(ToolError, match=r"^Emma has no copies left \{sorry\}\.$"):
            ep.call("lend", {"book_ids": ["B1", "B2"], "reader": "bob"})
        with pytest.raises(ToolError, match=r"^No book B9\.$"):
            ep.call("lend", {"book_ids": ["B9"], "reader": "bob"})
        assert [b["copies"] for b in ep.export()["books"]] == [1, 0, 0]  # the refused calls changed nothing
        shelf = ep.call("shelf", {"tag": "sf"})
        assert shelf == {
            "titles": ["0:Dune", "1:Ubik"],
            "copies": 1,
            "tag_given": True,
            "first": shelf["first"],
        }
        assert shelf["first"]["book_id"] == "B1"
        assert ep.call("shelf", {"max_price": 5})["titles"] == []
        assert ep.call("shelf", {"max_price": 5})["tag_given"] is False
        assert ep.call("forget", {"book_id": "B1"}) == {"deleted": False}
        assert ep.call("forget", {"book_id": "B2"}) == {"deleted": True}
        assert "B2" not in {b["book_id"] for b in ep.export()["books"]}


def test_the_emitted_yaml_is_the_documented_shape() -> None:
    step = require(ops.ge(arg("amount"), 1), template("Amount {", arg("amount"), "} too small; costs $5."))
    assert step.raw == {
        "require": {"ge": ["$args.amount", 1]},
        "error": "Amount {{{args.amount}}} too small; costs $5.",
    }
    assert expr({"price": "$5", "tags": ["$a", "b"]}) == {"object": {"price": "$$5", "tags": ["$$a", "b"]}}
    assert ops.neg(arg("x")).raw == {"neg": "$args.x"}
    assert ops.len_([1, 2]).raw == {"len": [[1, 2]]}  # a list operand stays one operand
    assert ops.get(ref("o"), "k").raw == {"get_key": ["$o", "k"]}  # old spelling -> its new name
    assert F("closed_at").is_null().raw == {"column": "closed_at", "op": "eq", "value": None}
    assert F("x").eq(arg("x"), skip_if_null=False).raw["skip_if_null"] is False
    assert list_("t", max_limit=None).raw == {"list": "t", "max_limit": None}
    assert call("c", {"memo": "$$x", "ref": calls_ref(1, "items", 0, "id")})["arguments"] == {
        "memo": "$$$x",
        "ref": "$calls.1.items.0.id",
    }
    text = dump_yaml({"a": "yes", "b": "1.0", "c": "x: y", "d": "\u2028"})
    assert yaml.safe_load(text) == {"a": "yes", "b": "1.0", "c": "x: y", "d": "\u2028"}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: op("frobnicate", 1), "unknown operator 'frobnicate'"),
        (lambda: ops.frobnicate(1), "unknown operator 'frobnicate'"),
        (lambda: ops.sub(1, 2, 3), "sub takes 2 operand"),
        (lambda: op("map", 1), "map takes its own shape"),
        (lambda: ref("1st"), "starts with a name"),
        (lambda: ref("a", "b.c"), "without '.'"),
        (lambda: template("x", ref("rows", "a b")), "cannot spell the path segment 'a b'"),
        (lambda: arg("x").fmt("{"), "cannot hold braces"),
        (lambda: expr(float("nan")), "must be finite"),
        (lambda: column("string", default="$now"), "NOW_DEFAULT"),
        (lambda: inputs({"a": param("string")}, required=["b"]), "not among the properties"),
        (lambda: has("$x"), "an argument's name"),
        (lambda: literal(arg("x")), "takes data, not a built expression"),
        (lambda: literal({1: 2}), "keys are strings"),
        (lambda: calls_ref(-1), "0 or more"),
        (
            lambda: _notes_domain().tool("t", "x", "reed", inputs({}), count("notes")),
            "tool 't': kind: Input should be",
        ),
        (lambda: _notes_domain().table("t", "id", {"id": column("strng")}), "table 't': columns.id.type"),
        (lambda: _notes_domain().task("t", "x", [call("c")], ignore_columns=["nodot"]), "task 't'"),
    ],
)
def test_what_cannot_be_written_is_refused_when_built_naming_it(build: Any, message: str) -> None:
    with pytest.raises((ValueError, AttributeError, TypeError), match=message):
        build()


def test_a_domain_mistake_is_reported_at_load_naming_the_tool_and_step() -> None:
    d = _notes_domain()
    d.tool("bad", "reads a table that does not exist", "read", inputs({}), [get("nope", key={"id": 1})])
    with pytest.raises(SpecError, match=r"tools\[0\] \(bad\)") as problems:
        d.load()
    assert "nope" in str(problems.value)
    d2 = _notes_domain()
    d2.table("x", "id", {"id": column("integer")})
    with pytest.raises(ValueError, match="defined twice"):
        d2.table("x", "id", {"id": column("integer")})


def test_write_gives_a_folder_that_loads_and_a_spec() -> None:
    d = _notes_domain()
    d.policy = "Be brief."
    d.tool("n", "count notes", "read", inputs({}), count("notes"))
    d.seed("notes", [{"id": 1, "text": "$not a ref", "data": {"k": "{x}"}}])
    d.task("t", "How many notes?", [call("n")], answer_facts=[1])
    spec = d.spec()
    assert spec.name == "roundtrip" and [t.name for t in spec.tools] == ["n"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = d.write(Path(tmp) / "roundtrip")
        assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == [
            "domain.yaml",
            "notes.jsonl",
            "policy.md",
            "tasks.jsonl",
        ]
        from scoring import load_domain

        domain = load_domain(folder)
    assert domain.policy == "Be brief."
    with domain.episode() as ep:
        assert ep.call("n", {}) == 1
        stored = ep.export()["notes"][0]
        assert (stored["text"], stored["data"]) == (
            "$not a ref",
            {"k": "{x}"},
        )  # seed rows are data, not expressions


def test_write_refuses_a_folder_holding_a_domain_and_overwrites_leaving_nothing_stale(tmp_path: Path) -> None:
    d = _notes_domain()
    d.table("old", "id", {"id": column("integer")})
    d.tool("n", "count notes", "read", inputs({}), count("notes"))
    d.seed("notes", [{"id": 1, "text": "a", "data": []}]).seed("old", [{"id": 1}])
    folder = d.write(tmp_path / "d")
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="already holds domain.yaml, seed"):
        d.write(folder)
    again = _notes_domain()
    again.tool("n", "count notes", "read", inputs({}), count("notes"))
    again.seed("notes", [{"id": 2, "text": "b", "data": []}])
    again.write(folder, overwrite=True)
    assert sorted(p.name for p in (folder / "seed").iterdir()) == [
        "notes.jsonl"
    ]  # the old table's rows are gone
    assert (folder / "notes.txt").read_text(
        encoding="utf-8"
    ) == "mine"  # what the builder did not write is kept
    from scoring import load_domain

    with load_domain(folder).episode() as ep:
        assert [r["id"] for r in ep.export()["notes"]] == [2]


def test_builders_for_keys_id_schemes_clock_format_internal_lookups_joins_and_new_operators() -> None:
    d = DomainBuilder("clubs", "1.0.0", clock=clock("2026-05-01 10:00:00", 60))
    d.table(
        "teams",
        "team_id",
        {"team_id": column("string"), "city": column("string")},
        ids=pattern_ids("AAA999", "T-"),
    )
    d.table(
        "seats",
        ["team_id", "seat"],
        {
            "team_id": column("string", references="teams.team_id"),
            "seat": column("integer"),
            "holder": column("string", nullable=True),
            "at": column("datetime", default=NOW_DEFAULT),
        },
    )
    d.table(
        "certs",
        "cert_id",
        {"cert_id": column("string"), "team_id": column("string", references="teams.team_id")},
        ids=counter_ids("certificate_", start=1000001),
    )
    d.seed("teams", [{"team_id": "T-ABC123", "city": "Lyon"}, {"team_id": "T-XYZ999", "city": "Paris"}])
    d.seed(
        "seats",
        [
            {"team_id": "T-ABC123", "seat": 1, "holder": None, "at": "2026-04-01 09:00:00"},
            {"team_id": "T-XYZ999", "seat": 1, "holder": "ann", "at": "2026-04-01 09:00:00"},
        ],
    )
    d.tool(
        "add_team",
        "A team, its certificate and its first seat.",
        "write",
        inputs({"city": param("string")}, ["city"]),
        [
            create("teams", {"city": arg("city")}, as_="team"),
            create("certs", {"team_id": ref("team", "team_id")}, as_="cert"),
            create("seats", {"team_id": ref("team", "team_id"), "seat": 1}, as_="seat"),
            return_(
                obj({"team": ref("team", "team_id"), "cert": ref("cert", "cert_id"), "at": ref("seat", "at")})
            ),
        ],
    )
    optional_text = param(["string", "null"])
    d.tool(
        "seats_of",
        "Seats by holder (internal: a null holder is not skipped) and by the team's city.",
        "read",
        inputs({"holder": optional_text, "city_start": param("string"), "city_end": param("string")}),
        [
            list_(
                "seats",
                where=[F("holder").eq(arg("holder"))],
                join={"team": "team_id"},
                internal=True,
                as_="held",
            ),
            list_(
                "seats",
                where=[
                    F("team_id.city").starts_with(arg("city_start")),
                    F("team_id.city").ends_with(arg("city_end")),
                ],
                order_by=["team_id"],
                as_="by_city",
            ),
            return_(
                obj(
                    {
                        "held": ops.pluck(ref("held"), "team_id"),
                        "held_in": map_(ref("held"), "s", lambda s: s.get("team", "city")),
                        "by_city": ops.pluck(ref("by_city"), "team_id"),
                        "holder_given": has("holder"),
                        "flat": ops.flatten([[1], [2, [3]]]),
                        "both": ops.concat_lists([1], [2]),
                        "middle": ops.slice("abcdef", 1, 3),
                        "keyed": ops.set_key({"a": 1}, arg("city_start"), 2),
                    }
                )
            ),
        ],
    )
    domain = d.load()
    with domain.episode(seed=1) as ep:
        added = ep.call("add_team", {"city": "Nice"})
        assert added["cert"] == "certificate_1000001"
        assert added["team"].startswith("T-") and len(added["team"]) == 8
        assert added["at"] == "2026-05-01 10:00:00"  # $now rendered like the clock's start
        found = ep.call("seats_of", {"city_start": "Ly"})
        assert found == {
            "held": [],
            "held_in": [],
            "by_city": ["T-ABC123"],
            "holder_given": False,
            "flat": [1, 2, [3]],
            "both": [1, 2],
            "middle": "bc",
            "keyed": {"a": 1, "Ly": 2},
        }
        assert ep.call("seats_of", {"holder": None, "city_start": "Pa"})["holder_given"] is True
        held = ep.call("seats_of", {"holder": "ann", "city_start": "Pa", "city_end": "is"})
        assert (held["held"], held["held_in"], held["by_city"]) == (["T-XYZ999"], ["Paris"], ["T-XYZ999"])
        with pytest.raises(ToolError, match="set_key: a key is a string or a number, got null"):
            ep.call("seats_of", {})  # the computed key is null: the agent's tool error


def test_update_patch_sets_only_what_the_call_gave_and_lifts_back(tmp_path: Path) -> None:
    d = DomainBuilder("notes", "1.0.0")
    d.table(
        "notes",
        "id",
        {"id": column("integer"), "text": column("string", nullable=True), "n": column("integer")},
    )
    d.seed("notes", [{"id": 1, "text": "first", "n": 0}])
    d.tool(
        "edit",
        "Change a note: only the fields given.",
        "write",
        inputs({"id": param("integer"), "text": param(["string", "null"])}, required=["id"]),
        update("notes", {"n": ops.add(row("n"), 1)}, patch={"text": arg("text")}, key={"id": arg("id")}),
    )
    with pytest.raises(ValueError, match="give `set` or `patch`"):
        update("notes", key={"id": 1})
    for domain in (d.load(), lift_domain(d.write(tmp_path / "notes")).load()):
        with domain.episode() as ep:
            assert ep.call("edit", {"id": 1}) == {
                "id": 1,
                "text": "first",
                "n": 1,
            }  # absent: left as it is
            assert ep.call("edit", {"id": 1, "text": "second"})["text"] == "second"
            assert ep.call("edit", {"id": 1, "text": None})["text"] is None  # explicit null: written


def test_every_registered_step_kind_and_operator_has_a_builder() -> None:
    """A step kind or operator added to its registry without a builder fails here."""
    from simulator.builders.steps import STEP_BUILDERS
    from simulator.format.spec import STEP_KINDS
    from simulator.lang import OPERATORS

    assert set(STEP_BUILDERS) == set(STEP_KINDS)
    from simulator.builders.expr import _SPECIAL

    for name, operator in OPERATORS.items():
        assert callable(getattr(ops, name)), name
        if operator.parse is not None:  # an operand of its own shape needs a builder of its own
            assert name in _SPECIAL, name


def test_the_documented_example_runs(tmp_path: Path) -> None:
    """docs/domain-format.md "Building domains from code": its example builds, writes and loads."""
    text = (ROOT / "docs" / "domain-format.md").read_text(encoding="utf-8")
    section = text[text.index("## Building domains from code") :]
    code = section[
        section.index("```python\n") + len("```python\n") : section.index("```\n", section.index("```python"))
    ]
    assert 'd.write("out/shop")' in code
    scope: dict[str, Any] = {}
    exec(compile(code.replace('"out/shop"', repr(str(tmp_path / "shop"))), "domain-format.md", "exec"), scope)  # noqa: S102
    assert (tmp_path / "shop" / "domain.yaml").exists()
    with scope["domain"].episode() as ep:
        assert ep.call("ship", {"order_id": "O-1"})["status"] == "shipped"
        with pytest.raises(ToolError, match=r"^Order O-1 is shipped\.$"):
            ep.call("ship", {"order_id": "O-1"})
