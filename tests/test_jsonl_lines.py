"""JSON-lines files are split at `\\n` only: text holding U+2028, U+2029 or U+0085 stays one record.

`str.splitlines` also breaks at those characters, which JSON leaves unescaped inside strings (and
toolgym writes transcripts with `ensure_ascii=False`). Split that way, an agent that put a U+2028
in any argument or message made its own transcript unreadable, so unscoreable: a path to "not
scored". Hand-written seed rows and tasks holding one failed to load as "not valid JSON".
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import load_transcript
from simulator.transcript import FileSink

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
