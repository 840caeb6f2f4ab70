"""The README's "Train with it" snippets run as written: the environment API's here, OpenEnv's in
tests/test_openenv_readme.py (and verifiers' in tests/test_verifiers_readme.py)."""

from __future__ import annotations

import contextlib
import io
import re

from tests.conftest import ROOT

README = ROOT / "README.md"


def section_blocks(heading: str, language: str) -> list[str]:
    """The fenced `language` code blocks of the README section under `heading` (up to the next heading)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    nxt = re.search(r"\n#{2,3} ", text[start + len(heading) + 2 :])
    body = text[start : start + len(heading) + 2 + nxt.start()] if nxt else text[start:]
    return re.findall(rf"```{language}\n(.*?)```", body, flags=re.S)


def test_the_environment_api_snippet_runs_and_scores_one() -> None:
    (snippet,) = section_blocks("### The environment API (any RL loop)", "python")
    printed = io.StringIO()
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(printed):
        exec(compile(snippet, "README.md", "exec"), namespace)
    lines = printed.getvalue().splitlines()
    assert lines[0].startswith("Error: ")  # the tool error, as the model reads it
    assert lines[1].startswith("1.0 1.0 Reward 1.0")
