"""Reading a transcript file as a stream: a line at a time, keeping only what scoring needs.

`open_transcript(path)` reads a file as `load_transcript` does (the same records, rollout and
errors) but never holds its calls: it reads the file in passes, and `StreamedCalls.play` replays
each call as it comes.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from simulator.serve import labels

from .replay import CallSeen
from .rollout import CallLog, Format, Record, Rollout, RolloutCall, transcript_error
from .transcripts import (
    FormatDetector,
    LineReader,
    is_meta,
    max_bytes_default,
    read_records,
    read_rollout,
    read_text,
    size_error,
)
from .trust import NAMED_REASONS

#: How many bytes one block of the file is (read, then checked against the first pass's digest).
BLOCK = 1 << 16


class StreamLog(CallLog):
    """A call log that keeps only the calls held open, telling `on_call` of each call as it is
    added and `on_final` once it is settled, or held to the end (`close`)."""

    def __init__(self, on_call: CallSeen, on_final: CallSeen):
        self.on_call, self.on_final = on_call, on_final
        self.count = 0
        self.open: dict[int, RolloutCall] = {}

    def __len__(self) -> int:
        return self.count

    def add(self, call: RolloutCall, hold: bool = False) -> None:
        index, self.count = self.count, self.count + 1
        self.on_call(index, call)
        if hold:
            self.open[index] = call
        else:
            self.on_final(index, call)

    def __getitem__(self, index: int) -> RolloutCall:
        return self.open[index]

    def is_open(self, index: int) -> bool:
        return index in self.open

    def settled(self, index: int) -> None:
        self.on_final(index, self.open.pop(index))

    def close(self) -> None:
        """The end of the transcript: every call still held is final as it stands."""
        for index in sorted(self.open):
            self.on_final(index, self.open.pop(index))


class _Snapshot(io.RawIOBase):
    """The first `size` bytes of an open file, block by block; a block that differs from what the
    first pass read (`digests`) raises TranscriptError."""

    def __init__(self, handle: IO[bytes], size: int, digests: list[bytes], source: str):
        self.handle, self.size, self.digests, self.source = handle, size, digests, source
        self.handle.seek(0)
        self.offset, self.block, self.at = 0, b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.at == len(self.block):
            if not self._next():
                return 0
        n = min(len(buffer), len(self.block) - self.at)
        buffer[:n] = self.block[self.at : self.at + n]
        self.at += n
        return n

    def _next(self) -> bool:
        want = min(BLOCK, self.size - self.offset)
        if want <= 0:
            return False
        block = self.handle.read(want)
        digest = hashlib.blake2b(block, digest_size=16).digest()
        number = self.offset // BLOCK
        if number == len(self.digests) and len(block) == want:
            self.digests.append(digest)
        elif number >= len(self.digests) or self.digests[number] != digest:
            raise transcript_error(
                self.source, "file", "changed while it was being scored (it was rewritten or cut short)"
            )
        self.offset += len(block)
        self.block, self.at = block, 0
        return True


class TranscriptFile:
    """A transcript file's records, read afresh for each pass: line by line (JSONL in a regular
    file) or from the whole file in memory (see the module docstring). `scan` is the first pass."""

    def __init__(self, path: Path, max_bytes: int | None = None):
        self.path, self.source = path, str(path)
        limit = max_bytes_default() if max_bytes is None else max_bytes
        self.handle: IO[bytes] | None = None
        self.records_in_memory: list[Record] | None = None
        self.meta: dict[str, Any] = {}
        self.skip_first = False  # the first record is the metadata line
        self.digests: list[bytes] = []
        try:
            status = path.stat()
            if status.st_size > limit:
                raise size_error(self.source, status.st_size, limit)
            if stat.S_ISREG(status.st_mode):
                self.handle = path.open("rb")
                self.size = status.st_size
        except OSError as exc:
            raise transcript_error(self.source, "file", f"cannot be read: {exc}") from None
        try:
            if self.handle is not None and not self._streams():
                self.close()
        except BaseException:
            self.close()
            raise
        if self.handle is None:
            self.records_in_memory, self.meta, _ = read_records(read_text(path, max_bytes), self.source)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None

    def _lines(self) -> Iterator[str]:
        """The file's lines without their newlines (universal newlines, as `read_text` reads)."""
        assert self.handle is not None
        raw = _Snapshot(self.handle, self.size, self.digests, self.source)
        text = io.TextIOWrapper(io.BufferedReader(raw, BLOCK), encoding="utf-8", newline=None)
        for line in text:
            yield line[:-1] if line.endswith("\n") else line

    def _streams(self) -> bool:
        """Whether the file is JSONL to stream: it decodes (else `read_text` says why it cannot be
        read), and its first non-blank line is a JSON value, not a list, with more lines after it
        (so the whole file is no JSON document; anything else is read whole, as before)."""
        assert self.handle is not None
        decoder = codecs.getincrementaldecoder("utf-8")()
        raw = _Snapshot(self.handle, self.size, self.digests, self.source)
        try:
            while block := raw.read(BLOCK):
                decoder.decode(block)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
        first: str | None = None
        for line in self._lines():
            if not line.strip():
                continue
            if first is not None:
                break
            first = line
        else:
            return False  # empty, or one line: `read_records` says which
        try:
            json.loads(first)
        except (ValueError, RecursionError):
            return False
        return not first.strip().startswith("[")

    def records(self) -> Iterator[Record]:
        """Every record after the metadata line (a fresh pass over the file)."""
        if self.records_in_memory is not None:
            found: Iterator[Record] = iter(self.records_in_memory)
        else:
            found = LineReader(self.source).records(self._lines())
        if self.skip_first:
            next(found, None)
        return found

    def scan(self) -> tuple[FormatDetector, set[int]]:
        """The first pass: every line read (raising at the first that is not JSON), the metadata
        line taken, the records shown to a format detector, and the call indexes void records name."""
        first = True
        detector = FormatDetector()
        targets: set[int] = set()
        for record in self.records():
            if first and is_meta(record.value):
                self.meta = {**record.value, **self.meta}
                self.skip_first = True
            else:
                detector.see(record)
                if record.value.get("type") == "void" and isinstance(record.value.get("index"), int):
                    targets.add(record.value["index"])
            first = False
        return detector, targets


class _Faults:
    """What the second pass keeps of the calls: the faulted ones."""

    def __init__(self) -> None:
        self.found: dict[int, RolloutCall] = {}

    def call(self, index: int, call: RolloutCall) -> None:
        pass

    def final(self, index: int, call: RolloutCall) -> None:
        if call.outcome == "fault":
            self.found[index] = call


class StreamedCalls:
    """The calls of a transcript file, read again for each play (`scoring.replay.Calls`)."""

    def __init__(self, file: TranscriptFile, fmt: Format, key: labels.Key | None, targets: set[int]):
        self.file, self.format, self.key, self.targets = file, fmt, key, targets
        self.count = 0
        self.faults: list[tuple[int, RolloutCall]] = []

    def read(self, on_call: CallSeen, on_final: CallSeen) -> Rollout:
        """One pass over the file: the rollout, with its calls told to `on_call` / `on_final`."""
        log = StreamLog(on_call, on_final)
        rollout = read_rollout(
            self.file.records(),
            self.file.meta,
            self.format,
            self.file.source,
            self.key,
            log=log,
            void_targets=self.targets,
            keep_reasons=NAMED_REASONS,
        )
        log.close()
        self.count = len(log)
        return rollout

    def play(self, on_call: CallSeen, on_final: CallSeen) -> None:
        self.read(on_call, on_final)

    def close(self) -> None:
        self.file.close()


def open_transcript(
    path: str | Path,
    format: Format | None = None,
    key: labels.Key | None = None,
    max_bytes: int | None = None,
) -> tuple[Rollout, StreamedCalls]:
    """A transcript file's rollout without its calls (`calls` is empty) and its calls to play.

    Reads, checks and errs exactly as `load_transcript(path, format, key, max_bytes)`; the file
    stays open for the plays until the calls are closed.
    """
    p = Path(path)
    if key is None:
        try:
            key = labels.find_key(p)
        except (OSError, ValueError) as exc:  # a key that is there but not the server's own
            raise transcript_error(str(p), "runs key", str(exc)) from None
    file = TranscriptFile(p, max_bytes)
    try:
        detector, targets = file.scan()
        fmt = format or detector.format(file.source)
        calls = StreamedCalls(file, fmt, key, targets)
        faults = _Faults()
        rollout = calls.read(faults.call, faults.final)
        calls.faults = sorted(faults.found.items())
    except BaseException:
        file.close()
        raise
    return rollout, calls
