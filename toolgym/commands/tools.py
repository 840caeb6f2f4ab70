"""`toolgym tools DOMAIN --format openai|anthropic|mcp`: a domain's tools as a JSON list."""

from __future__ import annotations

from typing import Annotated

import typer

from ..app import DomainArg, app, print_json

#: the forms `toolgym.env.tools.tool_list` writes (a test holds the two equal)
FORMATS = ("openai", "anthropic", "mcp")


def _check_format(value: str) -> str:
    if value not in FORMATS:
        raise typer.BadParameter(f"unknown format {value!r}: use one of {', '.join(FORMATS)}")
    return value


@app.command()
def tools(
    domain: DomainArg,
    form: Annotated[
        str,
        typer.Option(
            "--format",
            callback=_check_format,
            help="openai (Chat Completions `tools`), anthropic (Messages `tools`) or mcp (`tools/list`)",
        ),
    ] = "openai",
) -> None:
    """Print a domain's tools as a JSON list, ready to pass to a model API.

    openai: [{"type": "function", "function": {name, description, parameters}}]; anthropic:
    [{name, description, input_schema}]; mcp: [{name, description, inputSchema, annotations}],
    exactly what `toolgym serve` lists. The domain's own tools, plus `submit_answer` (the answer
    channel, which ends the episode) when the domain has tasks graded on answer facts.

    Example: toolgym tools bank --format anthropic
    """
    from scoring.tasks import load_domain

    from ..env.tools import ToolFormat, tool_list

    form_name: ToolFormat = form  # type: ignore[assignment]
    print_json(tool_list(load_domain(domain), form_name))
