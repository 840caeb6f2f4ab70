"""The README's OpenEnv snippet runs as written: its serve command (on a free port) in a
subprocess, then its Python client code against it."""

from __future__ import annotations

import contextlib
import io
import shlex
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("openenv.core", reason="the openenv extra is not installed: pip install -e '.[openenv]'")

from tests.conftest import ROOT  # noqa: E402
from tests.test_env_api_readme import section_blocks  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_the_openenv_snippet_runs_against_the_served_domain() -> None:
    (command,) = section_blocks("### OpenEnv", "bash")
    (snippet,) = section_blocks("### OpenEnv", "python")
    port = _free_port()
    argv = shlex.split(command.strip().removesuffix("&").replace("8000", str(port)))
    assert argv[:3] == ["python", "-m", "toolgym.adapters.openenv"]
    server = subprocess.Popen([sys.executable, *argv[1:]], cwd=ROOT, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline, "the OpenEnv server did not start"
            time.sleep(0.1)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(snippet.replace("8000", str(port)), "README.md", "exec"), {"__name__": "snippet"})
        assert printed.getvalue().split() == ["1.0", "1.0"]
    finally:
        server.terminate()
        server.wait(10)
