"""One error-kind vocabulary, and the error tree it belongs to.

`ErrorKind` is the only spelling of a kind: the transcript schema, the episode's records, the
server's labels, metrics and scoring all take it from there. `InfraError` is a sibling of
`ToolError` (an `except ToolError` never catches the server's own failures), and session-level
refusals are `SessionError`s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.curation.metrics import ERROR_KINDS, collect
from scoring.rollout import TRANSIENT_FAULTS
from simulator.errors import (
    INFRA_KINDS,
    CallFailed,
    CallTimeout,
    CapacityError,
    ErrorKind,
    InfraError,
    OperationError,
    SessionError,
    StorageError,
    ToolError,
    ToolgymError,
    WorkLimitError,
)
from simulator.runtime.transcript import CallRecord
from simulator.serve.labels import SIGNED, Key, label_token, read_label


def test_the_vocabulary_and_its_properties() -> None:
    assert [k.value for k in ErrorKind] == [
        "tool",
        "injected",
        "timeout",
        "capacity",
        "storage",
        "infra",
        "internal",
    ]
    assert [k for k in ErrorKind if not k.is_infra] == [ErrorKind.TOOL]
    assert INFRA_KINDS == tuple(k for k in ErrorKind if k is not ErrorKind.TOOL)
    assert SIGNED == set(INFRA_KINDS) - {ErrorKind.INTERNAL}  # a bug is never labelled
    assert TRANSIENT_FAULTS == {ErrorKind.INJECTED, ErrorKind.TIMEOUT}
    assert ERROR_KINDS == tuple(ErrorKind)
    assert ErrorKind.read("timeout") is ErrorKind.TIMEOUT
    assert ErrorKind.read("nonsense") is None and ErrorKind.read(3) is None and ErrorKind.read(None) is None
    # the transcript schema takes its kinds from the same enum
    schema = CallRecord.model_json_schema()
    assert schema["$defs"]["ErrorKind"]["enum"] == [k.value for k in ErrorKind]


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ToolError("bad"), ErrorKind.TOOL),
        (OperationError("t", ZeroDivisionError()), ErrorKind.TOOL),
        (WorkLimitError("1 step", 1), ErrorKind.TOOL),
        (InfraError("down"), ErrorKind.INFRA),
        (InfraError("fault", injected=True), ErrorKind.INJECTED),
        (CallTimeout(1.0), ErrorKind.TIMEOUT),
        (StorageError("disk full"), ErrorKind.STORAGE),
        (CapacityError("full"), ErrorKind.CAPACITY),
    ],
)
def test_infra_errors_are_siblings_of_tool_errors(error: ToolgymError, kind: ErrorKind) -> None:
    assert error.kind is kind  # type: ignore[attr-defined]
    assert isinstance(error, CallFailed)
    assert isinstance(error, ToolError) is (not kind.is_infra)
    assert isinstance(error, InfraError) is kind.is_infra


def test_session_errors_are_their_own() -> None:
    assert issubclass(SessionError, ToolgymError)
    assert not issubclass(SessionError, ToolError | InfraError)


def test_metrics_count_by_the_same_kinds(tmp_path: Path) -> None:
    """Metrics count every kind of the vocabulary; a kind outside it is the agent's (`tool`)."""
    records = [{"type": "header", "domain": "d", "version": "1", "seed": 0}]
    for i, kind in enumerate([*ErrorKind, "bogus"]):
        records.append(
            {"type": "call", "index": i, "tool": "t", "arguments": {}, "ok": False, "error_kind": kind}
        )
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (session,) = collect(tmp_path)["sessions"]
    assert session["errors"] == {**dict.fromkeys(ErrorKind, 1), ErrorKind.TOOL: 2}
    (domain,) = collect(tmp_path)["domains"]
    assert domain["infra_error_rate"] == round(len(INFRA_KINDS) / len(records[1:]), 6)


def test_a_label_of_an_unknown_kind_never_verifies() -> None:
    key = Key.generate()
    good = read_label("x " + label_token(key, "s", 0, "t", {}, ErrorKind.STORAGE))
    assert good is not None and good.verify(key, "t", {})
    forged = read_label("x " + label_token(key, "s", 0, "t", {}, "bogus"))
    assert forged is not None and not forged.verify(key, "t", {})


def test_the_cli_tells_the_agents_errors_from_the_environments() -> None:
    from toolgym.app import describe

    assert describe(ToolError("No customer C-9.")) == "tool error: No customer C-9."
    assert describe(CallTimeout(2.0)).startswith("infrastructure error (timeout): The call took longer")
    assert describe(SessionError("Invalid seed 'x'.")) == "Invalid seed 'x'."
