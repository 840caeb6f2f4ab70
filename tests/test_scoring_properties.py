"""Property tests of scoring: diff(s, s) is empty; gold scores 1.0 in every transcript format;
dropping, changing or adding a write scores below 1.0 and the diff names the row and column;
permuting independent gold calls (creates included, so other generated ids) still scores 1.0.

Also: the transcript converters (toolgym records -> OpenAI, Anthropic, MCP) the other scoring
tests use.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import diff_states, parse_transcript, score_rollout
from scoring.tasks import Call, Task
from scoring.validation.gold import replay_gold
from simulator import Domain, ToolError
from simulator.runtime.transcript import MemorySink
from tests.test_properties import calls as any_call
from tests.test_properties import run

# -- converters: toolgym records -> each format ------------------------------------------------


def _result_text(record: dict[str, Any]) -> str:
    return json.dumps(record["result"]) if record["ok"] else record["error"]


def _meta(records: list[dict[str, Any]]) -> dict[str, Any]:
    header = records[0]
    return {"domain": header["domain"], "task": header["task"], "seed": header["seed"]}


def to_toolgym(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def to_openai(records: list[dict[str, Any]]) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "task"},
    ]
    for r in records:
        if r["type"] == "call":
            call_id = f"call_{r['index']}"
            function = {"name": r["tool"], "arguments": json.dumps(r["arguments"])}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": _result_text(r)})
        elif r["type"] == "message":
            messages.append({"role": r["role"], "content": r["content"]})
    return json.dumps({**_meta(records), "messages": messages}, indent=1)


def to_anthropic(records: list[dict[str, Any]]) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for r in records:
        if r["type"] == "call":
            use_id = f"toolu_{r['index']}"
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Let me check."},
                        {"type": "tool_use", "id": use_id, "name": r["tool"], "input": r["arguments"]},
                    ],
                }
            )
            result = {
                "type": "tool_result",
                "tool_use_id": use_id,
                "content": [{"type": "text", "text": _result_text(r)}],
            }
            messages.append({"role": "user", "content": [{**result, "is_error": not r["ok"]}]})
        elif r["type"] == "message":
            messages.append({"role": r["role"], "content": [{"type": "text", "text": r["content"]}]})
    return "\n".join(json.dumps(m) for m in [_meta(records), *messages]) + "\n"


def to_mcp(records: list[dict[str, Any]]) -> str:
    """A client-side JSON-RPC log; answers arrive one call late, so matching must use the ids."""
    final = [r["content"] for r in records if r["type"] == "message" and r["role"] == "assistant"]
    lines: list[dict[str, Any]] = [
        {**_meta(records), "final_message": final[-1] if final else None},
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    late: dict[str, Any] | None = None
    for r in records:
        if r["type"] != "call":
            continue
        rid = f"req-{r['index']}"
        lines.append(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": r["tool"], "arguments": r["arguments"]},
            }
        )
        if late is not None:
            lines.append(late)
        content = [{"type": "text", "text": _result_text(r)}]
        late = {"jsonrpc": "2.0", "id": rid, "result": {"content": content, "isError": not r["ok"]}}
    if late is not None:
        lines.append(late)
    return "".join(json.dumps(line) + "\n" for line in lines)


FORMATS = {"toolgym": to_toolgym, "openai": to_openai, "anthropic": to_anthropic, "mcp": to_mcp}


# -- rollouts -----------------------------------------------------------------------------------


def record(
    domain: Domain, task: Task, calls: list[Call] | None, seed: int, message: str | None = None
) -> list[dict[str, Any]]:
    """The toolgym transcript records of an agent making `calls` (None: the gold calls, resolved)."""
    sink = MemorySink()
    episode = domain.episode(seed=seed, task=task, transcript=sink)
    if calls is None:
        replay_gold(episode, task)
    else:
        for call in calls:
            try:
                episode.call(call.name, call.arguments)
            except ToolError:
                pass
    if message is not None:
        episode.say(message)
    episode.end()
    episode.close()
    return sink.records


def score(domain: Domain, task: Task, records: list[dict[str, Any]], fmt: str = "toolgym", **kw: Any) -> Any:
    return score_rollout(domain, parse_transcript(FORMATS[fmt](records), source=f"<{fmt}>"), task, **kw)


def make_task(calls: list[Call], facts: list[Any] | None = None) -> Task:
    return Task(
        id="t",
        instruction="do it",
        calls=calls,
        answer_facts=facts or [],
        ignore_columns=["orders.created_at"],  # the clock depends on the order of the writes
    )


# -- strategies: gold calls that touch disjoint rows (so any order gives the same state) ----------

ORDER_CUSTOMERS = [f"C-{i:04d}" for i in range(11, 21)]  # balances >= 1100
NOTE_CUSTOMERS = [f"C-{i:04d}" for i in (1, 3, 5, 7, 9)]
PENDING = [f"O-{i:04d}" for i in (2, 4, 6, 8, 10)]  # their customers are C-0002 ... C-0010, even
STOCK = {f"SKU-{i:03d}": i % 7 for i in range(1, 14) if i % 7}  # cheap products in stock
KINDS = ("place_order", "cancel_order", "set_note", "add_customer")


@st.composite
def independent_calls(draw: st.DrawFn, min_size: int = 1, max_size: int = 6) -> list[Call]:
    customers = list(draw(st.permutations(ORDER_CUSTOMERS)))
    notes = list(draw(st.permutations(NOTE_CUSTOMERS)))
    pending = list(draw(st.permutations(PENDING)))
    skus = list(draw(st.permutations(sorted(STOCK))))
    out: list[Call] = []
    for k in range(draw(st.integers(min_size, max_size))):
        left = {
            "place_order": len(skus) >= 2 and customers,
            "cancel_order": pending,
            "set_note": notes,
            "add_customer": True,
        }
        kind = draw(st.sampled_from([kind for kind in KINDS if left[kind]]))
        if kind == "place_order":
            n = draw(st.integers(1, 2))
            items = [
                {"sku": s, "quantity": draw(st.integers(1, STOCK[s]))} for s in (skus.pop(), skus.pop())[:n]
            ]
            out.append(Call(name=kind, arguments={"customer_id": customers.pop(), "items": items}))
        elif kind == "cancel_order":
            out.append(Call(name=kind, arguments={"order_id": pending.pop()}))
        elif kind == "set_note":
            out.append(Call(name=kind, arguments={"customer_id": notes.pop(), "notes": f"note {k}"}))
        else:
            out.append(Call(name=kind, arguments={"name": f"New {k % 2}", "email": f"new{k}@example.com"}))
    return out


def changed_rows(domain: Domain, task: Task, calls: list[Call], i: int, seed: int) -> set[tuple[str, Any]]:
    """(table, key) of the rows call i changes after calls[:i] on a fresh episode."""
    episode = domain.episode(seed=seed)
    run(episode, [(c.name, c.arguments) for c in calls[:i]])
    before = episode.changes()
    run(episode, [(calls[i].name, calls[i].arguments)])
    return episode.changes() - before


def names_a_row_and_column(report: Any, rows: set[tuple[str, Any]], status: str | None = None) -> bool:
    return any(
        (r.table, r.key) in rows
        and r.columns
        and all(c.column for c in r.columns)
        and status in (None, r.status)
        for r in report.diff.rows()
    )


def modified(call: Call, choice: int) -> Call:
    """The call with one argument changed."""
    args = json.loads(json.dumps(call.arguments))
    if call.name == "place_order":
        item = args["items"][0]
        if choice % 2:
            item["quantity"] += 1  # may exceed the stock: then the whole call fails
        else:
            item["sku"] = "SKU-013" if item["sku"] != "SKU-013" else "SKU-012"
    elif call.name == "cancel_order":
        args["order_id"] = "O-0001"  # shipped: the call fails
    elif call.name == "set_note":
        args["notes"] += "!"
    else:
        args["name" if choice % 2 else "email"] += "x"
    return Call(name=call.name, arguments=args)


# -- properties -----------------------------------------------------------------------------------


@given(st.lists(any_call, max_size=10), st.integers(0, 3), st.integers(0, 3))
def test_diff_of_a_state_with_itself_is_empty(shop, sequence, seed, other_seed):
    a, b = shop.episode(seed=seed), shop.episode(seed=other_seed)
    run(a, sequence)
    run(b, sequence)
    assert diff_states(a, a).empty
    # the same calls under another seed: other generated ids, the same state by content
    diff = diff_states(a, b)
    assert diff.empty, diff
    assert diff.matched == diff.expected_changes


@settings(max_examples=15)
@given(independent_calls(), st.integers(0, 5))
def test_gold_scores_one_in_every_format(shop, calls, seed):
    task = make_task(calls, facts=["done", 7])
    records = record(shop, task, None, seed, message="All done: 7 changes.")
    for fmt in FORMATS:
        report = score(shop, task, records, fmt)
        assert report.status == "scored" and report.reward == 1.0, (fmt, report.explanation)
        assert report.partial == 1.0 and report.seed == seed and report.format == fmt
        assert not report.warnings, report.warnings


@given(independent_calls(min_size=2), st.randoms(use_true_random=False), st.integers(0, 5))
def test_permuting_independent_gold_calls_still_scores_one(shop, calls, rnd, seed):
    task = make_task(calls)
    shuffled = list(calls)
    rnd.shuffle(shuffled)
    report = score(shop, task, record(shop, task, shuffled, seed))
    assert report.reward == 1.0, report.explanation


@given(independent_calls(), st.data(), st.integers(0, 5))
def test_dropping_a_gold_write_scores_below_one(shop, calls, data, seed):
    task = make_task(calls)
    i = data.draw(st.integers(0, len(calls) - 1))
    report = score(shop, task, record(shop, task, calls[:i] + calls[i + 1 :], seed))
    assert report.reward == 0.0 and report.partial < 1.0
    assert names_a_row_and_column(report, changed_rows(shop, task, calls, i, seed)), report.explanation


@given(independent_calls(), st.data(), st.integers(0, 5))
def test_changing_an_argument_of_a_gold_write_scores_below_one(shop, calls, data, seed):
    task = make_task(calls)
    i = data.draw(st.integers(0, len(calls) - 1))
    changed = [*calls[:i], modified(calls[i], data.draw(st.integers(0, 1))), *calls[i + 1 :]]
    report = score(shop, task, record(shop, task, changed, seed))
    assert report.reward == 0.0 and report.partial < 1.0
    assert names_a_row_and_column(report, changed_rows(shop, task, calls, i, seed)), report.explanation


@given(independent_calls(max_size=4), st.data(), st.integers(0, 5))
def test_adding_an_unrelated_write_scores_below_one(shop, calls, data, seed):
    task = make_task(calls)
    used = {c.arguments.get("customer_id") for c in calls}
    extra = Call(
        name="set_note",
        arguments={"customer_id": next(c for c in NOTE_CUSTOMERS if c not in used), "notes": "x"},
    )
    position = data.draw(st.integers(0, len(calls)))
    agent = [*calls[:position], extra, *calls[position:]]
    report = score(shop, task, record(shop, task, agent, seed))
    assert report.reward == 0.0 and report.partial < 1.0
    assert [(r.table, r.key, [c.column for c in r.columns]) for r in report.diff.unexpected] == [
        ("customers", extra.arguments["customer_id"], ["notes"])
    ]
