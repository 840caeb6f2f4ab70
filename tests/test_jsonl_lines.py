"""JSON-lines files are split at `\\n` only: text holding U+2028, U+2029 or U+0085 stays one record.

`str.splitlines` also breaks at those characters, which JSON leaves unescaped inside strings (and
toolgym writes transcripts with `ensure_ascii=False`). Split that way, an agent that put a U+2028
in any argument or message made its own transcript unreadable, so unscoreable: a path to "not
scored". Hand-written seed rows and tasks holding one failed to load as "not valid JSON".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import load_domain, load_transcript
from simulator.runtime.transcript import FileSink

from .conftest import FIXTURES

BREAKS = ["\u2028", "\u2029", "\x85", "\x1c", "\x0b"]


@given(pieces=st.lists(st.sampled_from(BREAKS) | st.text(max_size=5), min_size=1, max_size=6))
def test_a_transcript_holding_any_line_separator_reads_back_record_for_record(
    pieces: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = "".join(pieces)
    path = tmp_path_factory.mktemp("runs") / "s.jsonl"
    sink = FileSink(path)
    sink.write({"type": "header", "domain": "shop", "version": "0.1.0", "task": "lookup", "seed": 0})
    sink.write(
        {
            "type": "call",
            "index": 0,
            "tool": "get_customer",
            "arguments": {"customer_id": text},
            "ok": False,
            "error": f"No customer {text}.",
        }
    )
    sink.write({"type": "message", "role": "assistant", "content": f"said {text}."})
    sink.write({"type": "end"})
    sink.close()
    transcript = load_transcript(path)
    assert [c.arguments for c in transcript.calls] == [{"customer_id": text}]
    assert [c.error for c in transcript.calls] == [f"No customer {text}."]
    assert transcript.final_message == f"said {text}."


def test_seed_rows_and_tasks_holding_a_line_separator_load(tmp_path: Path) -> None:
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    note = "gift\u2028wrap\x85please"
    customers = folder / "seed" / "customers.jsonl"
    rows = [json.loads(line) for line in customers.read_text(encoding="utf-8").split("\n") if line.strip()]
    rows[0]["notes"] = note
    customers.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    task = {
        "id": "note",
        "instruction": "Note it.",
        "calls": [{"name": "set_note", "arguments": {"customer_id": "C-0002", "notes": note}}],
    }
    (folder / "tasks.jsonl").write_text(json.dumps(task, ensure_ascii=False) + "\n", encoding="utf-8")
    domain = load_domain(folder)
    assert domain.tasks[0].calls[0].arguments["notes"] == note
    with domain.episode() as ep:
        assert ep.export()["customers"][0]["notes"] == note
