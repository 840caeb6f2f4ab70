"""`toolgym generate --llm URL`: requests written as a person's (checked, validated again), filled descriptions, a
disk cache so reruns agree, retries, and the template kept on any failure; against a real
OpenAI-compatible HTTP endpoint in a thread (tests/fake_openai.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from scoring.validation.validate import check_task
from toolgen.synth.llm import ChatModel, LLMOptions, rephrasing_problem, stated_values
from toolgen.synth.run import synthesize_domain
from toolgym.cli import app

from .fake_openai import FakeOpenAI, say
from .synth_kit import SHOP, make_op, planned, planned_from

runner = CliRunner()
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def _user(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def _is_scenario(request: dict[str, Any]) -> bool:
    return str(request["messages"][0]["content"]).startswith("You write the message a person")


#: what the fake model puts before a goal: who is asking and why
WHO = "I run the back office of our shop and a customer asked me for this. "
ID = re.compile(r"\b[A-Z]{3}-\d+\b")


def _fault(goal: str) -> str:
    """What the fake model gets wrong for this goal, by its length: nothing, its values, a
    field's internal name or a clause said twice."""
    return ("none", "values", "internal name", "repeated")[len(goal) % 4]


def model_reply(request: dict[str, Any]) -> dict[str, Any]:
    """Writes a request as the goal with who is asking before it, with the fault `_fault` picks;
    describes anything as one sentence."""
    if not _is_scenario(request):
        return say(f"Works with {request['messages'][-1]['content'].split('`')[1]} records.")
    goal, facts = _user(request).removeprefix("Goal: ").split("\n\nFacts:\n")
    assert all(f"- {v}" in facts.splitlines() for v in stated_values(goal))
    fault = _fault(goal)
    if fault == "values":
        return say(ID.sub("them", QUOTED.sub("them", goal)))
    if fault == "internal name":
        return say(f"{WHO}{goal} Match them on user_id.")
    if fault == "repeated":
        return say(f"{WHO}{goal.rstrip('.?')}: {goal[0].lower()}{goal[1:]}")
    return say(WHO + goal)


def test_stated_values_are_quoted_strings_words_with_digits_and_literals():
    text = 'Cancel the order ORD-17 of the user whose email is "ada@example.com", set paid to true and total to 12.5.'
    assert stated_values(text) == ["ada@example.com", "ORD-17", "12.5", "true"]
    assert stated_values('Say "a \\"b\\"" twice.') == ['a "b"']


@pytest.mark.parametrize(
    ("rephrased", "why"),
    [
        ('Could you cancel order ORD-17 for "ada@example.com"?', None),
        ("Could you cancel order ORD-17 for ada@example.com?", None),
        ("Could you cancel order ORD-17?", "dropped a value: 'ada@example.com'"),
        ('Cancel ORD-17 and ORD-18 for "ada@example.com".', "added a value: 'ORD-18'"),
        ('Use cancel_order on ORD-17 for "ada@example.com".', "names a tool: 'cancel_order'"),
        ("   ", "empty"),
        (None, "empty"),
    ],
)
def test_a_rephrasing_keeps_every_value_adds_none_and_names_no_tool(rephrased, why):
    original = 'Cancel the order ORD-17 of the user whose email is "ada@example.com".'
    assert rephrasing_problem(original, rephrased, ["cancel_order", "get_user"]) == why


def test_requests_are_at_temperature_zero_and_cached_by_prompt(tmp_path):
    with FakeOpenAI(reply=lambda r: say("hi " + _user(r))) as llm:
        options = LLMOptions(url=llm.url, model="m", cache=str(tmp_path))
        model = ChatModel(options)
        assert model.chat([{"role": "user", "content": "a"}]) == "hi a"
        assert model.chat([{"role": "user", "content": "a"}]) == "hi a"
        assert model.chat([{"role": "user", "content": "b"}]) == "hi b"
        again = ChatModel(options)  # another process, the same cache: nothing sent
        assert again.chat([{"role": "user", "content": "b"}]) == "hi b"
        assert [(r["model"], r["temperature"], _user(r)) for r in llm.requests] == [
            ("m", 0, "a"),
            ("m", 0, "b"),
        ]
        assert (model.sent, model.cached, again.sent, again.cached) == (2, 1, 0, 1)


def test_a_reply_cut_at_max_tokens_is_no_reply(tmp_path):
    """A model that rambles (or a server whose default length is its whole context) is cut at
    `max_tokens`; the cut reply is not used, not asked again and not cached."""
    with FakeOpenAI(reply=lambda r: say("word " * 50)) as llm:
        model = ChatModel(LLMOptions(url=llm.url, max_tokens=20, cache=str(tmp_path)))
        assert model.chat([{"role": "user", "content": "x"}]) is None
        assert llm.requests[0]["max_tokens"] == 20 and len(llm.requests) == 1
        assert model.errors == 1 and "cut at 20 tokens" in (model.last_error or "")
        assert not list(tmp_path.rglob("*.json"))
        short = ChatModel(LLMOptions(url=llm.url, max_tokens=60))
        assert short.chat([{"role": "user", "content": "x"}]) == ("word " * 50).strip()


@pytest.mark.parametrize("status", [500, 429])
def test_endpoint_errors_are_retried_with_backoff(tmp_path, status):
    with FakeOpenAI(reply=lambda r: say("ok"), fail_first=2, fail_status=status) as llm:
        model = ChatModel(LLMOptions(url=llm.url, retries=3, backoff=0.01))
        assert model.chat([{"role": "user", "content": "x"}]) == "ok"
        assert len(llm.requests) == 3 and model.errors == 0


def test_an_endpoint_that_keeps_failing_gives_none_never_an_exception(tmp_path):
    with FakeOpenAI(reply=lambda r: say("ok"), fail_first=100) as llm:
        model = ChatModel(LLMOptions(url=llm.url, retries=2, backoff=0.01, cache=str(tmp_path)))
        assert model.chat([{"role": "user", "content": "x"}]) is None
        assert len(llm.requests) == 3 and model.errors == 1 and "HTTP 500" in (model.last_error or "")
        assert not list(tmp_path.rglob("*.json"))  # a failure is not cached
    with FakeOpenAI(reply=lambda r: say("ok"), fail_first=100, fail_status=400) as llm:
        model = ChatModel(LLMOptions(url=llm.url, retries=3, backoff=0.01))
        assert model.chat([{"role": "user", "content": "x"}]) is None
        assert len(llm.requests) == 1  # a client error is not asked again
    model = ChatModel(LLMOptions(url="http://127.0.0.1:9/v1", retries=1, backoff=0.01, timeout=2))
    assert model.chat([{"role": "user", "content": "x"}]) is None and model.errors == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--llm", "ftp://x", "--out", "o"],
            "'--llm': not an http(s) URL of a chat endpoint: 'ftp://x'",
        ),
        (["--llm", "http://127.0.0.1:9/v1", "--plan", "p.json"], "give --out DIR (with tasks)"),
        (["--llm", "http://127.0.0.1:9/v1", "--out", "o", "--no-tasks"], "give --out DIR (with tasks)"),
    ],
)
def test_llm_usage_errors(tmp_path, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["generate", str(SHOP), *extra])
    assert result.exit_code == 2 and message in " ".join(result.stderr.split()), result.stderr
    assert list(tmp_path.iterdir()) == []  # no --out folder, no plan


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_generate_with_llm_writes_requests_checks_and_validates_them_and_keeps_templates_else(tmp_path):
    plain = tmp_path / "plain"
    code = runner.invoke(app, ["generate", str(SHOP), "--out", str(plain), "--workers", "1", "--json"])
    assert code.exit_code == 0, code.stderr
    with FakeOpenAI(reply=model_reply) as llm:
        args = ["generate", str(SHOP), "--workers", "1", "--json", "--llm", llm.url, "--llm-model", "m"]
        args += ["--llm-cache", str(tmp_path / "cache")]
        first = runner.invoke(app, [*args, "--out", str(tmp_path / "a")])
        assert first.exit_code == 0, first.stderr
        sent = len(llm.requests)
        second = runner.invoke(app, [*args, "--out", str(tmp_path / "b")])
        assert second.exit_code == 0, second.stderr
        assert len(llm.requests) == sent > 0  # the rerun came from the cache
    summary = json.loads(first.stdout)
    (entry,) = summary_domains(tmp_path / "a")
    folder = Path(entry["folder"])
    templates = [
        json.loads(x)["instruction"] for x in (plain / folder.name / "tasks.jsonl").read_text().splitlines()
    ]
    tasks = [json.loads(x) for x in (folder / "tasks.jsonl").read_text().splitlines()]
    counts = summary["llm"]
    faults = [_fault(t) for t in templates]
    expected = {
        "scenarios": faults.count("none"),
        "template kept: dropped a value": faults.count("values"),
        "template kept: instruction internal name": faults.count("internal name"),
        "template kept: instruction repeated": faults.count("repeated"),
    }
    assert all(expected.values()), expected  # every way a request is kept or refused, exercised
    assert {k: v for k, v in counts.items() if not k.startswith("descriptions")} == expected
    assert counts["scenarios"] == sum(t["instruction"].startswith(WHO) for t in tasks)
    for template, task in zip(templates, tasks, strict=True):  # the same tasks, in a person's words or not
        assert task["instruction"] in (template, WHO + template)
        assert check_task(str(folder), task["id"]).status == "valid"
    assert _folder_bytes(folder) == _folder_bytes(tmp_path / "b" / folder.name)
    assert all(r["temperature"] == 0 and r["model"] == "m" and r["max_tokens"] == 400 for r in llm.requests)


def summary_domains(out: Path) -> list[dict[str, Any]]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return [d for d in report["domain_results"] if d["kept"]]


def test_missing_descriptions_are_filled_and_an_unreachable_endpoint_keeps_everything(tmp_path):
    ops = [
        make_op(
            "create_widget", "create", {"name": {"type": "string"}, "size": {"type": "integer"}}, ["name"]
        ),
        make_op("get_widget", "read", {"widget_id": {"type": "string"}}, ["widget_id"]),
        make_op("list_widgets", "read", {"name": {"type": "string"}}),
        make_op("delete_widget", "delete", {"widget_id": {"type": "string"}}, ["widget_id"]),
        make_op(
            "update_widget",
            "update",
            {"widget_id": {"type": "string"}, "size": {"type": "integer"}},
            ["widget_id"],
        ),
    ]
    plan, by_id = planned_from(*ops)
    with FakeOpenAI(reply=model_reply) as llm:
        options = LLMOptions(url=llm.url, cache=str(tmp_path / "cache"))
        result = synthesize_domain(plan, by_id, tmp_path / "a", {}, rows=8, with_tasks=False, llm=options)
    assert result.kept, result.reason
    domain = load_domain(result.folder or "")
    assert {t.spec.description for t in domain.tools.values()} == {
        f"Works with {name} records." for name in domain.tools
    }
    assert result.llm["descriptions_filled"] == len(domain.tools) + len(domain.tables)
    dead = LLMOptions(url="http://127.0.0.1:9/v1", retries=0, timeout=2)
    plan2, _ = planned(SHOP)
    kept = synthesize_domain(plan2, planned(SHOP)[1], tmp_path / "b", {}, rows=12, llm=dead)
    assert kept.kept, kept.reason
    assert kept.llm.get("template kept: endpoint error") == kept.tasks_kept >= 5
    assert "scenarios" not in kept.llm
    why = [k for k in kept.llm if k.startswith("no reply: ConnectError")]  # (why, for the one who runs it)
    assert len(why) == 1 and kept.llm[why[0]] == kept.llm["descriptions_errors"] + kept.tasks_kept
