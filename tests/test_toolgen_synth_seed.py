"""Seed rows (toolgen/synth/seed.py, values.py): deterministic, realistic, loadable.

Properties (hypothesis) over random table layouts: same seed -> byte-identical JSONL; every foreign
key points at a real row; keys and unique columns unique; every value fits its column; the rows
load with `simulator.load_domain`. Then: every bundled and fixture domain reseeded from its own
spec loads; hints (formats, bounds, patterns, enums, examples) are honoured; id schemes; sizes; a
domain generated from a real spec by the generator loads with its seed.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import check_domain, load_domain
from simulator.builders import DomainBuilder, column, counter_ids, dump_jsonl, hash_ids, pattern_ids
from simulator.format.spec import Table
from simulator.plan.tables import ValueProblem, build_tables
from toolgen.synth.lexicon import handle_columns
from toolgen.synth.seed import SeedError, seed_rows, table_order
from toolgen.synth.values import handle_column

from .conftest import FIXTURES, ROOT, shared_file

DOMAINS = [ROOT / "domains" / name for name in ("bank", "logistics", "office", "tau2-retail")] + [
    FIXTURES / "stays",
    FIXTURES / "shop",
]


def _jsonl(rows: dict[str, list[dict[str, Any]]]) -> str:
    return "".join(f"{table}\n{dump_jsonl(r)}" for table, r in rows.items())


def _domain_folder(tmp: Path, source: Path, rows: dict[str, list[dict[str, Any]]]) -> Path:
    """`source`'s domain.yaml (and policy) with `rows` as its seed; no tasks (they name old rows)."""
    folder = tmp / source.name
    (folder / "seed").mkdir(parents=True)
    shutil.copy(source / "domain.yaml", folder / "domain.yaml")
    if (source / "policy.md").is_file():
        shutil.copy(source / "policy.md", folder / "policy.md")
    for table, table_rows in rows.items():
        (folder / "seed" / f"{table}.jsonl").write_text(dump_jsonl(table_rows), encoding="utf-8")
    return folder


def _assert_consistent(tables: dict[str, Table], rows: dict[str, list[dict[str, Any]]]) -> None:
    """Keys and unique columns unique, every value fits its column, every foreign key resolves."""
    _, infos = build_tables(tables)
    for name, table in tables.items():
        keys = [tuple(r[c] for c in table.key_columns) for r in rows[name]]
        assert len(keys) == len(set(keys)), f"{name}: duplicate keys"
        for cname, col in table.columns.items():
            values = [r[cname] for r in rows[name]]
            if col.unique:
                present = [v for v in values if v is not None]
                assert len(present) == len(set(present)), f"{name}.{cname}: duplicate unique values"
            for value in values:
                try:
                    infos[name].encode(cname, value)
                except ValueProblem as exc:  # pragma: no cover - the assertion's message
                    raise AssertionError(f"{name}.{cname}: {exc}") from None
            if col.references:
                rt, rc = col.references.split(".")
                targets = {r[rc] for r in rows[rt]}
                missing = [v for v in values if v is not None and v not in targets]
                assert not missing, f"{name}.{cname} refers to missing {rt}.{rc} values {missing[:3]}"
        assert list(rows[name][0]) == list(table.columns) if rows[name] else True


# ---------------------------------------------------------------------------------------------
# random layouts


_TYPES = ("string", "integer", "number", "boolean", "datetime", "json")
_NAMES = ("name", "email", "title", "city", "amount", "created_at", "status", "notes", "tags", "code", "rank")


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    """Raw tables: string or integer keys under every id scheme, composite keys whose first column
    is a foreign key, columns of every type (nullable, unique, enum, default), foreign keys to
    earlier tables, to the table itself and (nullable) to later ones: cycles included."""
    count = draw(st.integers(1, 4))
    names = [f"t{i}" for i in range(count)]
    # a foreign key names a table's whole key: only tables keyed by `id` alone are referred to
    single = [i == 0 or draw(st.booleans()) for i in range(count)]
    tables: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(names):
        columns: dict[str, Any] = {}
        composite = not single[i]
        ids: dict[str, Any] | None = None
        if composite:
            parent = draw(st.sampled_from([n for n, s in zip(names[:i], single, strict=False) if s]))
            columns["parent_id"] = column("string", references=f"{parent}.id")
            columns["id"] = column("integer")
            key: Any = ["parent_id", "id"]
        else:
            key = "id"
            key_type = draw(st.sampled_from(("string", "integer")))
            columns["id"] = column(key_type)
            if key_type == "string":
                ids = draw(
                    st.sampled_from(
                        (None, hash_ids("K-"), counter_ids("N-", start=100, width=5), pattern_ids("AA-999"))
                    )
                )
            elif draw(st.booleans()):
                ids = counter_ids(start=1000)
        for j in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(_TYPES))
            base = draw(st.sampled_from(_NAMES))
            options: dict[str, Any] = {"nullable": draw(st.booleans())}
            if kind in ("string", "integer") and draw(st.integers(0, 3)) == 0:
                options["unique"] = True
            if kind == "string" and draw(st.integers(0, 3)) == 0:
                options["enum"] = ["open", "closed", "pending"]
                options["default"] = "open"
            columns[f"{base}_{j}"] = column(kind, **options)
        for j, target in enumerate(names[:i]):
            if single[j] and draw(st.integers(0, 2)) == 0:
                columns[f"ref_{j}"] = column(
                    "string", nullable=draw(st.booleans()), references=f"{target}.id"
                )
        if not composite and draw(st.integers(0, 3)) == 0:
            columns["self_ref"] = column(columns["id"]["type"], nullable=True, references=f"{name}.id")
        for j, target in enumerate(names[i + 1 :], start=i + 1):
            if single[j] and draw(st.integers(0, 4)) == 0:
                columns[f"later_{j}"] = column("string", nullable=True, references=f"{target}.id")
        tables[name] = {"primary_key": key, "columns": columns, **({"ids": ids} if ids else {})}
    # foreign keys point at string `id`s: retype those columns to the key's type
    for table in tables.values():
        for col in table["columns"].values():
            if col.get("references"):
                referred = tables[col["references"].split(".")[0]]
                col["type"] = referred["columns"]["id"]["type"]
    return tables


@given(layouts(), st.integers(0, 2**32), st.sampled_from((None, 0, 3, 12)))
def test_random_layouts_seed_consistently_and_deterministically(
    raw: dict[str, dict[str, Any]], seed: int, rows: int | None
) -> None:
    tables = {name: Table.model_validate(t) for name, t in raw.items()}
    first = seed_rows(tables, {}, seed, rows)
    assert _jsonl(first) == _jsonl(seed_rows(raw, {}, seed, rows))  # same seed: byte-identical
    _assert_consistent(tables, first)
    if rows is not None:
        assert all(len(r) <= rows for r in first.values())


@given(layouts(), st.integers(0, 2**32))
def test_random_layouts_load(raw: dict[str, dict[str, Any]], seed: int) -> None:
    builder = DomainBuilder("random", "1.0.0")
    for name, table in raw.items():
        builder.table(name, table["primary_key"], table["columns"], ids=table.get("ids"))
    for name, table_rows in seed_rows(builder.spec(), {}, seed, 6).items():
        builder.seed(name, table_rows)
    report = builder.check()
    assert not report.errors, [f"{p.file}:{p.location}: {p.message}" for p in report.errors]


def test_parents_come_first_and_a_cycle_breaks_at_a_nullable_reference() -> None:
    tables = {
        "a": {
            "primary_key": "id",
            "columns": {"id": column("string"), "b_id": column("string", references="b.id")},
        },
        "b": {
            "primary_key": "id",
            "columns": {"id": column("string"), "a_id": column("string", nullable=True, references="a.id")},
        },
        "c": {
            "primary_key": "id",
            "columns": {"id": column("string"), "a_id": column("string", references="a.id")},
        },
    }
    assert table_order(tables) == ["b", "a", "c"]
    rows = seed_rows(tables, {}, 1, 5)
    _assert_consistent({n: Table.model_validate(t) for n, t in tables.items()}, rows)
    assert any(r["a_id"] is not None for r in rows["b"])  # the back edge is filled in afterwards


# ---------------------------------------------------------------------------------------------
# bundled domains


@pytest.mark.parametrize("source", DOMAINS, ids=lambda p: p.name)
def test_bundled_domains_reseeded_from_their_own_specs_load(source: Path, tmp_path: Path) -> None:
    spec = load_domain(source).spec
    rows = seed_rows(spec, {}, seed=3)
    assert all(rows.values()), {t: len(r) for t, r in rows.items()}
    for name, table in spec.tables.items():  # a row can be named: its handle is set and distinct
        handle = handle_column(table)
        if handle is not None:
            values = [r[handle] for r in rows[name]]
            assert None not in values and len(set(values)) == len(values), (name, handle)
    domain = load_domain(_domain_folder(tmp_path, source, rows))
    assert {t: len(r) for t, r in rows.items()} == {
        t: len(r) for t, r in domain.episode().export().items() if t in rows
    }


def test_a_foreign_key_follows_from_another_of_the_row() -> None:
    """A card's customer is its account's (bank); a message's owner is its folder's (office)."""
    rows = seed_rows(load_domain(ROOT / "domains" / "bank").spec, {}, seed=8)
    owner = {a["account_id"]: a["customer_id"] for a in rows["accounts"]}
    assert all(card["customer_id"] == owner[card["account_id"]] for card in rows["cards"])
    rows = seed_rows(load_domain(ROOT / "domains" / "office").spec, {}, seed=8)
    owner = {f["folder_id"]: f["owner_id"] for f in rows["folders"]}
    assert all(m["owner_id"] == owner[m["folder_id"]] for m in rows["messages"])


def test_an_artist_is_named_like_a_person() -> None:
    """A sculpture's `artist_name` and `artist` are people's names, not catch phrases."""

    from faker import Faker
    from faker.providers.person.en_US import Provider

    from toolgen.synth.draws import Draw, Field
    from toolgen.synth.texts import string_maker

    FIRST_NAMES, LAST_NAMES = set(Provider.first_names), set(Provider.last_names)

    for name in ("artist_name", "artist", "composer"):
        made = string_maker(Field("sculptures", name, "string"))
        for seed in range(20):
            value = made(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC)))
            first, last = value.split(" ", 1)
            assert first in FIRST_NAMES and last in LAST_NAMES, value


def test_a_username_is_a_login_whatever_it_is_of() -> None:
    """A role connection's `platform_username` is a login (`jsmith`), not a code (`USE-28143`);
    a `last_login` is not one."""
    from faker import Faker

    from toolgen.synth.draws import Draw, Field
    from toolgen.synth.texts import string_maker

    for name in ("username", "platform_username", "platformUsername", "screen_name"):
        made = string_maker(Field("role_connections", name, "string"))
        for seed in range(10):
            value = made(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC)))
            assert re.fullmatch(r"[a-z][a-z0-9._]+", value), (name, value)
    made = string_maker(Field("role_connections", "last_login", "string"))
    assert not re.fullmatch(
        r"[a-z][a-z._]+[0-9]*", made(Draw.of(Faker("en_US"), 0, datetime(2026, 1, 1, tzinfo=UTC)))
    )


def test_a_thing_of_a_long_plural_name_is_named_by_its_last_words_singular() -> None:
    from faker import Faker

    from toolgen.synth.draws import Draw
    from toolgen.synth.lexicon import NAME_WORDS
    from toolgen.synth.names import thing_name

    make = thing_name("soundboard_default_sounds")
    names = [make(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC))) for seed in range(30)]
    assert not any("Sounds" in n or "Soundboard" in n for n in names), names
    assert all(n.endswith(" Default Sound") for n in names), names
    assert {n.split()[0] for n in names} <= set(NAME_WORDS)  # (`Weekly Default Sound`: no buzzwords)
    groups = [
        thing_name("group")(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC)))
        for seed in range(200)
    ]
    assert "Group Group" not in groups


def test_a_value_over_its_max_length_is_cut_at_a_word_s_end() -> None:
    from toolgen.synth.draws import Draw
    from toolgen.synth.texts import _bounded_string

    draw = Draw.of(__import__("faker").Faker("en_US"), 1, datetime(2026, 1, 1, tzinfo=UTC))
    assert _bounded_string(lambda d: "Configurable Encompassing Capability", {"maxLength": 35})(draw) == (
        "Configurable Encompassing"
    )
    assert _bounded_string(lambda d: "Configurable", {"maxLength": 5})(draw) == "Confi"


def test_a_part_of_an_address_holds_that_part() -> None:
    """Stripe's `address_city`, `address_state`, `address_country`: a city, a state, a country;
    `address` itself a whole address."""

    from faker import Faker

    from toolgen.synth.draws import Draw, Field
    from toolgen.synth.texts import string_maker

    def made(name: str) -> str:
        draw = Draw.of(Faker("en_US"), 3, datetime(2026, 1, 1, tzinfo=UTC))
        return str(string_maker(Field("sources", name, "string"))(draw))

    assert "@" not in made("email_subject") and made("email_subject")[0].isupper()  # (a subject line)
    assert made("state") in ("active", "inactive", "pending", "archived")  # (a source's state)

    def name_of(table: str) -> str:
        draw = Draw.of(Faker("en_US"), 3, datetime(2026, 1, 1, tzinfo=UTC))
        return str(string_maker(Field(table, "name", "string"))(draw))

    assert " " not in name_of("cities").replace("New ", "").replace("Lake ", "").replace("Port ", "")
    assert name_of("deployed_branches").endswith(" Deployed Branch")
    for part in ("address_city", "address_state", "address_country", "address_zip"):
        assert "," not in made(part) and len(made(part)) < 40, (part, made(part))
    assert "," in made("address")


def test_same_seed_same_bytes_in_another_process() -> None:
    """Nothing depends on the process (hash randomisation, the clock, import order)."""
    code = (
        "import hashlib, sys; from simulator import load_domain; from simulator.builders import dump_jsonl; "
        "from toolgen.synth.seed import seed_rows; "
        f"rows = seed_rows(load_domain({str(ROOT / 'domains' / 'bank')!r}).spec, {{}}, 11); "
        "print(hashlib.sha256(''.join(t + '\\n' + dump_jsonl(r) for t, r in rows.items()).encode()).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True
    )
    here = seed_rows(load_domain(ROOT / "domains" / "bank").spec, {}, 11)
    assert out.stdout.strip() == hashlib.sha256(_jsonl(here).encode()).hexdigest()


def test_values_drawn_from_a_negated_class_are_the_same_in_every_process() -> None:
    """`[^a-z]{12}`: the characters a negated class leaves are drawn in a fixed order, not a set's."""
    tables = {"tags": {"primary_key": "id", "columns": {"id": {"type": "string"}, "tag": {"type": "string"}}}}
    hints = {"tags": {"tag": {"type": "string", "pattern": "^[^a-z]{12}$"}}}
    code = (
        "import json; from toolgen.synth.seed import seed_rows; "
        f"print(json.dumps(seed_rows({tables!r}, {hints!r}, 4, 8)['tags']))"
    )
    drawn = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True
        )
        drawn.append(json.loads(out.stdout))
    assert drawn[0] == drawn[1]
    assert all(re.fullmatch(r"[^a-z]{12}", r["tag"]) for r in drawn[0])


def test_seeds_differ_and_tables_are_stable_under_additions() -> None:
    spec = load_domain(FIXTURES / "shop").spec
    assert _jsonl(seed_rows(spec, {}, 1)) != _jsonl(seed_rows(spec, {}, 2))
    tables = dict(spec.tables)
    extra = {"primary_key": "id", "columns": {"id": column("string"), "note": column("string")}}
    grown = {**tables, "aaa_first": Table.model_validate(extra)}
    # each column has its own stream: adding a table changes no other table's rows
    before, after = seed_rows(tables, {}, 5, salt="x"), seed_rows(grown, {}, 5, salt="x")
    assert all(before[t] == after[t] for t in tables)


def test_datetimes_lie_around_the_clock_never_the_wall_clock() -> None:
    spec = load_domain(ROOT / "domains" / "bank").spec
    rows = seed_rows(spec, {}, 0, clock="2031-05-01T00:00:00Z")
    stamps = [r["created_at"] for r in rows["customers"]]
    assert all("2029-04-01" <= s <= "2031-05-01T00:00:00Z" for s in stamps), stamps[:3]
    assert all(r["updated_at"] is None or r["created_at"] <= r["updated_at"] for r in rows["customers"])
    events = seed_rows(load_domain(ROOT / "domains" / "office").spec, {}, 0)["events"]
    for event in events:  # a span: the end an hour to ten days after the start
        start, end = (
            datetime.fromisoformat(event[k].replace("Z", "+00:00")) for k in ("starts_at", "ends_at")
        )
        assert 3600 <= (end - start).total_seconds() <= 10 * 86400, event


# ---------------------------------------------------------------------------------------------
# hints


_HINTED_COLUMNS = {
    "id": column("string"),
    "email": column("string", unique=True),
    "contact": column("string"),
    "site": column("string"),
    "ref": column("string"),
    "ip": column("string"),
    "phone": column("string"),
    "day": column("string"),
    "seen": column("datetime"),
    "sku": column("string"),
    "level": column("integer"),
    "ratio": column("number"),
    "short": column("string"),
    "padded": column("string"),
    "kind": column("string"),
    "blob": column("string"),
    "tagged": column("string"),
    "profile": column("json"),
    "stamp": column("integer"),
}
_HINTS: dict[str, dict[str, Any]] = {
    "id": {"type": "string", "format": "uuid"},
    "email": {"type": "string", "format": "email"},
    "contact": {"type": "string", "format": "email"},
    "site": {"type": "string", "format": "uri"},
    "ref": {"type": "string", "format": "uuid"},
    "ip": {"type": "string", "format": "ipv4"},
    "phone": {"type": "string", "format": "phone"},
    "day": {"type": "string", "format": "date"},
    "seen": {"type": "string", "format": "date-time"},
    "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
    "level": {"type": "integer", "minimum": 3, "exclusiveMaximum": 9, "multipleOf": 2},
    "ratio": {"type": "number", "minimum": 0.5, "maximum": 0.75},
    "short": {"type": "string", "maxLength": 5},
    "padded": {"type": "string", "minLength": 40},
    "kind": {"type": "string", "enum": ["alpha", "beta"]},
    "blob": {"type": "string", "format": "byte"},
    "tagged": {"type": "string", "example": "INV-2024-0042"},
    "profile": {
        "type": "object",
        "required": ["age", "country"],
        "properties": {
            "age": {"type": "integer", "minimum": 18, "maximum": 30},
            "country": {"type": "string", "enum": ["NL", "DE"]},
            "visits": {"type": "array", "items": {"type": "string", "format": "date"}, "maxItems": 2},
        },
    },
    "stamp": {"type": "integer", "format": "unix-time"},
}


def test_hints_are_honoured() -> None:
    tables = {"accounts": {"primary_key": "id", "columns": _HINTED_COLUMNS}}
    rows = seed_rows(tables, {"accounts": _HINTS}, seed=4, rows=60)["accounts"]
    assert len(rows) == 60
    email = re.compile(r"^[a-z0-9.]+@[a-z0-9.-]+\.[a-z]+$")
    for r in rows:
        assert str(uuid.UUID(r["id"])) == r["id"] and uuid.UUID(r["ref"]).version == 4
        assert email.match(r["email"]) and email.match(r["contact"]), r
        assert r["site"].startswith(("http://", "https://"))
        ipaddress.IPv4Address(r["ip"])
        assert re.search(r"\d{3}", r["phone"])
        datetime.strptime(r["day"], "%Y-%m-%d")
        datetime.fromisoformat(r["seen"].replace("Z", "+00:00"))
        assert re.fullmatch(r"[A-Z]{3}-[0-9]{4}", r["sku"])
        assert r["level"] in (4, 6, 8)
        assert 0.5 <= r["ratio"] <= 0.75
        assert 1 <= len(r["short"]) <= 5
        assert len(r["padded"]) >= 40
        assert r["kind"] in ("alpha", "beta")
        assert base64.b64decode(r["blob"])
        assert re.fullmatch(r"INV-\d{4}-\d{4}", r["tagged"])  # the example's shape, its letters kept
        assert 18 <= r["profile"]["age"] <= 30 and r["profile"]["country"] in ("NL", "DE")
        assert all(datetime.strptime(v, "%Y-%m-%d") for v in r["profile"].get("visits", []))
        assert len(r["profile"].get("visits", [])) <= 2
        assert 1_500_000_000 < r["stamp"] < 1_800_000_000
    assert len({r["email"] for r in rows}) == 60
    assert any(r["tagged"] == "INV-2024-0042" for r in rows)  # the example itself, now and then


def test_descriptions_without_enums_still_say_what_values_look_like() -> None:
    columns = {
        "id": column("string"),
        "flight_type": column("string", description="The type of flight, such as 'one_way' or 'round_trip'."),
        "insurance": column("string", description="Whether the reservation has insurance."),
        "origin": column("string", description="The origin city airport in three letters, such as 'JFK'."),
        "refundable": column("string", description="If true, the fare can be refunded."),
        "customer_email": column("string", description="If provided, this value prefills the form."),
    }
    rows = seed_rows({"reservations": {"primary_key": "id", "columns": columns}}, {}, seed=1, rows=40)
    for r in rows["reservations"]:
        assert r["flight_type"] in ("one_way", "round_trip") and r["insurance"] in ("yes", "no")
        assert re.fullmatch(r"[A-Z]{3}", r["origin"]) and r["refundable"] in ("yes", "no", None)
        assert r["customer_email"] is None or "@" in r["customer_email"]  # (`If provided`: no yes/no)
    assert len({r["flight_type"] for r in rows["reservations"]}) == 2


def test_text_columns_named_as_numbers_or_states_hold_them() -> None:
    """`count: string` holds "25", not a code; `broadcast_status` a status word."""
    columns = {
        "id": column("string"),
        "count": column("string"),
        "price": column("string"),
        "broadcast_status": column("string"),
    }
    rows = seed_rows({"posts": {"primary_key": "id", "columns": columns}}, {}, seed=3, rows=30)
    for r in rows["posts"]:
        assert r["count"].isdigit() and 1 <= int(r["count"]) <= 50
        assert re.fullmatch(r"\d+\.\d\d", r["price"])
        assert r["broadcast_status"] in ("active", "inactive", "pending", "archived")


def test_names_read_with_their_table() -> None:
    tables = {
        "customers": {
            "primary_key": "customer_id",
            "columns": {
                "customer_id": column("string"),
                "first_name": column("string"),
                "last_name": column("string"),
                "email": column("string", unique=True),
                "city": column("string"),
            },
            "id_prefix": "CUS-",
        },
        "companies": {"primary_key": "id", "columns": {"id": column("integer"), "name": column("string")}},
    }
    rows = seed_rows(tables, {}, seed=9, rows=30)
    for r in rows["customers"]:
        local = r["email"].split("@")[0]
        assert local.startswith(re.sub(r"[^a-z0-9.]", "", f"{r['first_name']}.{r['last_name']}".lower())), r
        assert re.fullmatch(r"CUS-[0-9a-f]{8}", r["customer_id"])
    assert [r["id"] for r in rows["companies"]] == list(range(1, 31))
    assert handle_column(Table.model_validate(tables["customers"])) == "email"
    assert handle_column(Table.model_validate(tables["companies"])) == "name"


def test_handle_columns_of_bundled_tables() -> None:
    spec = load_domain(ROOT / "domains" / "office").spec
    assert handle_column(spec.tables["people"]) == "email"
    assert handle_column(spec.tables["rooms"]) == "name"
    assert handle_column(spec.tables["events"]) == "title"
    assert handle_column(spec.tables["attendees"]) is None
    artists = Table.model_validate(
        {
            "primary_key": "id",
            "columns": {"id": column("string"), "label": column("string"), "artist": column("string")},
        }
    )
    assert handle_columns(artists, "artists") == ["artist", "label"]  # (an artist's `artist` is its name)
    assert handle_columns(artists) == ["label"]


# ---------------------------------------------------------------------------------------------
# keys and sizes


def test_id_schemes_and_composite_keys() -> None:
    tables = {
        "invoices": {
            "primary_key": "number",
            "columns": {"number": column("string"), "total": column("number")},
            "ids": counter_ids("INV-", start=7, width=4),
        },
        "tickets": {
            "primary_key": "code",
            "columns": {"code": column("string")},
            "ids": pattern_ids("AA9", "T"),
        },
        "lines": {
            "primary_key": ["invoice", "line"],
            "columns": {"invoice": column("string", references="invoices.number"), "line": column("integer")},
        },
    }
    rows = seed_rows(tables, {}, seed=2, rows={"invoices": 12, "tickets": 30, "lines": 40})
    assert [r["number"] for r in rows["invoices"]] == [f"INV-{n:04d}" for n in range(7, 19)]
    assert all(re.fullmatch(r"T[A-Z]{2}[0-9]", r["code"]) for r in rows["tickets"])
    by_invoice: dict[str, list[int]] = {}
    for r in rows["lines"]:
        by_invoice.setdefault(r["invoice"], []).append(r["line"])
    assert all(
        lines == list(range(1, len(lines) + 1)) for lines in by_invoice.values()
    )  # numbered per invoice


def test_constrained_tables_get_only_the_rows_they_can_hold() -> None:
    tables = {
        "users": {"primary_key": "id", "columns": {"id": column("string")}},
        "profiles": {
            "primary_key": "id",
            "columns": {
                "id": column("string"),
                "user_id": column("string", unique=True, references="users.id"),
            },
        },
        "levels": {
            "primary_key": "level",
            "columns": {"level": column("string", enum=["bronze", "silver", "gold"])},
        },
    }
    rows = seed_rows(tables, {}, seed=0, rows={"users": 4, "profiles": 10, "levels": 10})
    assert len(rows["profiles"]) == 4 and len({r["user_id"] for r in rows["profiles"]}) == 4
    assert sorted(r["level"] for r in rows["levels"]) == ["bronze", "gold", "silver"]


def test_default_sizes_grow_with_depth_and_stay_bounded() -> None:
    sizes = {t: len(r) for t, r in seed_rows(load_domain(FIXTURES / "shop").spec, {}, 0).items()}
    assert sizes["customers"] == 25 and sizes["orders"] == 50 and sizes["order_items"] == 100
    assert all(10 <= n <= 200 for n in sizes.values())


@pytest.mark.parametrize(
    ("rows", "hints", "message"),
    [
        ({"nope": 3}, {}, "rows names tables the domain does not have: nope"),
        ({"customers": -1}, {}, "rows for table 'customers' must be a whole number >= 0"),
        ("many", {}, "rows is a number or a mapping"),
        (
            {"customers": 0, "orders": 5},
            {},
            "orders.customer_id must refer to a row of customers, which has none",
        ),
        (None, {"ghosts": {}}, "hints name a table the domain does not have: 'ghosts'"),
        (
            None,
            {"customers": {"nickname": {}}},
            "hints name columns table 'customers' does not have: nickname",
        ),
    ],
)
def test_bad_input_is_a_clear_error(rows: Any, hints: Any, message: str) -> None:
    spec = load_domain(FIXTURES / "shop").spec
    with pytest.raises(SeedError, match=re.escape(message)):
        seed_rows(spec, hints, 0, rows)


def test_an_unsized_child_of_an_empty_parent_is_empty() -> None:
    rows = seed_rows(load_domain(FIXTURES / "shop").spec, {}, 0, {"customers": 0})
    assert rows["customers"] == [] and rows["orders"] == [] and rows["order_items"] == []
    assert len(rows["products"]) == 25


# ---------------------------------------------------------------------------------------------
# a domain generated from a real spec


def test_a_generated_domain_loads_with_its_seed(tmp_path: Path) -> None:
    spec = shared_file("corpus/dev/openapi/vendor/apideck-libraries__openapi-specs/sms.yml")
    from toolgen.pipeline import generate
    from toolgen.synth.folder import build_domain
    from toolgen.synth.schema import infer_schema
    from toolgen.synth.tools import compile_tools

    generated = generate([spec])
    operations = {op.id: op for op in generated.operations}
    assert generated.plan.domains
    for plan in generated.plan.domains:
        schema = infer_schema(plan, operations)
        builder = build_domain(plan, schema, compile_tools(schema))
        rows = seed_rows(builder.spec(), schema.hints(), seed=1)
        _assert_consistent(dict(builder.spec().tables), rows)
        for table, table_rows in rows.items():
            builder.seed(table, table_rows)
        report = check_domain(builder.write(tmp_path / plan.name))
        assert not [p for p in report.errors if p.file.startswith("seed/")], report.errors[:3]
        assert json.loads(json.dumps(rows)) == rows  # plain JSON values only


def test_a_default_the_column_cannot_hold_is_never_seeded_and_check_warns(tmp_path: Path) -> None:
    """Budgea's spec gives `default: <function datetime.now at 0x…>` for date-times."""
    b = DomainBuilder("budget", "1.0.0")
    bad = "<function datetime.now at 0x7f>"
    b.table(
        "sources", "id", {"id": column("string"), "created": column("datetime", nullable=True, default=bad)}
    )
    rows = seed_rows(b.spec(), {}, 0)["sources"]
    stamps = [r["created"] for r in rows if r["created"] is not None]
    assert stamps and all(datetime.fromisoformat(s.replace("Z", "+00:00")) for s in stamps)
    b.seed("sources", rows)
    report = check_domain(b.write(tmp_path / "budget"))
    assert report.domain is not None  # (it still loads)
    assert any("default can never be stored" in w.message for w in report.warnings), report.warnings


def test_a_name_under_a_permissive_pattern_reads_as_a_name() -> None:
    """`^[a-zA-Z0-9\\-\\.]+$` for a name: `regional-hardware`, as a person names a thing, not
    `hBWP4W3a` drawn character by character."""
    hints = {"name": {"type": "string", "pattern": r"^[a-zA-Z0-9\-\.]+$"}}
    columns = {"id": column("string"), "name": column("string")}
    rows = seed_rows(
        {"attachments": {"primary_key": "id", "columns": columns}}, {"attachments": hints}, rows=20
    )
    names = [r["name"] for r in rows["attachments"]]
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", n) for n in names), names


_MEETING = r"(Weekly [a-z]+ sync|(Quarterly )?[A-Za-z]+ (review|planning|standup))"


@pytest.mark.parametrize(
    ("table", "name", "shape"),
    [
        ("scorers", "league_name", r"[A-Z][\w-]+ League"),  # a league's name, not a catch phrase
        ("widgets", "name", r"[A-Z][\w-]+ Widget"),
        ("colors", "color_name", r"[A-Z][a-zA-Z]+"),  # a color's name
        ("child_agents", "route_name", r"[A-Z][\w-]+ Route"),  # a route's, though agents are people
        ("prices", "nickname", r"[A-Z][\w-]+ Price"),  # no one's login
        ("instances", "custom_script_name", r"[A-Z][\w-]+ Script"),  # a script's, not an instance's
        ("instance_profiles", "instance_profile_name", r"[A-Z][\w-]+ Instance Profile"),
        ("bots", "preferred_global_name", r"[A-Z][\w-]+ Bot"),  # which name, not `... Preferred Global`
        ("files_remotes", "title", r"[A-Z][\w-]+ Remote File"),  # not `... Files Remote`
        ("posts", "title", r"(?!.* Post$)[A-Z][\w-]*( [\w-]+)+"),
        ("activities", "title", r"(?!.* Activity$)[A-Z][\w-]*( [\w-]+)+"),  # not `Product Activity`
        ("vector_stores", "name", r"[A-Z][\w-]+ Vector Store"),  # no shop: not `Kelley Group`
        ("recipes", "recipe_name", r"[A-Z]\w+ [A-Z]\w+ [A-Z][\w-]+"),  # a dish, not `Vendor Recipe`
        (
            "recipes",
            "title",
            r"(?!.* Recipe$)[A-Z]\w+ [A-Z]\w+ [A-Z][\w-]+",
        ),  # `Invoice reminder`, not `Bridge Post`
        ("issues", "label", r"[a-z-]+"),  # `bug`, not `West Issue`
        ("policies", "tag_key", r"[a-z-]+"),  # `team`, not `firmware`
        ("admin_api_keys", "name", r"[A-Z][\w-]+ API Key"),  # not `Beta Api Key`
        ("byoip_prefixes", "name", r"[A-Z][\w-]+ BYOIP Prefix"),
        ("tasks", "name", r"[A-Z][a-z]+ the [a-z]+"),  # `Renew the subscription`, not `South Task`
        ("movies", "name", r"(?!.* Movie$)(The )?[A-Z][a-z]+( [A-Z][a-z]+)?"),  # `The Hidden Orchard`
        ("movies", "movie_name", r"(?!.* Movie$)(The )?[A-Z][a-z]+( [A-Z][a-z]+)?"),
        ("episodes", "title", r"(?!.* Episode$)(The )?[A-Z][a-z]+( [A-Z][a-z]+)?"),
        ("calls", "title", _MEETING),  # not `Office Call`
        ("genres", "name", r"(?!.* Genre$)[A-Z][a-z]+( [A-Z][a-z]+)?"),  # `True Crime`, not `Inventory Genre`
        (
            "sculptures",
            "title",
            r"(?!.* Sculpture$)(The )?[A-Z][a-z]+( [A-Z][a-z]+)?",
        ),  # not `Delta Sculpture`
        ("events", "summary", _MEETING),  # a calendar's title
        ("droplets", "name", r"[a-z]+-[a-z0-9]+"),  # `web-prod`, not `Park Droplet`
        ("admin_conversations", "name", r"[a-z]+(-[a-z]+)?"),  # `sales-team`, not `Lakeside Admin ...`
        ("groups", "group_name", r"[A-Z][a-z]+( Team)?"),  # `Billing`, not `Olive Group`
        ("roles", "name", r"(?!.* Role$)[A-Z][a-z]+ [A-Z][a-z]+"),  # `Support Lead`, not `Tulip Role`
        ("tables", "table_name", r"[a-z]+"),  # `orders`, not `Emerald Table`
        ("characters", "character_name", r"[A-Z][a-z]+"),  # `Gum`, not `Research Character`
        ("playlists", "name", r"(?!.* Playlist)[A-Z][a-z]+( [A-Z][a-z]+)+( 2025| Vol\. 2)?"),  # `Road Trip`
        (
            "coupons",
            "name",
            r"([A-Z][a-z]+ ){0,2}\d+% off|Spring sale \d+%",
        ),  # `20% off`, not `Feedback Coupon`
        ("databases", "title", r"[A-Z][a-z]+ Database"),  # a title is no slug: not `payments-prod`
        (
            "attachments",
            "file_name",
            r"[a-z-]+(-\d{4}|-final)?\.[a-z]+",
        ),  # a name, not `/shared/contract.pdf`
        ("attachments", "path", r"/[a-z]+/[a-z-]+(-\d{4}|-final)?\.[a-z]+"),
        ("paragraphs", "filename", r"[a-z-]+(-\d{4}|-final)?\.docx"),  # a paragraph's file is a document
        (
            "members",
            "additional_name",
            r"[A-Z][\w'.-]+( [A-Z][\w'.-]+)+",
        ),  # a person's, not `Creek Additional`
    ],
)
def test_a_made_up_name_says_what_it_names(table: str, name: str, shape: str) -> None:
    columns = {"id": column("string"), name: column("string")}
    rows = seed_rows({table: {"primary_key": "id", "columns": columns}}, {}, rows=10)
    assert all(re.fullmatch(shape, r[name]) for r in rows[table]), [r[name] for r in rows[table]]


def test_a_to_do_line_does_what_its_verb_does_to_its_thing() -> None:
    from faker import Faker

    from toolgen.synth.draws import Draw
    from toolgen.synth.names import meeting_title, todo_line

    lines = {
        todo_line(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC))) for seed in range(300)
    }
    assert len(lines) >= 25 and "Pay the payment" not in lines
    assert not [line for line in lines if line.split()[0].lower() in line.split()[-1]], lines
    meetings = {
        meeting_title(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC))) for seed in range(300)
    }
    assert not [m for m in meetings if {"password", "receipt", "refund"} & set(m.lower().split())], meetings


def test_a_name_its_description_gives_a_holder_is_a_person_s() -> None:
    """Stripe's card `name`, "Cardholder name.": `Jean Vang`, not `Returns Card`."""
    hints = {"name": {"type": "string", "description": "Cardholder name."}}
    columns = {"id": column("string"), "name": column("string")}
    rows = seed_rows({"cards": {"primary_key": "id", "columns": columns}}, {"cards": hints}, rows=10)["cards"]
    assert all(
        re.fullmatch(r"[A-Z][\w'.-]+ [A-Z][\w'.-]+", r["name"]) and "Card" not in r["name"] for r in rows
    ), rows


def test_a_paragraph_s_text_is_no_note_about_the_paragraph() -> None:
    from faker import Faker

    from toolgen.synth.draws import Draw, note_about

    texts = [
        note_about("paragraphs")(Draw.of(Faker("en_US"), s, datetime(2026, 1, 1, tzinfo=UTC)))
        for s in range(40)
    ]
    assert not [t for t in texts if "paragraph" in t], texts  # (no `Sent the paragraph to ...`)
    orders = [
        note_about("orders")(Draw.of(Faker("en_US"), s, datetime(2026, 1, 1, tzinfo=UTC))) for s in range(40)
    ]
    assert [t for t in orders if "the order" in t]  # (a note on an order may speak of it)


def test_only_what_people_give_code_names_is_named_by_one() -> None:
    """A deduction is named by its use (`Payroll Deduction`), not a code name (`Atlantic
    Deduction`); a project may carry one (`Phoenix Project`)."""
    from toolgen.synth.lexicon import CODENAME_WORDS, PURPOSE_WORDS

    def firsts(table: str) -> set[str]:
        columns = {"id": column("string"), "name": column("string")}
        rows = seed_rows({table: {"primary_key": "id", "columns": columns}}, {}, rows=25)[table]
        return {r["name"].split()[0] for r in rows}

    assert firsts("deductions") <= set(PURPOSE_WORDS)
    assert "Accounting" not in firsts("accounts")  # (no `Accounting Account`)
    assert firsts("projects") & set(CODENAME_WORDS) and firsts("projects") <= set(
        PURPOSE_WORDS + CODENAME_WORDS
    )


def test_a_bio_says_who_one_is_and_a_description_may_speak_of_its_own_record() -> None:
    columns = {"id": column("string"), "bio": column("string")}
    bios = [
        r["bio"]
        for r in seed_rows({"members": {"primary_key": "id", "columns": columns}}, {}, rows=10)["members"]
    ]
    assert all(re.fullmatch(r"[A-Z][^,]+ based in [A-Z][\w .'-]+\.", b) for b in bios), bios
    columns = {"id": column("string"), "description": column("string")}
    rows = seed_rows({"custom_models": {"primary_key": "id", "columns": columns}}, {}, rows=20)[
        "custom_models"
    ]
    assert all(" custom model for the " in r["description"] for r in rows), rows  # (what it is for)


def test_a_middle_name_is_one_first_name() -> None:
    columns = {"id": column("string"), "first_name": column("string"), "middle_name": column("string")}
    rows = seed_rows({"contacts": {"primary_key": "id", "columns": columns}}, {}, rows=10)["contacts"]
    assert all(re.fullmatch(r"[A-Z][a-z]+", r["middle_name"]) for r in rows), rows


def test_a_type_a_key_s_body_and_a_file_read_as_what_they_are() -> None:
    """A room type is `premium`, not a random noun; an SSH key's body is key material, not a
    sentence; a photo's path names an image and a document's an office file."""
    columns = {
        "id": column("string"),
        "room_type": column("string"),
        "ssh_public_key_body": column("string"),
        "path": column("string"),
    }
    for table, ends in (
        ("photos", r"\.(jpe?g|png|gif|bmp|tiff|webp)"),
        ("documents", r"\.(pdf|docx|xlsx|csv|txt)"),  # (no `.pages` nor `.numbers`)
        ("json_exports", r"\.json"),  # (a format the words name)
    ):
        rows = seed_rows({table: {"primary_key": "id", "columns": columns}}, {}, rows=10)[table]
        for r in rows:
            assert r["room_type"] in "standard premium basic custom shared private".split(), r
            assert re.fullmatch(r"[A-Za-z0-9+/]{64}", r["ssh_public_key_body"]), r
            assert re.fullmatch(rf"(/[\w-]+)+{ends}", r["path"]), r
    typed = {"id": column("string"), "type": column("string")}
    rows = seed_rows(
        {"columns": {"primary_key": "id", "columns": typed}},
        {"columns": {"type": {"type": "string", "examples": ["warrior", "string"]}}},
        rows=5,
    )
    assert {r["type"] for r in rows["columns"]} == {"warrior"}  # the spec's example, not a stand-in


def test_a_symbol_quoted_in_a_description_is_no_option() -> None:
    """`both with "+" separating them, i.e. "first+last"` says how to write a search, not what
    a contact's name is: the name is a person's; `'one_way' or 'round_trip'` stay the options."""
    said = 'Search by name (first, last, or both with "+" separating them, i.e. "first+last")'
    columns = {"id": column("string"), "name": column("string", description=said)}
    rows = seed_rows({"contacts": {"primary_key": "id", "columns": columns}}, {}, rows=10)["contacts"]
    assert all(re.fullmatch(r"[A-Z][a-z'-]+( [A-Z][a-z'-]+)+", r["name"]) for r in rows), rows
    options = "One of 'one_way' or 'round_trip'."
    columns = {"id": column("string"), "trip": column("string", description=options)}
    rows = seed_rows({"trips": {"primary_key": "id", "columns": columns}}, {}, rows=10)["trips"]
    assert {r["trip"] for r in rows} <= {"one_way", "round_trip"}


def test_a_spec_s_stand_in_example_is_never_a_row_s_value() -> None:
    """ClearBlade's `example@clearblade.com` and a `string` example stand in for values: rows hold
    realistic ones instead, while a real example (`NS`) still appears now and then."""
    columns = {"id": column("string"), "email": column("string"), "kind": column("string")}
    hints = {
        "email": {"type": "string", "example": "example@clearblade.com"},
        "kind": {"type": "string", "example": "string"},
    }
    rows = seed_rows({"audits": {"primary_key": "id", "columns": columns}}, {"audits": hints}, rows=60)
    assert not [r for r in rows["audits"] if r["email"] == "example@clearblade.com" or r["kind"] == "string"]
    real = {"code": {"type": "string", "example": "NS"}}
    coded = {"id": column("string"), "code": column("string")}
    rows = seed_rows({"records": {"primary_key": "id", "columns": coded}}, {"records": real}, rows=60)
    assert any(r["code"] == "NS" for r in rows["records"])


def test_a_zip_the_spec_calls_a_file_is_a_zip_file_not_a_postcode() -> None:
    """Netlify's deploy `zip` ("a zip file of the site") is a path to a .zip; an address's zip a
    postcode."""
    columns = {"id": column("string"), "zip": column("string")}
    hints = {"deploys": {"zip": {"type": "string", "description": "A zip file of the site to deploy."}}}
    deploys = seed_rows({"deploys": {"primary_key": "id", "columns": columns}}, hints, rows=5)["deploys"]
    assert all(re.fullmatch(r"(/[\w-]+)+\.zip", r["zip"]) for r in deploys), deploys
    places = seed_rows({"addresses": {"primary_key": "id", "columns": columns}}, {}, rows=5)["addresses"]
    assert all(re.fullmatch(r"\d{5}", r["zip"]) for r in places), places


def test_an_instance_profile_is_named_as_a_thing_a_user_profile_as_a_person() -> None:
    """IAM's instance profile is no one's: its name is a thing's (`Staging Instance Profile`),
    not `Earl Mays`; a user profile's name is a person's."""
    from toolgen.synth.lexicon import table_kind

    assert table_kind("instance_profiles") == "thing" and table_kind("user_profiles") == "person"
    columns = {"id": column("string"), "name": column("string")}
    rows = seed_rows({"instance_profiles": {"primary_key": "id", "columns": columns}}, {}, rows=5)
    assert all(r["name"].endswith(" Instance Profile") for r in rows["instance_profiles"]), rows


def test_a_file_path_region_name_and_typed_text_read_as_a_person_s() -> None:
    """A path is in a folder people keep files in (`/exports/site-export-2024.zip`, not Faker's
    `/such/already.zip`); a region is `EU West Region`, not a made-up town; a request never
    types a 1,000-character document into a field."""
    from faker import Faker

    from toolgen.synth.checks import unsayable as _unsaid
    from toolgen.synth.draws import Draw, place_name
    from toolgen.synth.texts import _FILE_STEMS, _FOLDERS, _file_path

    for seed in range(10):
        draw = Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC))
        path = _file_path(("zip",))(draw)
        folder, name = path.strip("/").split("/")
        assert folder in _FOLDERS and name.endswith(".zip"), path
        assert any(name.startswith(stem) for stem in _FILE_STEMS[""]), path
        region = place_name("region")(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC)))
        assert re.fullmatch(r"(US|EU|Asia|Canada|Brazil|Australia|India|Japan) \w+ Region", region), region
    assert _unsaid("saml_metadata_document", "DOC-" + "x" * 996) and not _unsaid(
        "description", "Needs a look."
    )
    assert _unsaid("group_type", 416) and _unsaid("status", 3)  # (a code whose meaning nothing says)
    assert not _unsaid("group_type", "public") and not _unsaid("frequency", 761)


def test_a_description_says_what_the_record_is_for() -> None:
    """A role's description is `Shared role for the support team.`, not a note about the day's
    work (`Please review the role before Wednesday.`); a note stays a note."""
    from faker import Faker

    from toolgen.synth.draws import Draw, Field
    from toolgen.synth.texts import string_maker

    for table, name, entity in (
        ("roles", "description", "role"),
        ("tax_rates", "short_description", "tax rate"),
    ):
        made = string_maker(Field(table, name, "string"))
        for seed in range(5):
            value = made(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC)))
            assert re.fullmatch(rf"[A-Z][a-z]+ {entity} for the [a-z]+ team\.", value), value
    note = string_maker(Field("orders", "note", "string"))(
        Draw.of(Faker("en_US"), 0, datetime(2026, 1, 1, tzinfo=UTC))
    )
    assert " team." not in note or "for the" not in note, note


def test_a_company_with_a_contacts_name_is_no_person():
    # Apideck's companies carry a contact's first and last name: the company's `name` stays a
    # company's (not `the company whose name is "Tasha Zuniga"`); a row of people is a person's
    from toolgen.synth.lexicon import has_person

    assert not has_person("companies", ["name", "first_name", "last_name", "email"])
    assert has_person("contacts", ["name", "first_name", "last_name"])
    assert has_person("members", ["first_name", "last_name"])


def test_an_email_names_a_persons_row_and_an_acronym_stays_one():
    # a card's or an audit's email is someone's, no name of the card (not `its card whose email
    # is ...`); a person's, a company's, an account's or an invite's email names it
    from simulator.format.spec import Table
    from toolgen.synth.draws import title_case
    from toolgen.synth.lexicon import handle_columns
    from toolgen.synth.names import thing_name

    table = Table.model_validate(
        {
            "primary_key": "id",
            "columns": {"id": {"type": "string"}, "email": {"type": "string"}, "label": {"type": "string"}},
        }
    )
    assert handle_columns(table, "cards") == ["label"]
    assert handle_columns(table, "audits") == ["label"]
    for named in ("users", "companies", "accounts", "invites", ""):
        assert handle_columns(table, named) == ["email", "label"], named
    assert title_case("nfs share") == "NFS Share" and title_case("rhythm") == "Rhythm"
    named = Table.model_validate(
        {"primary_key": "id", "columns": {"id": {"type": "string"}, "name": {"type": "string"}}}
    )
    assert handle_columns(named, "scheduled_messages") == [] and handle_columns(named, "widgets") == ["name"]
    assert handle_columns(named, "user_sessions") == [] == handle_columns(named, "authorizations")
    import random

    from toolgen.synth.draws import Draw

    draw = Draw(fake=None, rng=random.Random(1), clock=None)  # type: ignore[arg-type]
    assert thing_name("nfs")(draw).endswith(" NFS")


def test_a_site_is_a_website_not_a_town():
    # Netlify's and most APIs' sites are websites: no `North Renee Site`, `Martinezchester Site`
    from toolgen.synth.lexicon import table_kind

    assert table_kind("sites") == "thing" and table_kind("warehouses") == "place"


def test_a_domain_is_named_by_its_host_name_and_a_stay_counts_nights() -> None:
    """A DNS domain's name is `example.com`, not `Main Domain`; a hotel stay is a few nights, not
    339; a heading's level is one to five."""
    columns = {
        "id": column("string"),
        "name": column("string"),
        "nights": column("integer"),
        "stay_duration": column("integer"),
        "level": column("integer"),
    }
    for table in ("domains", "domain_records"):
        for r in seed_rows({table: {"primary_key": "id", "columns": columns}}, {}, rows=10)[table]:
            if table == "domains":
                assert re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)+", r["name"]), r
            assert 1 <= r["nights"] <= 14 and 1 <= r["stay_duration"] <= 14 and 1 <= r["level"] <= 5, r
    folders = {"id": column("string"), "name": column("string"), "directory_name": column("string")}
    for r in seed_rows({"directories": {"primary_key": "id", "columns": folders}}, {}, rows=10)[
        "directories"
    ]:
        assert re.fullmatch(r"[a-z]+(-\d{4})?", r["name"]) and re.fullmatch(
            r"[a-z]+(-\d{4})?", r["directory_name"]
        ), r
    for r in seed_rows({"files": {"primary_key": "id", "columns": folders}}, {}, rows=10)["files"]:
        assert re.fullmatch(r"[a-z-]+(-\d{4}|-final)?\.\w+", r["name"]), r  # (no `Lotus File`)
    people = {"id": column("string"), "name": column("string"), "billing_name": column("string")}
    for r in seed_rows({"cardholders": {"primary_key": "id", "columns": people}}, {}, rows=10)["cardholders"]:
        assert "Cardholder" not in r["name"] and "Billing" not in r["billing_name"], r
    hosts = {"id": column("string"), "domain_name": column("string")}
    for r in seed_rows({"certificates": {"primary_key": "id", "columns": hosts}}, {}, rows=5)["certificates"]:
        assert re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)+", r["domain_name"]), r


def test_a_message_a_system_sends_reads_as_one() -> None:
    """An email service's `two_factor_message` is a verification code's text and its
    `validation_message` an error's, not a note about the day's work; a plain `message` stays one."""
    columns = {
        "id": column("string"),
        "two_factor_message": column("string"),
        "validation_message": column("string"),
        "message": column("string"),
    }
    for r in seed_rows({"email_services": {"primary_key": "id", "columns": columns}}, {}, rows=5)[
        "email_services"
    ]:
        assert re.fullmatch(r"Your verification code is \d{6}\.", r["two_factor_message"]), r
        assert r["validation_message"].startswith("Something went wrong"), r
        assert "verification" not in r["message"] and "went wrong" not in r["message"], r


def test_a_region_is_a_real_one_shaped_as_the_example_and_a_location_a_town() -> None:
    """A spec's `nyc3` gives `ams3` or `fra1`, not `xop3`; a location is named `Eddiefort`, not
    `Eddiefort Location`."""
    columns = {"id": column("string"), "region": column("string"), "name": column("string")}
    rows = seed_rows(
        {"locations": {"primary_key": "id", "columns": columns}},
        {"locations": {"region": {"type": "string", "example": "nyc3"}}},
        rows=20,
    )["locations"]
    known = "nyc1 nyc3 sfo2 sfo3 ams3 fra1 lon1 sgp1 tor1 blr1 syd1".split()
    assert all(r["region"] in known for r in rows), [r["region"] for r in rows]
    assert len({r["region"] for r in rows}) > 2 and not any("Location" in r["name"] for r in rows)


def test_a_bare_time_is_a_time_of_day() -> None:
    # a BFCL flight's `time` beside its `date` was a timestamp (`2024-03-16T00:39:06Z`)
    from faker import Faker

    from toolgen.synth.draws import Draw, Field
    from toolgen.synth.texts import string_maker

    for table in ("flights", "showings"):
        made = string_maker(Field(table, "time", "string"))
        for seed in range(10):
            value = made(Draw.of(Faker("en_US"), seed, datetime(2026, 1, 1, tzinfo=UTC)))
            assert re.fullmatch(r"[0-2][0-9]:[0-5][05]", value), value
    stamp = string_maker(Field("events", "created_time", "string"))  # (a stamp stays one)
    assert "T" in str(stamp(Draw.of(Faker("en_US"), 0, datetime(2026, 1, 1, tzinfo=UTC))))


def test_a_parent_the_api_keys_by_its_name_gets_names_for_keys() -> None:
    # Kubernetes' `/namespaces/{namespace}/roles`: no tool acts on a namespace, every argument
    # carrying its key is `namespace`: its keys are names (`billing-staging`), not `NAM-1018`
    from toolgen.synth.folder import build_domain
    from toolgen.synth.schema import NAME_KEY, infer_schema
    from toolgen.synth.tools import compile_tools

    from .synth_kit import make_op, planned_from

    ns = {"namespace": {"type": "string"}, "name": {"type": "string"}}
    ops = [
        make_op(
            f"{verb}_role",
            kind,
            ns,
            ["namespace"],
            entity="role",
            format="openapi-3.0",
            consumes=["namespace"],
        ).model_copy(update={"pointer": f"/paths/~1namespaces~1{{namespace}}~1roles/{method}"})
        for verb, kind, method in (("list", "read", "get"), ("create", "create", "post"))
    ]
    plan, by_id = planned_from(*ops)
    schema = infer_schema(plan, by_id)
    table = schema.tables[schema.by_entity["namespace"]]
    assert table.columns[table.primary_key].hint.get(NAME_KEY) is True
    builder = build_domain(plan, schema, compile_tools(schema))
    rows = seed_rows(builder.spec().tables, schema.hints(), 0, 6, clock=builder.head["clock"]["start"])
    keys = [r[table.primary_key] for r in rows[table.name]]
    assert keys and all(re.fullmatch(r"[a-z]+-[a-z]+", k) for k in keys), keys
    roles = schema.tables[schema.by_entity["role"]]
    assert not roles.columns[roles.primary_key].hint.get(NAME_KEY)  # (its own tools make its keys)
    # Stripe's `customer`, "The identifier of the customer": an id, no name (no `the customer partner-dev`)
    # (its path's `{customer}` says nothing; a body's `customer` says it is an id)
    plain = {"customer": {"type": "string"}}
    said = {"customer": {"type": "string", "description": "The identifier of the customer to subscribe."}}
    subscribe = [
        make_op(f"{verb}_subscription", kind, props, ["customer"], entity="subscription", format="openapi-3.0",
                consumes=["customer"]).model_copy(update={"pointer": f"/paths/~1customers~1{{customer}}~1subscriptions/{method}"})
        for verb, kind, method, props in (("list", "read", "get", plain), ("create", "create", "post", plain))
    ] + [make_op("subscribe", "create", said, ["customer"], entity="subscription", format="openapi-3.0")]  # fmt: skip
    plan, by_id = planned_from(*subscribe)
    schema = infer_schema(plan, by_id)
    customers = schema.tables[schema.by_entity["customer"]]
    assert not customers.columns[customers.primary_key].hint.get(NAME_KEY)


def test_an_agent_that_runs_a_model_is_named_as_a_thing_not_a_person() -> None:
    """DigitalOcean's GenAI `agents` have a `model` and an `instruction`: `Billing Agent`, not
    `Susan Garrison`; a support desk's agents (no model) are people."""
    ai = {"id": column("string"), "name": column("string"), "model": column("string"),
          "instruction": column("string")}  # fmt: skip
    desk = {"id": column("string"), "name": column("string"), "email": column("string")}
    rows = seed_rows({"agents": {"primary_key": "id", "columns": ai}}, {}, rows=10)
    assert all(re.fullmatch(r"[A-Z][\w-]+ Agent", r["name"]) for r in rows["agents"]), rows["agents"]
    rows = seed_rows({"agents": {"primary_key": "id", "columns": desk}}, {}, rows=10)
    assert all(not r["name"].endswith(" Agent") for r in rows["agents"]), rows["agents"]


def test_another_thing_s_code_names_no_row() -> None:
    """A transaction's `packageCode` is its package's: no `the transaction whose package code is
    ...`; a shipment's `tracking_number` and an invoice's `invoice_number` are their own."""
    from simulator.format.spec import Table
    from toolgen.synth.lexicon import handle_columns

    def table(*names: str) -> Table:
        columns = {"id": {"type": "string"}, **{n: {"type": "string"} for n in names}}
        return Table.model_validate({"primary_key": "id", "columns": columns})

    assert handle_columns(table("packageCode", "status"), "transactions") == []
    assert handle_columns(table("promotion_code"), "subscriptions") == []  # (one code, many subscriptions)
    assert handle_columns(table("promotion_code"), "promotion_codes") == ["promotion_code"]
    assert handle_columns(table("tracking_number"), "shipments") == ["tracking_number"]
    assert handle_columns(table("invoice_number"), "invoices") == ["invoice_number"]
    assert handle_columns(table("phone_number"), "contacts") == ["phone_number"]


def test_a_slug_like_example_keeps_its_words_and_redraws_its_numbers() -> None:
    """DigitalOcean's `size: db-s-2vcpu-4gb` gives `db-s-8vcpu-1gb`, not `xx-j-1mhkd-6og`."""
    columns = {"id": column("string"), "size": column("string")}
    hints = {"clusters": {"size": {"type": "string", "example": "db-s-2vcpu-4gb"}}}
    rows = seed_rows({"clusters": {"primary_key": "id", "columns": columns}}, hints, rows=20)["clusters"]
    assert all(re.fullmatch(r"db-s-\dvcpu-\dgb", r["size"]) for r in rows), [r["size"] for r in rows]


def test_a_certificate_s_body_is_a_payload_no_request_types() -> None:
    from toolgen.synth.lexicon import is_payload

    assert is_payload("signing_certificate", "certificate_body") and not is_payload(
        "signing_certificate", "status"
    )
