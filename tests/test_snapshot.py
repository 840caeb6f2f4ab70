"""Snapshots: reading real records into tables and a layout (`toolgen.snapshot`), and exporting a
state back in the source's own shape (`scoring.export`, `toolgym export --format snapshot`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from scoring import load_domain
from scoring.export import SnapshotDiff, export_snapshot, snapshot_state, write_snapshot
from simulator import SpecError
from simulator.format.layout import Part, SnapshotLayout
from tests.conftest import ROOT, shared_file
from toolgen.snapshot import MAX_DEPTH, Snapshot, load_collections, read_snapshot, seed_domain
from toolgym.cli import app

RETAIL = ROOT / "domains" / "tau2-retail"
runner = CliRunner()


def through_domain(snap: Snapshot, tmp_path: Path, name: str = "snap") -> tuple[Any, dict[str, Any]]:
    """Seed a domain from the snapshot, load it, and export its seed state in the snapshot's shape."""
    folder = seed_domain(snap, name).write(tmp_path / name)
    domain = load_domain(folder)
    with domain.episode(seed=0) as ep:
        return domain, snapshot_state(domain, ep.export())


def write_json(path: Path, value: Any, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(value, indent=indent), encoding="utf-8")
    return path


# -- tau2-retail: the hand-written port and the reader, against db.json ---------------------------


def test_retail_port_seed_exports_to_db_json(tmp_path):
    db = shared_file("peers/tau2/retail/db.json")
    source = json.loads(db.read_text(encoding="utf-8"))
    out = tmp_path / "db.json"
    result = runner.invoke(app, ["export", str(RETAIL), "--format", "snapshot", "--out", str(out)])
    assert result.exit_code == 0, result.output
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert exported == source
    for name, records in source.items():  # every record's fields, lists and maps in the source's order
        assert all(json.dumps(exported[name][k]) == json.dumps(v) for k, v in records.items()), name
    # users keep tau2's order (`position`); the port stores none for orders and products: key order
    assert list(exported["users"]) == list(source["users"])
    assert list(exported["orders"]) == sorted(source["orders"])


def test_retail_port_task_export_shows_the_gold_change(tmp_path):
    out = tmp_path / "after.json"
    result = runner.invoke(
        app, ["export", str(RETAIL), "--format", "snapshot", "--task", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    order = json.loads(out.read_text(encoding="utf-8"))["orders"]["#W2378156"]
    assert order["status"] == "exchange requested"
    assert order["exchange_new_items"] == ["7747408585"]


def test_retail_db_json_reads_into_tables_and_exports_back_byte_for_byte(tmp_path):
    db = shared_file("peers/tau2/retail/db.json")
    snap = read_snapshot(db)
    assert snap.notes == []
    assert set(snap.tables) == {
        "users",
        "payment_methods",
        "orders",
        "items",
        "fulfillments",
        "payment_history",
        "products",
        "variants",
    }
    assert snap.tables["variants"].primary_key == "item_id"  # a keyed map: its values repeat the key
    assert snap.tables["payment_methods"].primary_key == "id"
    assert snap.tables["orders"].columns["user_id"].references == "users.user_id"
    assert snap.tables["items"].columns["item_id"].references == "variants.item_id"
    assert snap.tables["payment_history"].columns["payment_method_id"].references == "payment_methods.id"
    assert "users.orders[] -> orders.order_id" in snap.references
    assert {"first_name", "city", "zip"} <= set(snap.tables["users"].columns)  # nested objects as columns
    domain, document = through_domain(snap, tmp_path)
    out = write_snapshot(domain.spec.snapshot, document, tmp_path / "out.json")
    assert out.read_bytes() == db.read_bytes()


# -- the reader on small sources, each exported back through a real domain -------------------------

CASES: dict[str, Any] = {
    "map keyed by a field, unsorted keys": {
        "people": {
            "p2": {"pid": "p2", "name": "Bo", "age": 40, "vip": True, "score": 1.5},
            "p1": {"pid": "p1", "name": "Al", "age": 31, "vip": False, "score": 2},
        }
    },
    "map whose key is not a field": {"settings": {"b": {"value": 1}, "a": {"value": "x"}}},
    "list of records without an id": {"events": [{"kind": "b", "at": 2}, {"kind": "a", "at": 1}]},
    "nested objects, lists of objects in lists of objects, nulls and absences": {
        "orders": {
            "o1": {
                "order_id": "o1",
                "ship": {"city": "Oslo", "geo": {"lat": 1.0, "lon": 2.5}},
                "lines": [
                    {"sku": "a", "qty": 1, "notes": [{"text": "gift"}, {"text": "wrap"}]},
                    {"sku": "a", "qty": 2, "notes": []},
                ],
                "coupon": None,
                "tags": ["x", "y"],
            },
            "o2": {
                "order_id": "o2",
                "ship": {"city": "Rome", "geo": {"lat": 3.0, "lon": 4.0}},
                "lines": [],
                "coupon": "TEN",
                "tags": [],
                "gift": True,
            },
        }
    },
    "keyed maps whose keys repeat across parents (a composite key)": {
        "shops": {
            "s1": {"id": "s1", "stock": {"b": {"sku": "b", "n": 2}, "a": {"sku": "a", "n": 1}}},
            "s2": {"id": "s2", "stock": {"a": {"sku": "a", "n": 5}}},
        }
    },
    "mixed types in one field, free-form objects, integer keys": {
        "things": {
            "2": {"id": 2, "value": "two", "meta": {"x": 1}},
            "10": {"id": 10, "value": 10, "meta": {"y": [1, 2]}},
        }
    },
    "empty collections": {"nothing": {}, "none": []},
}


@pytest.mark.parametrize("source", list(CASES.values()), ids=list(CASES))
def test_small_documents_export_back_exactly(tmp_path, source):
    path = write_json(tmp_path / "db.json", source)
    snap = read_snapshot(path)
    assert snap.notes == []
    domain, document = through_domain(snap, tmp_path)
    assert json.dumps(document) == json.dumps(source)
    out = write_snapshot(domain.spec.snapshot, document, tmp_path / "out.json")
    assert out.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_reader_builds_child_tables_and_keys():
    snap = read_snapshot_of(CASES["nested objects, lists of objects in lists of objects, nulls and absences"])
    tables = snap.tables
    assert tables["lines"].primary_key == "id" and "position" in tables["lines"].columns
    assert tables["lines"].columns["order_id"].references == "orders.order_id"
    assert tables["notes"].columns["lines_id"].references == "lines.id"
    assert tables["orders"].columns["tags"].type == "json"  # a list of scalars
    assert tables["orders"].columns["coupon"].nullable
    assert snap.layout.collections["orders"].omit_null == ["gift"]  # absent where it is not true
    shops = read_snapshot_of(CASES["keyed maps whose keys repeat across parents (a composite key)"])
    assert shops.tables["stock"].primary_key == ["shops_id", "sku"]
    stock = shops.layout.collections["shops"].fields["stock"]
    assert isinstance(stock, Part) and stock.as_ == "map" and stock.order == "position"


def read_snapshot_of(source: Any) -> Snapshot:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return read_snapshot(write_json(Path(folder) / "db.json", source))


def test_null_in_one_record_and_absent_in_another_is_noted():
    snap = read_snapshot_of({"rows": {"a": {"id": "a", "x": None}, "b": {"id": "b"}}})
    assert snap.notes and "null in some records, absent in others" in snap.notes[0]


def test_folder_of_json_jsonl_and_csv_exports_back(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write_json(
        src / "customers.json", {"c1": {"id": "c1", "name": "Ann"}, "c0": {"id": "c0", "name": "Bob"}}, 4
    )
    (src / "visits.jsonl").write_text(
        '{"customer_id": "c1", "day": "2024-01-02", "items": [{"sku": "z"}]}\n{"customer_id": "c0", "day": "2024-01-01", "items": []}\n',
        encoding="utf-8",
    )
    (src / "prices.csv").write_text("sku,price,label\nz,1.5,\na,10,012\n", encoding="utf-8")
    snap = read_snapshot(src)
    assert snap.layout.format == "folder" and snap.layout.indent == 4
    assert snap.tables["prices"].columns["price"].type == "number"
    assert snap.tables["prices"].columns["label"].type == "string"  # "012" stays text
    assert snap.tables["visits"].columns["customer_id"].references == "customers.id"
    domain, document = through_domain(snap, tmp_path)
    out = tmp_path / "out"
    result = runner.invoke(app, ["export", str(tmp_path / "snap"), "--format", "snapshot", "--out", str(out)])
    assert result.exit_code == 0, result.output
    for name in ("customers.json", "visits.jsonl", "prices.csv"):
        assert (out / name).read_text(encoding="utf-8") == (src / name).read_text(encoding="utf-8"), name
    assert load_collections(out) == load_collections(src)


def test_sqlite_file_exports_back(tmp_path):
    path = tmp_path / "shop.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE products (sku TEXT PRIMARY KEY, price REAL, stock INTEGER, note TEXT)")
    conn.executemany("INSERT INTO products VALUES (?, ?, ?, ?)", [("b", 2.5, 3, None), ("a", 1.0, 0, "new")])
    conn.execute("CREATE TABLE sales (sale_id INTEGER PRIMARY KEY, sku TEXT, qty INTEGER)")
    conn.executemany("INSERT INTO sales VALUES (?, ?, ?)", [(1, "a", 2), (2, "b", 1)])
    conn.commit()
    conn.close()
    snap = read_snapshot(path)
    assert snap.layout.format == "sqlite"
    assert snap.tables["sales"].columns["sku"].references is None  # `sku` is not named like `products`
    assert snap.tables["sales"].primary_key == "sale_id"
    domain = load_domain(seed_domain(snap, "shop").write(tmp_path / "shop"))
    out = export_snapshot(domain, tmp_path / "out.db")
    assert load_collections(out) == load_collections(path)


# -- bad input: a clear error naming the file and the place ----------------------------------------


@pytest.mark.parametrize(
    ("content", "where", "says"),
    [
        ('{"users": {"a": {"id": "a"},}}', "line 1 column 29", "not JSON"),
        ("[1, 2]", "", "an object of collections, not list"),
        ('{"users": 3}', "users", "not integer"),
        ('{"users": {"a": {"id": "a"}, "b": "bee"}}', "users['b']", "a record is an object, not string"),
        ('{"users": [{"id": 1}, [1]]}', "users[1]", "a record is an object, not list"),
        ('{"x": NaN}', "", "NaN is not JSON"),
    ],
)
def test_bad_documents_name_the_file_and_the_place(tmp_path, content, where, says):
    path = tmp_path / "db.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        read_snapshot(path)
    problem = caught.value.problems[0]
    assert problem.file == str(path) and problem.location == where and says in problem.message


def test_deep_nesting_is_refused_with_its_place(tmp_path):
    value: Any = 1
    for _ in range(MAX_DEPTH + 2):
        value = {"k": value}
    path = write_json(tmp_path / "db.json", {"things": {"t": {"id": "t", "deep": value}}}, None)
    with pytest.raises(SpecError) as caught:
        read_snapshot(path)
    assert "levels deep" in str(caught.value) and "things." in caught.value.problems[0].location
    path.write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(SpecError, match="levels deep"):
        read_snapshot(path)


def test_ragged_csv_and_missing_path(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "rows.csv").write_text("a,b\n1,2\n3\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"rows\.csv:line 3: 1 cells, the header has 2"):
        read_snapshot(folder)
    with pytest.raises(SpecError, match="no such file"):
        read_snapshot(tmp_path / "absent.json")


# -- the layout in domain.yaml ----------------------------------------------------------------------


def test_layout_naming_an_unknown_column_is_a_load_problem(tmp_path):
    snap = read_snapshot_of({"people": {"a": {"pid": "a", "name": "Al"}}})
    builder = seed_domain(snap, "people")
    builder.head["snapshot"]["collections"]["people"]["fields"]["name"] = "nickname"
    builder.head["snapshot"]["collections"]["people"]["fields"]["pets"] = {
        "table": "pets",
        "parent": "pid",
        "as": "list",
        "fields": {"n": "n"},
    }
    folder = builder.write(tmp_path / "people")
    with pytest.raises(SpecError) as caught:
        load_domain(folder)
    where = {p.location: p.message for p in caught.value.problems}
    assert where["snapshot.collections.people.fields.name"] == "table 'people' has no column 'nickname'"
    assert where["snapshot.collections.people.fields.pets.table"] == "no table 'pets'"


@pytest.mark.parametrize(
    ("part", "says"),
    [
        ({"table": "t", "via": "a", "parent": "b", "fields": {}}, "not both"),
        ({"fields": {}, "value": "x"}, "not both or neither"),
        ({"table": "t", "fields": {}}, "`table` goes with `via` or `parent`"),
        ({"table": "t", "via": "a", "as": "list", "fields": {}}, "gathers the rows of a `parent` link"),
    ],
)
def test_layout_parts_are_checked(part, says):
    with pytest.raises(ValueError, match=says):
        SnapshotLayout.model_validate({"collections": {"c": {"table": "t", "fields": {"f": part}}}})


def test_export_without_a_layout_says_so(tmp_path):
    result = runner.invoke(app, ["export", "bank", "--format", "snapshot", "--out", str(tmp_path / "x.json")])
    assert result.exit_code != 0 and "no `snapshot:` layout" in result.output


def test_snapshot_diff_builds_only_the_changed_records():
    domain = load_domain(RETAIL)
    with domain.episode(seed=0) as ep:
        diff = SnapshotDiff(domain, ep.export())
        assert diff.changed(ep) == {}
        ep.call("modify_user_address", {
            "user_id": "noah_brown_6181", "address1": "1 Main St", "address2": "", "city": "Oslo",
            "state": "OS", "country": "NO", "zip": "0150",
        })  # fmt: skip
        changed = diff.changed(ep)
    assert list(changed) == ["users"] and list(changed["users"]) == ["noah_brown_6181"]
    before, after = changed["users"]["noah_brown_6181"]
    assert before["address"]["city"] == "Denver" and after["address"]["city"] == "Oslo"
    assert {k: v for k, v in before.items() if k != "address"} == {
        k: v for k, v in after.items() if k != "address"
    }


# -- property: any document of collections comes back exactly ---------------------------------------

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)  # fmt: skip


def _containers(inner: Any) -> Any:
    """Lists, objects, lists of like objects, and keyed maps (each value repeats its key as `sku`)."""
    objects = st.fixed_dictionaries({"n": inner}, optional={"m": inner})
    keyed = st.lists(st.text(min_size=1, max_size=3), unique=True, max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries(
            {k: st.fixed_dictionaries({"sku": st.just(k), "v": inner}) for k in keys}
        )
    )
    return (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        | st.lists(objects, max_size=3)
        | keyed
    )


_values = st.recursive(_scalars, _containers, max_leaves=8)


@st.composite
def _documents(draw: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(["users", "orders", "x"]), unique=True, min_size=1)):
        keys = draw(st.lists(st.text(min_size=1, max_size=5), unique=True, max_size=4))
        shape = draw(st.dictionaries(st.sampled_from(["a", "b", "c d", "E"]), st.just(0), max_size=4))
        records = {}
        for k in keys:  # every record has the same fields (their values vary freely)
            records[k] = {"key": k, **{f: draw(_values) for f in shape}}
        doc[name] = records if draw(st.booleans()) else list(records.values())
    return doc


@given(_documents())
@example(  # nested fields keyed `0` and `00`: a column prefixed `00_` starts with a digit
    {
        "users": [{"key": k, "a": None} for k in ("0", "1", "00", "000")],
        "orders": [{"key": "0", "a": [{"0": {"sku": "0", "v": None}, "00": {"sku": "00", "v": None}}]}],
    }
)
def test_any_document_reads_and_exports_back_exactly(tmp_path_factory, document):
    tmp = tmp_path_factory.mktemp("doc")
    snap = read_snapshot(write_json(tmp / "db.json", document))  # (checks its own round trip)
    domain, exported = through_domain(snap, tmp)
    assert json.dumps(exported) == json.dumps(document)
