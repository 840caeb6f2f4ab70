"""toolgen.proposals: with `generate --data --llm`, a model proposes steps for what is not modelled.

The shop of test_fromdata, against the fake OpenAI endpoint: a proposal that passes every check
replaces the tool's steps and moves its sentences to `proposed`; one that fails a check (does not
load, drops a check, refuses every call, changes nothing, not JSON) or an endpoint that fails leaves
the domain exactly as generated without a model, with the reason counted.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from simulator import ToolError
from toolgen.fromdata import Records, generate_domain, read_operations
from toolgen.proposals import parse_steps, proposer, sample_arguments
from toolgen.snapshot import read_snapshot
from toolgen.synth.llm import LLMOptions
from toolgym.cli import app

from .fake_openai import FakeOpenAI, say
from .test_fromdata import DATA, write_shop

PAY = "pay_pending_order"


@pytest.fixture(scope="module")
def shop_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_shop(tmp_path_factory.mktemp("shop"))


@pytest.fixture(scope="module")
def plain(shop_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Any:
    return generate_domain(*shop_files, tmp_path_factory.mktemp("plain") / "shop", name="shop")


def _paid(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The compiled steps of `pay_pending_order`, and the order then marked paid."""
    out = copy.deepcopy(steps)
    at = next(i for i, s in enumerate(out) if "use" in s)
    out.insert(at, {"update": "orders", "key": {"order_id": "$args.order_id"}, "set": {"status": "paid"}})
    return out


def _generate(shop_files: tuple[Path, Path], folder: Path, pay_reply: Any, **fake: Any) -> Any:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        head = request["messages"][1]["content"].splitlines()[0]
        return say(pay_reply if f"`{PAY}`" in head else '{"steps": null}')

    with FakeOpenAI(reply=reply, **fake) as llm:
        options = LLMOptions(url=llm.url, cache=None, retries=0, backoff=0)
        result = generate_domain(*shop_files, folder / "shop", name="shop", refine=proposer(options))
        result.requests = list(llm.requests)
        return result


def test_a_proposal_that_passes_replaces_the_steps(
    shop_files: tuple[Path, Path], plain: Any, tmp_path: Path
) -> None:
    steps = _paid(plain.tools[PAY].steps)
    made = _generate(shop_files, tmp_path, "Here it is:\n```json\n" + json.dumps({"steps": steps}) + "\n```")
    assert made.llm == {"accepted": 1, "declined": 1}
    prompt = made.requests[0]["messages"]
    assert "Not modelled:" in prompt[1]["content"] and '"require"' in prompt[0]["content"]
    bound = made.tools[PAY]
    assert bound.proposed == ["Pay a pending order with one of the customer's cards."]
    assert bound.not_modelled == [] and bound.steps == steps
    report = json.loads((made.folder / "report.json").read_text())
    assert report["llm"] == {"accepted": 1, "declined": 1}
    assert report["tools"][PAY]["proposed"] == bound.proposed
    assert "proposed by a model" in (made.folder / "README.md").read_text()
    assert (made.folder / "policy.md").read_text() == (plain.folder / "policy.md").read_text()
    domain = load_domain(made.folder)
    with domain.episode(seed=0) as ep:
        assert ep.call(PAY, {"order_id": "#O1", "card_id": "card_11"})["status"] == "paid"
        with pytest.raises(ToolError, match="not pending"):
            ep.call(PAY, {"order_id": "#O2", "card_id": "card_11"})
        with pytest.raises(ToolError, match="does not belong"):
            ep.call(PAY, {"order_id": "#O3", "card_id": "card_11"})


def _unknown_table(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = _paid(steps)
    out[-3]["update"] = "payments"
    return out


def _no_checks(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in _paid(steps) if "require" not in s]


def _always_fails(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"fail": "Payments are closed"}, *steps]


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_unknown_table, "does not load"),
        (_no_checks, "drops a check"),
        (_always_fails, "refuses every call"),
        (lambda steps: steps, "changes nothing"),
        (None, "not JSON"),
    ],
)
def test_a_proposal_that_fails_a_check_changes_nothing(
    shop_files: tuple[Path, Path], plain: Any, tmp_path: Path, make: Any, why: str
) -> None:
    reply = (
        "I cannot help with that." if make is None else json.dumps({"steps": make(plain.tools[PAY].steps)})
    )
    made = _generate(shop_files, tmp_path, reply)
    assert made.llm == {why: 1, "declined": 1}
    assert made.tools[PAY].not_modelled == plain.tools[PAY].not_modelled and not made.tools[PAY].proposed
    assert (made.folder / "domain.yaml").read_text() == (plain.folder / "domain.yaml").read_text()


def test_an_endpoint_that_fails_changes_nothing(
    shop_files: tuple[Path, Path], plain: Any, tmp_path: Path
) -> None:
    made = _generate(shop_files, tmp_path, "{}", fail_first=100, fail_status=503)
    assert made.llm == {"endpoint error": 2}
    assert (made.folder / "domain.yaml").read_text() == (plain.folder / "domain.yaml").read_text()


def test_replies_read_as_steps() -> None:
    assert parse_steps('{"steps": null}') == "declined"
    assert parse_steps('```json\n{"steps": [{"return": 1}]}\n```') == [{"return": 1}]
    assert parse_steps('{"steps": [1]}') == "no steps"
    assert parse_steps("[" * 100_000) == "too long"
    assert parse_steps('{"steps": ' + "[" * 5000 + "]" * 5000 + "}") == "not JSON"


def test_sample_calls_come_from_the_records(shop_files: tuple[Path, Path]) -> None:
    records = Records(read_snapshot(shop_files[1]))
    op = next(o for o in read_operations(shop_files[0]) if o.name == PAY)
    samples = sample_arguments(records, op)
    assert {s["order_id"] for s in samples} == set(DATA["orders"])
    owner = {o: DATA["orders"][o]["customer_id"] for o in DATA["orders"]}
    for s in samples:  # a card of the order's customer
        assert s["card_id"] in DATA["customers"][owner[s["order_id"]]]["cards"]


def test_the_cli_passes_llm_with_data(shop_files: tuple[Path, Path], plain: Any, tmp_path: Path) -> None:
    steps = _paid(plain.tools[PAY].steps)

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        head = request["messages"][1]["content"].splitlines()[0]
        return say(json.dumps({"steps": steps if f"`{PAY}`" in head else None}))

    with FakeOpenAI(reply=reply) as llm:
        args = ["generate", str(shop_files[0]), "--data", str(shop_files[1]), "--out", str(tmp_path / "out")]
        args += ["--llm", llm.url, "--llm-cache", str(tmp_path / "cache"), "--json"]
        first = CliRunner().invoke(app, args)
        assert first.exit_code == 0, first.output
        assert json.loads(first.stdout)["llm"] == {"accepted": 1, "declined": 1}
        sent = len(llm.requests)
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0, again.output
        assert len(llm.requests) == sent  # the replies came from the cache
        assert json.loads(again.stdout)["tools"][PAY]["proposed"]


def test_a_hostile_reply_is_refused(shop_files: tuple[Path, Path], plain: Any, tmp_path: Path) -> None:
    deep: Any = 1
    for _ in range(400):
        deep = {"add": [deep, 1]}
    steps = [*plain.tools[PAY].steps[:-1], {"return": deep}]
    made = _generate(shop_files, tmp_path, json.dumps({"steps": steps}))
    assert made.llm == {"does not load": 1, "declined": 1}
