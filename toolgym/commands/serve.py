"""Serving commands: serve (a domain over MCP), stats (metrics from transcripts)."""

from __future__ import annotations

import errno
import logging
import os
import socket
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ..app import DomainArg, JsonOpt, app, choice, disposable, err, fail, out, output_dir, print_json

if TYPE_CHECKING:  # imported when serving, after fastmcp's settings are in the environment
    from simulator.serve.server import DomainServer
    from simulator.serve.serving import ServeConfig


#: the --log-level values (`logging`'s level names, in lower case)
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

_log_level = choice(*LOG_LEVELS)


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


@app.command()
def serve(
    domain: DomainArg,
    task: Annotated[
        str | None, typer.Option(help="the task of every session (HTTP clients may pick one with ?task=ID)")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="episode seed (HTTP: ?seed=N); default: the task's seed, else 0")
    ] = None,
    transport: Annotated[Transport, typer.Option(help="stdio, or streamable HTTP")] = Transport.stdio,
    host: Annotated[str, typer.Option(help="HTTP address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="HTTP port (0: any free port)")] = 8000,
    runs: Annotated[
        Path,
        typer.Option(callback=output_dir, help="folder of the transcripts, one `RUNS/<session>.jsonl` each"),
    ] = Path("runs"),
    fault_rate: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="fraction of calls failed with an injected transient error"),
    ] = 0.0,
    fault_seed: Annotated[int, typer.Option(help="seed of the injected faults")] = 0,
    latency_ms: Annotated[float, typer.Option(min=0.0, help="delay added to every tool call (ms)")] = 0.0,
    idle_timeout: Annotated[
        float, typer.Option(min=0.0, help="end HTTP sessions idle this many seconds (0: never)")
    ] = 1800.0,
    handshake_timeout: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="close HTTP connections that have no session this many seconds after connecting (0: never)",
        ),
    ] = 300.0,
    header_timeout: Annotated[
        float, typer.Option(min=0.01, help="close HTTP connections slower to send a request's headers (s)")
    ] = 10.0,
    body_timeout: Annotated[
        float, typer.Option(min=0.01, help="close HTTP connections slower to send a request's body (s)")
    ] = 30.0,
    max_sessions: Annotated[
        int, typer.Option(min=1, help="limit on live sessions (an HTTP connection counts from its handshake)")
    ] = 1024,
    max_sessions_per_client: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="limit on one client's live sessions (a client: its address); default: --max-sessions "
            "on a loopback --host, else an eighth of it",
        ),
    ] = None,
    max_connections: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="limit on open HTTP connections (one more is answered 503 and closed); default: "
            "--max-sessions + 32",
        ),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(help="a browser Origin to accept besides localhost ones (repeatable; '*' for any)"),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="a Host header to accept besides localhost and the bound address (repeatable)"),
    ] = None,
    max_body_bytes: Annotated[
        int, typer.Option(min=1024, help="limit on one HTTP request body, in bytes")
    ] = 1024 * 1024,
    error_backoff_ms: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="after 4 tool errors in a row, a session's calls wait this long, doubling per error "
            "(at most 1 s; 0: never)",
        ),
    ] = 10.0,
    fsync: Annotated[
        bool, typer.Option(help="fsync the transcript after every call (survives power loss)")
    ] = False,
    log_level: Annotated[
        str,
        typer.Option(
            callback=lambda value: _log_level(value.lower()),
            help="server log level (logs go to stderr): " + ", ".join(LOG_LEVELS),
        ),
    ] = "warning",
    manifest: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="serve only the tasks this validated manifest lists (`toolgym validate --manifest-dir`)",
        ),
    ] = None,
) -> None:
    """Serve a domain over MCP: one isolated episode per MCP session, every call in a transcript.

    Over HTTP the endpoint is http://HOST:PORT/mcp; a client may add ?task=ID&seed=N, and
    ?session=ID to name its session (needed only by clients of the stateless 2026-07-28
    protocol that pin it: the first result's _meta["toolgym/handle"] must then be passed back
    as &handle=; other clients get a session of their own automatically). Besides the domain's
    tools, agents get submit_answer, which records their final answer and ends the session.
    Transcripts go to `RUNS/<session>.jsonl`, flushed after every call; the server signs what only
    it can say (infrastructure faults, the header, the end) with the key RUNS/.toolgym-key.
    Host and Origin headers must be localhost's unless allowed (--allow-host, --allow-origin).

    Example: toolgym serve bank --transport http --port 8000 --task bank-001 --runs runs
    """
    from simulator.serve.labels import KEY_FILE
    from simulator.serve.serving import ServeConfig

    os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")  # no network, ever
    os.environ.setdefault("FASTMCP_LOG_LEVEL", log_level.upper())
    level = logging.getLevelNamesMapping()[log_level.upper()]
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("toolgym").setLevel(level)

    config = ServeConfig(
        task=task,
        seed=seed,
        runs=runs,
        fault_rate=fault_rate,
        fault_seed=fault_seed,
        latency_ms=latency_ms,
        idle_timeout=idle_timeout or None,
        handshake_timeout=handshake_timeout or None,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        max_sessions=max_sessions,
        max_sessions_per_client=max_sessions_per_client,
        max_connections=max_connections,
        durable=fsync,
        allow_origins=tuple(allow_origin or ()),
        allow_hosts=tuple(allow_host or ()),
        max_body_bytes=max_body_bytes,
        error_backoff_ms=error_backoff_ms,
    )
    new_key = not (runs / KEY_FILE).exists()
    server = _server(domain, config, manifest)
    if new_key:  # made for this server: worthless if it never serves
        disposable(runs / KEY_FILE)
    d = server.domain
    if transport is Transport.http:
        port = _bindable(host, port)
    where = f"http://{host}:{port}/mcp" if transport is Transport.http else "stdio"
    err.print(
        f"serving {d.ref} ({d.fingerprint()}) on {where}; transcripts in {runs}/",
        highlight=False,
        soft_wrap=True,
    )
    try:
        server.run(transport.value, host=host, port=port, own_process=True)  # this process only serves
    except KeyboardInterrupt:  # pragma: no cover - interactive stop
        pass
    except SystemExit as exc:  # uvicorn exits after logging a failure to start (e.g. a port taken since)
        if exc.code:
            raise fail(f"the server on {where} stopped: see the error logged above") from None


def _server(ref: str, config: ServeConfig, manifest: Path | None) -> DomainServer:
    """The server of a domain: the grading side reads the manifest (the domain must be the validated
    one) and the server is told only the ids of the tasks that passed. The loaded domain, gold calls
    and all, is not kept: the server holds task views and a domain without tasks."""
    from scoring.validation.manifest import load_manifest
    from simulator import load_domain
    from simulator.serve.server import DomainServer

    domain = load_domain(ref)
    if manifest is not None:
        validated = load_manifest(manifest)
        validated.check(domain, config.task)
        config = config.with_options(tasks=validated.valid_tasks)
    return DomainServer(domain, config)


def _bindable(host: str, port: int) -> int:
    """Check that host:port can be listened on before announcing it; port 0 picks a free port."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: unknown host ({exc.strerror or exc})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            hint = ": another process holds it; pick another --port" if exc.errno == errno.EADDRINUSE else ""
            raise fail(f"cannot listen on {host}:{port}: {reason}{hint}") from None
        return int(probe.getsockname()[1]) if port == 0 else port


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


@app.command()
def stats(
    runs: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="a folder of transcripts (RUNS/*.jsonl)")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Print serving metrics computed from the transcripts in RUNS: per domain and per session.

    Calls, errors by kind (tool: the agent's mistake; injected: a fault the server injected;
    infra and internal: real failures), and percentiles of the tool-call latency in microseconds.

    Example: toolgym stats runs --json
    """
    from scoring.curation.metrics import collect

    report = collect(runs)
    if as_json:
        print_json(report)
        return
    out.print(_table("domains", report["domains"], "domain", extra=("sessions", "infra_error_rate")))
    out.print(_table("sessions", report["sessions"], "session", extra=("task",)))


def _table(title: str, rows: list[dict[str, Any]], key: str, extra: tuple[str, ...]) -> Table:
    from scoring.curation.metrics import ERROR_KINDS

    table = Table(title=title, title_justify="left")
    table.add_column(key)
    for col in extra:
        table.add_column(col.replace("_", " "), justify="right" if col != "task" else "left")
    for col in ("calls", "ok", *ERROR_KINDS, "p50 us", "p90 us", "p99 us"):
        table.add_column(col, justify="right")
    for r in rows:
        cells = [str(r[key])]
        for col in extra:
            value = r.get(col)
            cells.append(f"{value:.2%}" if col.endswith("rate") else str(value if value is not None else "-"))
        cells += [str(r["calls"]), str(r["ok"])]
        cells += [str(r["errors"].get(kind, 0)) for kind in ERROR_KINDS]
        cells += [_us(r["latency"][f"p{p}_us"]) for p in (50, 90, 99)]
        table.add_row(*cells)
    return table
