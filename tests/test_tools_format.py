"""`toolgym tools DOMAIN --format`: one formatter (toolgym.env.tools) for the CLI, the environment
API and the adapters; its MCP form is exactly what the MCP server lists."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from fastmcp import Client
from typer.testing import CliRunner

from scoring import load_domain
from simulator import Domain
from simulator.serve.server import DomainServer
from toolgym.cli import app
from toolgym.env.tools import FORMATS, has_answer_tasks, mcp_tools, tool_list

runner = CliRunner()
BUNDLED = ["bank", "office", "logistics", "tau2-retail"]


async def _served(domain: Domain) -> list[dict[str, Any]]:
    async with Client(DomainServer(domain).mcp) as client:
        listed = await client.list_tools()
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]


@pytest.mark.parametrize("name", BUNDLED)
def test_the_mcp_form_is_what_the_server_lists(name: str) -> None:
    domain = load_domain(name)
    assert has_answer_tasks(domain)  # every bundled domain grades some answers: submit_answer listed
    assert mcp_tools(domain) == asyncio.run(_served(domain))


def test_openai_and_anthropic_forms_carry_the_same_tools(shop: Domain) -> None:
    mcp = tool_list(shop, "mcp")
    openai = tool_list(shop, "openai")
    anthropic = tool_list(shop, "anthropic")
    assert (
        [t["function"]["name"] for t in openai] == [t["name"] for t in anthropic] == [t["name"] for t in mcp]
    )
    for o, a, m in zip(openai, anthropic, mcp, strict=True):
        assert o == {
            "type": "function",
            "function": {"name": m["name"], "description": m["description"], "parameters": m["inputSchema"]},
        }
        assert a == {"name": m["name"], "description": m["description"], "input_schema": m["inputSchema"]}
        assert set(m) == {"name", "description", "inputSchema", "annotations"}


def test_submit_answer_only_where_tasks_grade_answers(shop: Domain) -> None:
    names = [t["name"] for t in tool_list(shop, "mcp", answer=False)]
    assert names == list(shop.tools)
    no_facts = dataclasses.replace(
        shop, tasks=[t.model_copy(update={"answer_facts": []}) for t in shop.tasks]
    )
    assert not has_answer_tasks(no_facts)
    assert [t["name"] for t in tool_list(no_facts, "mcp")] == list(shop.tools)


@pytest.mark.parametrize("form", FORMATS)
def test_the_cli_prints_the_json_list(form: str) -> None:
    result = runner.invoke(app, ["tools", "bank", "--format", form])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == tool_list(load_domain("bank"), form)  # type: ignore[arg-type]


def test_a_bad_format_is_one_usage_error_line() -> None:
    result = runner.invoke(app, ["tools", "bank", "--format", "xml"])
    assert result.exit_code == 2
    assert "unknown format 'xml'" in result.output and "Traceback" not in result.output
