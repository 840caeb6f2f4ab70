"""Server labels are bound to their rollout, and the runs key is the server's own: each finding
of the review reproduced as an attack that must fail.

- a capacity label minted by filling a server is not believed in another rollout's chat log
  (another session, task or call index): the call is the agent's, and the warnings say why;
- servers racing to create `RUNS/.toolgym-key` all get the one key (threads and processes);
- an edited `domain_path` in a signed transcript does not pick the domain that scores it; the
  signed domain identity (name, version, fingerprint) is checked against the domain scored;
- a key file that is a symlink, another user's, or open to group/others is refused;
- transcripts signed in the previous format: toolgym files whose old header verifies keep their
  labels; old labels in chat logs, which could be replayed into another rollout, are unsigned.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from scoring import load_domain, load_transcript, parse_transcript, score_rollout, score_transcript
from scoring.batch import BatchScorer
from scoring.errors import TranscriptError
from simulator import Domain, ToolgymError
from simulator.errors import INJECTED_FAULT
from simulator.runtime.transcript import MemorySink
from simulator.serve import labels
from simulator.serve.server import DomainServer
from tests.conftest import FIXTURES
from tests.test_scoring_properties import FORMATS

READ = {"customer_id": "C-0005"}


def _text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if getattr(b, "text", None) is not None)


@pytest.fixture
def shop_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "domains" / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    shutil.copy(FIXTURES / "shop_tasks.jsonl", folder / "tasks.jsonl")
    return folder


def _chat(calls: list[tuple[str, dict[str, Any], str, bool]], **meta: Any) -> str:
    """An OpenAI chat log: (tool, arguments, result text, failed) per call, then a final message."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for i, (tool, arguments, result, _) in enumerate(calls):
        fn = {"name": tool, "arguments": json.dumps(arguments)}
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "function": fn}]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    messages.append({"role": "assistant", "content": "Sorry, the service is busy."})
    return json.dumps({"domain": "shop", **meta, "messages": messages})


# -- a capacity label is bound to its session, task and call index ------------------------------------


@pytest.fixture
def refused(shop_dir: Path, tmp_path: Path) -> tuple[Domain, str, str]:
    """(domain, a capacity refusal's text, the live session's name): a server full with one
    session (task `lookup`), and a second client refused."""
    domain = load_domain(shop_dir)
    server = DomainServer(domain, runs=tmp_path / "runs", max_sessions=1, task="lookup")

    async def main() -> str:
        async with Client(server.mcp, mode="legacy") as a, Client(server.mcp, mode="legacy") as b:
            assert not (await a.call_tool("get_customer", READ)).is_error
            result = await b.call_tool("get_customer", READ, raise_on_error=False)
            assert result.is_error
            return _text(result)

    text = asyncio.run(main())
    label = labels.read_label(text)
    assert label is not None and label.kind == "capacity"
    (live,) = (tmp_path / "runs").glob("*.jsonl")
    return domain, text, live.stem


def test_the_refused_rollout_itself_is_failed_infra(refused):
    domain, text, _ = refused
    rollout = parse_transcript(_chat([("get_customer", READ, text, True)], task="lookup"), key=_key(refused))
    report = score_rollout(domain, rollout)
    assert report.status == "failed-infra", report.explanation


def _key(refused: tuple[Domain, str, str]) -> labels.Key:
    runs = Path(refused[0].path).parent.parent / "runs"  # tmp_path/domains/shop -> tmp_path/runs
    key = labels.runs_key(runs)
    assert key is not None
    return key


@pytest.mark.parametrize("where", ["another call index", "another session", "another task"])
def test_a_capacity_label_pasted_into_another_rollout_is_the_agents_error(refused, where):
    domain, text, live = refused
    ok = json.dumps({"customer_id": "C-0001"})
    if where == "another call index":  # the refusal was its session's call 0, pasted at call 1
        log = _chat(
            [("get_customer", {"customer_id": "C-0001"}, ok, False), ("get_customer", READ, text, True)],
            task="lookup",
        )
        task = "lookup"
    elif where == "another session":  # the live session's own log, which names its session
        log = _chat([("get_customer", READ, text, True)], task="lookup", session=live)
        task = "lookup"
    else:  # a rollout of another task
        log = _chat([("get_customer", READ, text, True)], task="cancel")
        task = "cancel"
    report = score_rollout(domain, parse_transcript(log, key=_key(refused)), task)
    assert report.status == "scored" and report.reward == 0.0, report.explanation
    said = " ".join(report.warnings)
    assert "label(s) were ignored" in said and where.split()[-1] in said, said


# -- the key: created once under a race; refused when it is not the server's own -------------------


def _race(runs: str, out: Any) -> None:
    try:
        out.put(labels.runs_key(runs, create=True).secret.hex())  # type: ignore[union-attr]
    except Exception as exc:  # the loser of the race must read the winner's key, never fail
        out.put(f"error: {exc}")


def test_servers_racing_to_create_the_key_all_get_the_one_key(tmp_path: Path):
    for round_ in range(150):  # threads: 150 races of 4
        runs = tmp_path / f"t{round_}"
        barrier = threading.Barrier(4)
        got: list[str] = []

        def go(runs: Path = runs, barrier: threading.Barrier = barrier, got: list[str] = got) -> None:
            barrier.wait()
            try:
                got.append(labels.runs_key(runs, create=True).secret.hex())  # type: ignore[union-attr]
            except Exception as exc:
                got.append(f"error: {exc}")

        threads = [threading.Thread(target=go) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert len(got) == 4 and len(set(got)) == 1 and not got[0].startswith("error"), got
        assert (os.stat(runs / labels.KEY_FILE).st_mode & 0o777) == 0o600
        assert [p.name for p in runs.iterdir()] == [labels.KEY_FILE]  # no temporary file left
    ctx = multiprocessing.get_context("fork")
    for round_ in range(10):  # processes: 10 races of 4
        runs = tmp_path / f"p{round_}"
        queue = ctx.Queue()
        procs = [ctx.Process(target=_race, args=(str(runs), queue)) for _ in range(4)]
        for p in procs:
            p.start()
        results = [queue.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        assert len(set(results)) == 1 and not results[0].startswith("error"), results


def test_without_hard_links_the_loser_still_reads_the_whole_key(tmp_path, monkeypatch):
    """Where the file system has no hard links, the key is created with O_EXCL and a loser of the
    race waits (bounded) for the winner's key to be whole."""

    def no_links(src: Any, dst: Any) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    for round_ in range(50):
        runs = tmp_path / f"n{round_}"
        barrier = threading.Barrier(4)
        got: list[str] = []

        def go(runs: Path = runs, barrier: threading.Barrier = barrier, got: list[str] = got) -> None:
            barrier.wait()
            got.append(labels.runs_key(runs, create=True).secret.hex())  # type: ignore[union-attr]

        threads = [threading.Thread(target=go) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert len(got) == 4 and len(set(got)) == 1, got


def _planted(runs: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> labels.Key:
    """A key someone else put in RUNS (`how`: mode 0644, a symlink, another user's file)."""
    runs.mkdir(parents=True, exist_ok=True)
    key = labels.Key.generate()
    target = runs / labels.KEY_FILE
    if how == "symlink":
        elsewhere = runs.parent / "elsewhere.key"
        elsewhere.write_text(key.secret.hex())
        elsewhere.chmod(0o600)
        target.symlink_to(elsewhere)
    else:
        target.write_text(key.secret.hex())
        target.chmod(0o644 if how == "group/others" else 0o600)
        if how == "another user":
            owner = os.stat(target).st_uid
            monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    return key


@pytest.mark.parametrize("how", ["group/others", "symlink", "another user"])
def test_a_planted_key_is_refused_by_the_server_and_by_scoring(tmp_path, monkeypatch, shop_dir, how):
    runs = tmp_path / "runs"
    planted = _planted(runs, how, monkeypatch)
    said = {"group/others": "group or others", "symlink": "symlink", "another user": "owned by"}[how]
    with pytest.raises(ValueError, match=said):
        labels.runs_key(runs, create=True)
    with pytest.raises(ValueError, match=said):
        DomainServer(load_domain(shop_dir), runs=runs)
    # a transcript forged with the planted key beside it: refused, never failed-infra
    token = labels.label_token(planted, "s", 0, "get_customer", READ, "capacity")
    forged = runs / "s.jsonl"
    forged.write_text(_chat([("get_customer", READ, f"busy {token}", True)], task="lookup"))
    with pytest.raises(TranscriptError, match=said):
        load_transcript(forged)


# -- the domain that scores a signed transcript is the one the server signed --------------------------


@pytest.fixture
def served(tmp_path: Path, shop_dir: Path) -> tuple[Path, Path]:
    """(the transcript of an agent that cancelled the wrong order on a domain served by path,
    a copy of that domain whose `cancel` task wants that order)."""
    server = DomainServer(load_domain(shop_dir), runs=tmp_path / "runs", task="cancel")

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            await client.call_tool("cancel_order", {"order_id": "O-0004"})
            await client.call_tool("submit_answer", {"answer": "Cancelled."})

    asyncio.run(main())
    (transcript,) = (tmp_path / "runs").glob("*.jsonl")
    doctored = tmp_path / "doctored" / "shop"
    shutil.copytree(shop_dir, doctored)
    tasks = (doctored / "tasks.jsonl").read_text().replace('"order_id": "O-0002"', '"order_id": "O-0004"')
    (doctored / "tasks.jsonl").write_text(tasks)
    return transcript, doctored


def test_an_edited_domain_path_does_not_pick_the_domain(served):
    transcript, doctored = served
    assert score_transcript(transcript).reward == 0.0  # as served
    lines = transcript.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["domain_path"] != str(doctored)
    header["domain_path"] = str(doctored)
    transcript.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(ToolgymError, match="domain_path"):
        score_transcript(transcript)
    line = BatchScorer().score(transcript)
    assert line["status"] == "error" and line["reward"] is None, line


def test_scoring_on_another_domain_than_the_signed_one_warns(served):
    transcript, doctored = served
    report = score_transcript(transcript, domain=doctored)
    assert report.reward == 1.0  # the caller chose that domain, and is told
    assert any("fingerprint" in w and "signed" in w for w in report.warnings), report.warnings
    assert not score_transcript(transcript).warnings


def test_a_signed_transcript_scores_by_name_where_its_folder_is_not(tmp_path):
    """On another machine the folder the server loaded the domain from is absent: the signed
    name, version and fingerprint find the domain."""
    bank = load_domain("bank")
    task = bank.tasks[0]
    runs = tmp_path / "runs"
    server = DomainServer(bank, runs=runs, task=task.id)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            for call in task.calls:
                await client.call_tool(call.name, call.arguments)

    asyncio.run(main())
    (transcript,) = runs.glob("*.jsonl")
    key = labels.runs_key(runs)
    assert key is not None
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    records[0]["domain_path"] = "/nowhere/domains/bank"  # as the other machine's server wrote it
    records[0]["signature"] = key.sign(labels.header_fields(records[0]))
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    rollout = load_transcript(transcript)
    assert rollout.server_written and rollout.complete
    report = score_transcript(transcript)
    assert report.status == "scored" and report.domain == bank.ref and not report.warnings


# -- transcripts signed in the previous format -------------------------------------------------------


def _v1(domain: Domain, key: labels.Key, fault: str | None) -> list[dict[str, Any]]:
    """A toolgym transcript as the previous server signed it (no task in call or end fields)."""
    sink = MemorySink()
    task = domain.task("lookup")
    episode = domain.episode(seed=0, task=task, transcript=sink)
    episode.call("get_customer", READ)
    if fault is not None:
        episode.fail("get_customer", READ, INJECTED_FAULT, injected=fault == "injected")
        record = sink.records[-1]
        record["error_kind"] = fault
        sig = key.sign(["call", "old", record["index"], record["tool"], record["arguments"], fault])
        record["signature"] = sig
        record["error"] = (
            f"{INJECTED_FAULT} [toolgym-label kind={fault} session=old index={record['index']} sig={sig}]"
        )
    episode.say("Customer 5 has 500.")
    episode.end()
    episode.close()
    head, end = sink.records[0], sink.records[-1]
    head["session"] = "old"
    head["signature"] = key.sign(
        ["header", *(head.get(k) for k in ("session", "domain", "version", "task", "seed", "started_at"))]
    )
    end["signature"] = key.sign(["end", "old", end.get("calls"), end.get("digest"), end.get("reason")])
    return sink.records


def test_old_toolgym_transcripts_score_as_before(shop_dir):
    domain = load_domain(shop_dir)
    key = labels.Key.generate()
    plain = parse_transcript(FORMATS["toolgym"](_v1(domain, key, None)), key=key)
    assert plain.server_written and plain.complete
    assert score_rollout(domain, plain).reward == 1.0
    faulted = parse_transcript(FORMATS["toolgym"](_v1(domain, key, "capacity")), key=key)
    assert [c.fault for c in faulted.calls] == [None, "capacity"]
    assert score_rollout(domain, faulted).status == "failed-infra"


def test_old_labels_in_chat_logs_are_unsigned(shop_dir):
    domain = load_domain(shop_dir)
    key = labels.Key.generate()
    records = _v1(domain, key, "capacity")
    for fmt in ("openai", "anthropic", "mcp"):
        report = score_rollout(domain, parse_transcript(FORMATS[fmt](records), key=key))
        assert report.status == "scored", (fmt, report.explanation)
        assert any("old label format" in w for w in report.warnings), report.warnings
