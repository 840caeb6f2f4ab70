"""The environment API: reset / step / score, the same reward `toolgym score` gives for the same calls.

The property drives random call sequences on the bundled bank domain — gold calls of random tasks
(so real writes happen), calls with wrong or unreadable arguments, unknown tools, assistant texts and
answers with or without the facts — then scores the episode in two ways: `env.score()`, and the
CLI `toolgym score --json` reading the episode's OpenAI transcript (`env.transcript()`). They agree
on status, reward, partial credit and failed calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from scoring import load_domain
from scoring.validation.gold import replay_gold
from simulator.errors import TaskError
from toolgym.cli import app
from toolgym.env import FORMATS, Environment, tool_list

BANK = load_domain("bank")
ENV = Environment(BANK)
TASKS = [t.id for t in BANK.tasks]
TOOLS = sorted(BANK.tools)
runner = CliRunner()


def cli_score(transcript: dict[str, Any], folder: Path) -> dict[str, Any]:
    path = folder / "rollout.json"
    path.write_text(json.dumps(transcript), encoding="utf-8")
    result = runner.invoke(app, ["score", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def gold_calls(task_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The task's gold calls with their references resolved (replayed on a throwaway episode)."""
    with BANK.episode(seed=BANK.task(task_id).seed) as episode:
        return [(o.name, o.arguments) for o in replay_gold(episode, BANK.task(task_id))]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10_000) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
actions = st.one_of(
    st.tuples(st.just("gold"), st.sampled_from(TASKS), st.integers(0, 8)),
    st.tuples(
        st.just("call"),
        st.sampled_from([*TOOLS, "no_such_tool"]),
        st.dictionaries(
            st.sampled_from(["customer_id", "account_id", "email", "amount", "x"]), json_values, max_size=3
        ),
    ),
    st.tuples(st.just("raw"), st.sampled_from(TOOLS), st.sampled_from(["[1", "[]", "42", '"text"', "{}"])),
    st.tuples(st.just("say"), st.text(max_size=30)),
)


def _act(env: Environment, action: tuple[Any, ...], facts: list[Any]) -> None:
    kind = action[0]
    if kind == "gold":
        calls = gold_calls(action[1])
        if calls:
            name, arguments = calls[action[2] % len(calls)]
            env.step(name, arguments)
    elif kind in ("call", "raw"):
        env.step(action[1], action[2])
    else:
        env.say(action[1] or " ".join(map(str, facts)))


@given(
    task=st.sampled_from(TASKS),
    prefix_gold=st.booleans(),
    steps=st.lists(actions, max_size=6),
    answer=st.sampled_from(["facts", "junk", "none", "bad"]),
)
def test_env_score_is_toolgym_score_for_the_same_calls(
    tmp_path_factory: pytest.TempPathFactory, task: str, prefix_gold: bool, steps: list[Any], answer: str
) -> None:
    env = ENV
    obs = env.reset(task_id=task)
    gold = BANK.task(task)
    if prefix_gold:  # often a good rollout, then noise
        for name, arguments in gold_calls(task):
            env.step(name, arguments)
    for action in steps:
        _act(env, action, gold.answer_facts)
    if answer == "facts":
        result = env.answer("Here you are: " + "; ".join(map(str, gold.answer_facts)))
        assert result.done and env.done
        assert env.step(TOOLS[0], {}).done  # nothing runs after the answer
    elif answer == "junk":
        env.answer("I could not find it.")
    elif answer == "bad":
        assert not env.step("submit_answer", {"answer": 5}).done
    mine = env.score()
    theirs = cli_score(env.transcript(), tmp_path_factory.mktemp("score"))
    assert obs.task_id == theirs["task"] == task
    assert (mine.status, mine.reward, mine.partial, mine.failed_calls) == (
        theirs["status"],
        theirs["reward"],
        theirs["partial"],
        theirs["failed_calls"],
    )


def test_a_gold_rollout_scores_one_and_a_no_op_does_not() -> None:
    with Environment(BANK, tasks=["bank-001", "bank-010"]) as env:
        for task in ("bank-001", "bank-010"):
            env.reset(task)
            for name, arguments in gold_calls(task):
                assert env.step(name, arguments).ok
            env.answer("; ".join(map(str, BANK.task(task).answer_facts)) or "Done.")
            report = env.score()
            assert (report.reward, report.partial) == (1.0, 1.0), report.explanation
        env.reset("bank-010")
        env.answer("Done.")
        report = env.score()
        assert report.reward == 0.0 and report.explanation


def test_reset_gives_policy_instruction_and_tools_in_every_form() -> None:
    env = Environment(BANK)
    obs = env.reset("bank-001", seed=3)
    assert (obs.task_id, obs.seed) == ("bank-001", 3)
    assert obs.system_prompt == BANK.policy.strip()
    assert obs.instruction == BANK.task("bank-001").instruction
    assert obs.messages == [
        {"role": "system", "content": obs.system_prompt},
        {"role": "user", "content": obs.instruction},
    ]
    for form in FORMATS:
        assert obs.tools[form] == tool_list(BANK, form)  # type: ignore[arg-type]
    names = [t["function"]["name"] for t in obs.tools["openai"]]
    assert names == [*BANK.tools, "submit_answer"]
    # no grading material in what the model is given
    text = json.dumps([obs.system_prompt, obs.instruction, obs.tools])
    assert "answer_facts" not in text and "12650" not in text


def test_episodes_are_independent() -> None:
    a, b = Environment(BANK), Environment(BANK)
    a.reset("bank-010")
    b.reset("bank-010")
    seed_digest = b.episode.digest()
    for name, arguments in gold_calls("bank-010"):
        a.step(name, arguments)
    assert a.episode.digest() != seed_digest == b.episode.digest()
    a.reset("bank-010")  # a fresh copy of the seed state
    assert a.episode.digest() == seed_digest


def test_tool_errors_come_back_as_text_and_change_nothing() -> None:
    env = Environment(BANK)
    env.reset("bank-010")
    digest = env.episode.digest()
    bad: list[tuple[str, dict[str, Any] | str]] = [
        ("no_such_tool", {}),
        ("get_account", {"account_id": 5}),
        ("get_account", "[1"),
    ]
    for name, arguments in bad:
        result = env.step(name, arguments)
        assert not result.ok and not result.done and result.error
        assert result.content.startswith("Error: ")
    assert env.episode.digest() == digest


def test_tasks_and_manifest_choose_what_is_served(tmp_path: Path) -> None:
    manifest = tmp_path / "bank.json"
    manifest.write_text(
        json.dumps(
            {"domain": BANK.ref, "fingerprint": BANK.fingerprint(), "valid_tasks": ["bank-002", "bank-003"]}
        )
    )
    env = Environment(BANK, manifest=manifest, rng=1)
    assert [t.id for t in env.tasks] == ["bank-002", "bank-003"]
    assert {env.reset().task_id for _ in range(20)} == {"bank-002", "bank-003"}
    with pytest.raises(TaskError, match="not among"):
        env.reset("bank-001")
    with pytest.raises(TaskError, match="no task"):
        Environment(BANK, tasks=["bank-999"])
    with pytest.raises(RuntimeError, match="reset"):
        Environment(BANK).step("get_account", {})
