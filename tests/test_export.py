"""`toolgym export`: an episode's state as a plain SQLite file (seed, after a task's gold, after a
transcript replayed), with the domain's tables as declared and no toolgym bookkeeping tables."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from typer.testing import CliRunner

from scoring import load_domain
from scoring.replay import expected_episode, replay_rollout
from scoring.transcripts import load_transcript
from simulator import Domain, ToolError
from simulator.runtime.transcript import FileSink
from tests import test_tables_keys as keys
from tests.tables_kit import write_domain
from toolgym.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def bank() -> Domain:
    return load_domain("bank")


def rows_of(domain: Domain, path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every domain table of an exported file, decoded as `Episode.export()` decodes them."""
    conn = sqlite3.connect(path)
    try:
        return {
            name: [info.decode(r) for r in conn.execute(info.select_all)]
            for name, info in sorted(domain.tables.items())
        }
    finally:
        conn.close()


def keyed(domain: Domain, state: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, Any], dict[str, Any]]:
    out = {}
    for name, rows in state.items():
        key = domain.spec.tables[name].key_columns
        for row in rows:
            out[(name, row[key[0]] if len(key) == 1 else tuple(row[c] for c in key))] = row
    return out


def export(*args: str) -> Any:
    return runner.invoke(app, ["export", *args])


def test_seed_export_has_every_table_and_row_and_the_declared_schema(bank, tmp_path):
    out = tmp_path / "seed.db"
    result = export("bank", "--out", str(out))
    assert result.exit_code == 0, result.output
    db = sqlite_utils.Database(out)
    assert set(db.table_names()) == set(bank.spec.tables)  # no _toolgym_ tables
    for name, table in bank.spec.tables.items():
        assert db[name].count == len(bank.seed_rows.get(name, [])), name
        assert db[name].pks == list(table.key_columns), name
        declared = {(c, *spec.references.split(".")) for c, spec in table.columns.items() if spec.references}
        found = {(fk.column, fk.other_table, fk.other_column) for fk in db[name].foreign_keys}
        assert found == declared, name
    assert sum(db[n].count for n in bank.spec.tables) == bank.row_count()
    with bank.episode(seed=0) as ep:
        assert rows_of(bank, out) == ep.export()


def test_composite_keys_and_their_foreign_keys_are_kept(tmp_path):
    folder = write_domain(tmp_path / "seats", keys.TABLES, keys.TOOLS, seed=keys.SEED)
    domain = load_domain(folder)
    run = tmp_path / "run.jsonl"
    sink = FileSink(run)
    with domain.episode(seed=0, transcript=sink) as ep:
        ep.call("upgrade", {"flight_id": "F1", "seat": 2})
        live = ep.export()
    sink.close()
    out = tmp_path / "seats.db"
    result = export(str(folder), "--transcript", str(run), "--out", str(out))
    assert result.exit_code == 0, result.output
    db = sqlite_utils.Database(out)
    assert db["seats"].pks == ["flight_id", "seat"]
    assert [(fk.column, fk.other_table, fk.other_column) for fk in db["seats"].foreign_keys] == [
        ("flight_id", "flights", "flight_id")
    ]
    assert rows_of(domain, out) == live
    assert db["seats"].get(("F1", 2))["cabin"] == "business"


def test_task_export_differs_from_the_seed_exactly_where_the_gold_changes(bank, tmp_path):
    seed_file, task_file = tmp_path / "seed.db", tmp_path / "task.db"
    task = next(t for t in bank.tasks if any(bank.tools[c.name].writes for c in t.calls))
    assert export("bank", "--seed", str(task.seed), "--out", str(seed_file)).exit_code == 0
    result = export("bank", "--task", task.id, "--out", str(task_file))
    assert result.exit_code == 0, result.output
    gold = expected_episode(bank, task)
    try:
        assert rows_of(bank, task_file) == gold.export()
        touched = gold.changes()
    finally:
        gold.close()
    before, after = keyed(bank, rows_of(bank, seed_file)), keyed(bank, rows_of(bank, task_file))
    differing = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert differing, task.id
    assert differing <= touched
    assert all(before.get(k) == after.get(k) for k in touched - differing)


def transcript_of(bank: Domain, path: Path) -> tuple[Path, dict[str, list[dict[str, Any]]]]:
    """A rollout (the first write task's gold calls, then a failing call) and its live final state."""
    task = next(t for t in bank.tasks if any(bank.tools[c.name].writes for c in t.calls))
    sink = FileSink(path)
    with bank.episode(seed=3, task=task, transcript=sink) as ep:
        for call in task.calls:
            ep.call(call.name, call.arguments)
        with pytest.raises(ToolError, match="CUS-nobody"):
            ep.call("get_customer", {"customer_id": "CUS-nobody"})
        live = ep.export()
    sink.close()
    return path, live


def test_transcript_export_equals_its_replay(bank, tmp_path):
    transcript, live = transcript_of(bank, tmp_path / "run.jsonl")
    out = tmp_path / "run.db"
    result = export("bank", "--transcript", str(transcript), "--out", str(out))
    assert result.exit_code == 0, result.output
    episode, done = replay_rollout(bank, load_transcript(transcript), seed=3)
    try:
        assert rows_of(bank, out) == episode.export() == live
        assert not done[-1].ok
    finally:
        episode.close()
    with bank.episode(seed=3) as fresh:
        assert rows_of(bank, out) != fresh.export()


def one_error(result: Any, *named: str, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for name in named:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def test_errors_are_one_line_and_write_nothing(bank, tmp_path):
    out = tmp_path / "x.db"
    one_error(export("bank", "--task", "no-such-task", "--out", str(out)), "no-such-task")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("this is not json\n", encoding="utf-8")
    one_error(export("bank", "--transcript", str(junk), "--out", str(out)), str(junk))
    office_run = tmp_path / "office.jsonl"
    office = load_domain("office")
    sink = FileSink(office_run)
    with office.episode(seed=0, task=office.tasks[0], transcript=sink):
        pass
    sink.close()
    one_error(export("bank", "--transcript", str(office_run), "--out", str(out)), "office")
    transcript, _ = transcript_of(bank, tmp_path / "run.jsonl")
    one_error(
        export("bank", "--task", bank.tasks[0].id, "--transcript", str(transcript), "--out", str(out)),
        "--task",
        code=2,  # a usage error
    )
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))


def test_an_existing_out_is_kept_unless_force(bank, tmp_path):
    out = tmp_path / "state.db"
    out.write_text("precious\n", encoding="utf-8")
    one_error(export("bank", "--out", str(out)), str(out), "--force", code=2)
    assert out.read_text(encoding="utf-8") == "precious\n"
    result = export("bank", "--out", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert set(sqlite_utils.Database(out).table_names()) == set(bank.spec.tables)
