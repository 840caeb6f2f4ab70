"""The toolgym JSONL reader: the server's own transcripts (header, call, message, void, resend and
end records) read into a rollout, what a record says of infrastructure believed only when the
server's signature on it verifies for this rollout.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from simulator.errors import ErrorKind
from simulator.runtime.transcript import CallRecord, EndRecord, HeaderRecord, MessageRecord, ResendRecord
from simulator.serve import labels

from .chat import Labels, say
from .rollout import (
    CallLog,
    Record,
    Rollout,
    RolloutCall,
    is_truncation,
    preview,
    read_arguments,
    transcript_error,
)


def _validated(model: type[BaseModel], record: Record, source: str | None, value: Any = None) -> Any:
    try:
        return model.model_validate(record.value if value is None else value)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise transcript_error(
            source, record.where, f"bad {preview(record.value.get('type'))} record: {loc}: {first['msg']}"
        ) from None


class _ToolgymReader:
    """Reads toolgym records, verifying the server's signatures as it goes.

    A signed record counts only with the header's session and task (which its signature covers)
    and, for a call, at its own place in the file. Records signed in the previous format count
    only under a header that verifies in that format (which binds their session to its task).
    """

    def __init__(
        self,
        source: str | None,
        checker: Labels,
        log: CallLog | None = None,
        void_targets: set[int] | None = None,
    ):
        self.source, self.checker = source, checker
        self.rollout = Rollout(format="toolgym", source=source)
        self.log = CallLog(self.rollout.calls) if log is None else log
        self.session: str | None = None
        self.task: str | None = None
        self.format: int | None = None  # the signed format of the header, if it verifies
        # the position of the last call of each recorded index that a void record may name
        # (`void_targets`: the indexes void records name; None: any)
        self.targets = void_targets
        self.by_index: dict[int, int] = {}
        self.ended_with: int | None = None  # the call count of a signed end record

    def header(self, record: Record) -> None:
        header: HeaderRecord = _validated(HeaderRecord, record, self.source)
        r = self.rollout
        r.domain, r.version, r.fingerprint = header.domain, header.version, header.fingerprint
        r.task, r.seed = header.task, header.seed
        # the server names a session after its transcript file
        self.session = header.session or (Path(self.source).stem if self.source else None)
        self.task = header.task
        signature = record.value.get("signature")
        if self.checker.signed(labels.header_fields(record.value), signature):
            self.format = labels.FORMAT
        elif self.checker.signed(labels.header_fields_v1(record.value), signature):
            self.format = 1
        elif signature is not None and self.checker.key is not None:
            r.distrusted.append(
                "the header's signature does not verify with the runs key (the header was changed, or "
                "another key signed it): the transcript is read as unsigned"
            )
        r.server_written = self.format is not None
        r.signed_domain = self.format == labels.FORMAT
        path = record.value.get("domain_path")
        r.domain_path = path if r.signed_domain and isinstance(path, str) else None
        if isinstance(path, str) and not r.signed_domain:
            r.distrusted.append(
                f"the header's domain_path {preview(path)} is not used: no signature of the server covers it"
            )
        r.session = self.session if r.server_written else None

    def _signed(self, kind: ErrorKind, index: int, tool: str, arguments: Any, signature: Any) -> bool:
        """Whether a call or void record's signature is the server's, for this rollout."""
        if self.session is None:
            return False
        if self.format == 1:
            return self.checker.signed(
                labels.call_fields_v1(self.session, index, tool, arguments, kind), signature
            )
        fields = labels.call_fields(self.session, index, tool, arguments, kind, self.task)
        return self.checker.signed(fields, signature)

    def _believe(self, position: int, tool: str, index: int, signed: bool) -> bool:
        if not signed:
            why = (
                "it does not verify with the runs key"
                if self.checker.key is not None
                else "no runs key was found or given to verify it"
            )
        elif index != position:
            why = f"its record names call index {index}, but it is call {position} of the file"
        else:
            self.checker.believed += 1
            return True
        self.checker.ignore(position, tool, why)
        return False

    def call(self, record: Record) -> None:
        value = record.value
        kind = ErrorKind.read(value.get("error_kind"))
        # the error kind is read here, not by the model: an unknown kind is the agent's error
        call: CallRecord = _validated(CallRecord, record, self.source, {**value, "error_kind": None})
        arguments, problem = read_arguments(call.arguments)
        rc = RolloutCall(
            name=call.tool,
            arguments=arguments,
            outcome="ok" if call.ok else "tool-error",
            error=problem or (None if call.ok else labels.strip_label(call.error or "")),
            malformed=problem,
            result=call.result,
            has_result=call.ok,
            where=record.where,
        )
        position = len(self.log)
        if not call.ok and kind is not None and kind.is_infra and problem is None:
            signed = self._signed(kind, call.index, call.tool, call.arguments, value.get("signature"))
            if self._believe(position, call.tool, call.index, signed):
                rc.outcome, rc.fault = "fault", kind
        elif problem is not None:
            rc.outcome = "tool-error"
        named = self.targets is None or call.index in self.targets
        if named:
            self.by_index[call.index] = position
        self.log.add(rc, hold=named)

    def void(self, record: Record) -> None:
        """A call recorded as done whose commit failed: it did not happen (never replayed)."""
        index = record.value.get("index")
        position = self.by_index.get(index) if isinstance(index, int) else None
        call = self.log[position] if position is not None else None
        if call is None or not isinstance(index, int):
            raise transcript_error(
                self.source, record.where, f"a void record for call {preview(index)}, which no call has"
            )
        signed = self._signed(
            ErrorKind.STORAGE, index, call.name, call.arguments, record.value.get("signature")
        )
        if not self._believe(index, call.name, index, signed):
            return  # only the server can say a recorded call did not happen
        reason = record.value.get("reason")
        call.voided = True
        call.error = f"the call was voided: {reason}" if isinstance(reason, str) else "the call was voided"
        call.outcome, call.fault = "fault", ErrorKind.STORAGE

    def end(self, record: Record) -> None:
        end: EndRecord = _validated(EndRecord, record, self.source)
        r = self.rollout
        r.digest = end.digest
        r.termination_reason = end.reason
        r.truncated = r.truncated or record.value.get("truncated") is True or is_truncation(end.reason)
        signature = record.value.get("signature")
        if self.session is None:
            signed = False
        elif self.format == 1:
            signed = self.checker.signed(labels.end_fields_v1(self.session, record.value), signature)
        else:
            signed = self.checker.signed(labels.end_fields(self.session, record.value, self.task), signature)
        self.ended_with = end.calls if signed else None

    def read(self, records: Iterable[Record]) -> Rollout:
        for record in records:
            kind = record.value.get("type")
            if kind == "header":
                self.header(record)
            elif kind == "call":
                self.call(record)
            elif kind == "message":
                message: MessageRecord = _validated(MessageRecord, record, self.source)
                if message.role == "assistant":
                    say(self.rollout, message.content, final=True)
            elif kind == "void":
                self.void(record)
            elif kind == "resend":  # answered from the record, not run again: not a call
                _validated(ResendRecord, record, self.source)
            elif kind == "end":
                self.end(record)
            else:
                raise transcript_error(
                    self.source,
                    record.where,
                    f"unknown record type {preview(kind)} (expected header, call, message, void, resend, end)",
                )
        # complete: a signed end record whose call count is the number of calls in the file
        r = self.rollout
        r.complete = not r.server_written or self.ended_with == len(self.log)
        if self.checker.believed:  # the labels are bound to the header's task
            self.checker.task = self.task
        return self.rollout


def read_toolgym(
    records: Iterable[Record], source: str | None, checker: Labels, log: CallLog | None = None
) -> Rollout:
    return _ToolgymReader(source, checker, log).read(records)
