"""The Typer app and the helpers every command shares (error exit, JSON output)."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

app = typer.Typer(
    name="toolgym",
    help="Synthetic tool environments for agents: SQLite-backed domains, compiled tools, MCP serving, state-diff scoring.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

DomainArg = Annotated[
    str, typer.Argument(help="a bundled domain's name (see `toolgym domains`) or a domain folder's path")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON for machines instead of a table")]


def fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
