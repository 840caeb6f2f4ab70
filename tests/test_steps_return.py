"""`return` ends an operation or a fragment wherever it stands: as its last step (evaluated in place),
inside a `when`, or inside a `for_each`; what follows it never runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scoring import load_domain
from simulator import Domain
from tests.test_language import make, tool

FRAGMENTS = {
    "pay": {
        "params": ["who"],
        "steps": [
            {"get": "people", "key": {"id": "$who"}, "as": "p"},
            {"return": {"object": {"name": "$p.name", "pay": "$p.salary"}}},
        ],
    }
}


@pytest.fixture(scope="module")
def domain(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    tools = [
        tool(
            "early",
            [
                {"let": "x", "value": 1},
                {"return": "$args.flag", "when": "$args.flag"},
                {
                    "for_each": ["a", "b", "c"],
                    "as": "v",
                    "steps": [{"return": "$v", "when": {"eq": ["$v", "b"]}}],
                },
                {"return": "never"},
            ],
            props={"flag": {"type": ["string", "null"]}},
        ),
        tool(
            "tail",
            [{"use": "pay", "with": {"who": "$args.who"}, "as": "r"}, {"return": ["$r", "$r.pay"]}],
            props={"who": {"type": "string"}},
        ),
    ]
    folder = Path(tmp_path_factory.mktemp("ret"))
    make(folder, tools[:1])  # the tables and seed rows; then the fragment and the tool using it
    spec = yaml.safe_load((folder / "lang" / "domain.yaml").read_text())
    (folder / "lang" / "domain.yaml").write_text(
        yaml.safe_dump({**spec, "fragments": FRAGMENTS, "tools": tools})
    )
    return load_domain(folder / "lang")


def test_a_return_inside_when_or_for_each_ends_the_operation(domain: Domain) -> None:
    with domain.episode() as ep:
        assert ep.call("early", {"flag": "stop"}) == "stop"
        assert ep.call("early", {}) == "b"


def test_a_last_return_gives_its_value_in_fragments_and_tools(domain: Domain) -> None:
    with domain.episode() as ep:
        assert ep.call("tail", {"who": "P-2"}) == [{"name": "Bo", "pay": 50.5}, 50.5]
