"""tau2's tasks -> toolgym tasks (gold calls, expect_error, answer facts, notes, tags)."""

from __future__ import annotations

from typing import Any


def instruction_text(task: dict[str, Any]) -> str:
    """tau2's user scenario as one readable text (the fields tau2 gives its user simulator)."""
    scenario = task["user_scenario"]
    ins = scenario["instructions"]
    parts = []
    if scenario.get("persona"):
        parts.append(f"Persona: {scenario['persona']}")
    if isinstance(ins, str):
        parts.append(ins.strip())
    else:
        for label, key in (
            ("Reason for call", "reason_for_call"),
            ("Known info", "known_info"),
            ("Unknown info", "unknown_info"),
            ("Task instructions", "task_instructions"),
        ):
            text = (ins.get(key) or "").strip()
            if text and text != ".":
                parts.append(f"{label}: {text}")
    return "\n".join(parts)


def convert_tasks(
    tasks: list[dict[str, Any]], expected: dict[str, Any], split: dict[str, list[str]]
) -> list[dict[str, Any]]:
    where = {tid: name for name in ("train", "test") for tid in split.get(name, [])}
    out = []
    for t in tasks:
        tid = t["id"]
        gold = expected[tid]["gold_calls"]
        actions = t["evaluation_criteria"]["actions"] or []
        if len(gold) != len(actions):
            raise SystemExit(
                f"task {tid}: {len(actions)} actions but {len(gold)} gold calls in expected.jsonl"
            )
        calls = []
        for a, g in zip(actions, gold, strict=True):
            if a["name"] != g["name"] or a["arguments"] != g["arguments"]:
                raise SystemExit(f"task {tid}: action {a['action_id']} differs from expected.jsonl's call")
            call: dict[str, Any] = {"name": a["name"], "arguments": a["arguments"]}
            if g["error"]:
                call["expect_error"] = True
            if a["name"] == "transfer_to_human_agents":
                call["free"] = ["summary"]  # the agent words the summary; validation does not mutate it
            calls.append(call)
        tags = ["tau2"]
        if tid in where:
            tags.append(where[tid])
        task: dict[str, Any] = {
            "id": tid,
            "instruction": instruction_text(t),
            "calls": calls,
            "answer_facts": list(t["evaluation_criteria"].get("communicate_info") or []),
        }
        if any(c["name"] == "transfer_to_human_agents" for c in calls):
            task["ignore_columns"] = list(HANDOFF_IGNORED)
        task["tags"] = tags
        notes = task_notes(t)
        if notes:
            task["notes"] = notes
        out.append(task)
    return out


#: handoff columns no task compares (tau2 ignores the transfer summary; the time is the clock's)
HANDOFF_IGNORED = ("handoffs.summary", "handoffs.created_at")


def task_notes(task: dict[str, Any]) -> list[str]:
    """tau2's ungraded-here text: its purpose line, NL assertions (graded by an LLM in tau2), open issues."""
    notes = []
    purpose = (task.get("description") or {}).get("purpose")
    if purpose:
        notes.append(f"tau2 purpose: {purpose}")
    for text in task["evaluation_criteria"].get("nl_assertions") or []:
        notes.append(f"tau2 NL assertion: {text}")
    for issue in task.get("issues") or []:
        notes.append(f"tau2 open issue {issue['id']} ({issue['created_at']}): {issue['title']}")
    return notes
