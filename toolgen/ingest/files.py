"""Reading inputs: files, folders and `.tar.gz` archives, with bounds, in worker processes.

Files over `max_file_bytes` are refused unread; archives are unpacked, streaming and bounded, into
a private temporary folder, refusing unsafe members. With `workers` > 0 files are read in worker
processes, and one stuck past `timeout_s` is killed and replaced. Results are sorted by source
then pointer, so they do not depend on the worker count. Files that hold no API spec are counted
(`not_specs`), or with `require_specs` reported as failures.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from toolgen.ingest.functions import read_tools
from toolgen.ingest.openapi import read_openapi, spec_format
from toolgen.ingest.refs import Sibling
from toolgen.ingest.yamlload import ParseError, parse_bytes
from toolgen.model import FailedFile, RawOperation

DATA_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
MiB = 1024 * 1024
MAX_FILE_BYTES = 64 * MiB
MAX_MEMBERS = 100_000
MAX_ARCHIVE_BYTES = 4 * 1024 * MiB
#: The reason of a named file that holds no API spec starts with this (then ": " and why).
NOT_A_SPEC = "not an API spec"
_TOOL_SHAPE = "a tool is an object with a `name` and `parameters`, `input_schema` or `inputSchema`"


@dataclass
class FileResult:
    """What reading one file gave: its kind (`spec`, `not a spec`, `failed`), operations, problems."""

    source: str
    kind: str
    operations: list[RawOperation] = field(default_factory=list)
    failure: FailedFile | None = None
    problems: list[FailedFile] = field(default_factory=list)
    why: str = ""
    """Why a `not a spec` file is not one."""


@dataclass
class IngestStats:
    files: int = 0
    specs: int = 0
    not_specs: int = 0
    failed: int = 0
    operations: int = 0
    seconds: float = 0.0
    ops_per_file: dict[str, int] = field(default_factory=dict)
    problems: list[FailedFile] = field(default_factory=list)
    """Problems inside files that were read: an unresolved `$ref` of one operation, a parameter skipped."""


def read_one(source: str, data: bytes, sibling: Sibling | None = None) -> FileResult:
    """Read one file's bytes; never raises for bad input (the failure is in the result)."""
    try:
        fmt, doc = parse_bytes(source, data)
    except ParseError as exc:
        return FileResult(source, "failed", failure=FailedFile(path=source, reason=str(exc)))
    try:
        flavour = spec_format(doc) if fmt != "jsonl" else None
        if flavour is not None:
            ops, problems = read_openapi(source, doc, flavour, sibling)
            return FileResult(
                source, "spec", ops,
                problems=[FailedFile(path=f"{source}#{ptr}", reason=msg) for ptr, msg in problems],
            )  # fmt: skip
        ops = read_tools(source, fmt, doc)
    except RecursionError:
        return FileResult(
            source, "failed", failure=FailedFile(path=source, reason="nested too deeply to read")
        )
    if not ops:
        return FileResult(source, "not a spec", why=_why_not_a_spec(fmt, doc))
    return FileResult(source, "spec", ops)


def _why_not_a_spec(fmt: str, doc: Any) -> str:
    """Why a parsed document holds no API spec, in a few words."""
    if fmt == "jsonl":
        return f"{len(doc)} JSON lines, none holding a tool ({_TOOL_SHAPE})"
    if isinstance(doc, dict):
        if "swagger" in doc:
            return f"Swagger {doc['swagger']} is not read (Swagger 2.0 and OpenAPI 3 are)"
        if not doc:
            return "an empty object"
        keys = ", ".join(str(k) for k in list(doc)[:5]) + (", …" if len(doc) > 5 else "")
        return f"an object with no `openapi` or `swagger` version and no tools in it (keys: {keys})"
    if isinstance(doc, list):
        return f"a list of {len(doc)} items, none of them a tool ({_TOOL_SHAPE})"
    if doc is None:
        return "the file is empty"
    return f"a single {type(doc).__name__} value, not an object or a list of tools"


def read_file(
    name: str, data: bytes, sibling: Sibling | None = None
) -> tuple[list[RawOperation], list[FailedFile]]:
    """One file's operations and its failures: the file's own, or its problems (`name#pointer`)."""
    result = read_one(name, data, sibling)
    return result.operations, ([result.failure] if result.failure else []) + result.problems


def _disk_sibling(entry: Path, root: Path, max_bytes: int) -> Sibling:
    """Reads files relative to `entry`'s folder, never outside `root`, at most `max_bytes`."""
    base = entry.parent
    root = root.resolve()

    def sibling(rel: str) -> bytes | None:
        target = (base / rel).resolve()
        if not target.is_relative_to(root) or not target.is_file() or target.stat().st_size > max_bytes:
            return None
        return target.read_bytes()

    return sibling


@dataclass(frozen=True)
class _Task:
    disk: str
    source: str
    root: str
    max_bytes: int
    named: bool = False
    """Named in `paths` with `require_specs`: holding no spec is a failure."""


def _run_task(task: _Task) -> FileResult:
    path = Path(task.disk)
    try:
        size = path.stat().st_size
        if size > task.max_bytes:
            reason = f"file is {size:,} bytes, over the {task.max_bytes:,}-byte limit"
            return FileResult(task.source, "failed", failure=FailedFile(path=task.source, reason=reason))
        data = path.read_bytes()
    except OSError as exc:
        return FileResult(
            task.source, "failed", failure=FailedFile(path=task.source, reason=f"unreadable: {exc}")
        )
    result = read_one(task.source, data, _disk_sibling(path, Path(task.root), task.max_bytes))
    if task.named and result.kind == "not a spec":
        failure = FailedFile(path=task.source, reason=f"{NOT_A_SPEC}: {result.why}")
        return FileResult(task.source, "failed", failure=failure)
    return result


def _worker(conn: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        index, job = task
        try:
            result = _run_task(job)
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the others
            reason = f"could not be read: {type(exc).__name__}: {exc}"
            result = FileResult(job.source, "failed", failure=FailedFile(path=job.source, reason=reason))
        conn.send((index, result))


class _Timeout(Exception):
    pass


def _timeout_result(task: _Task, timeout_s: float) -> FileResult:
    reason = f"reading took longer than {timeout_s:g} s: stopped"
    return FileResult(task.source, "failed", failure=FailedFile(path=task.source, reason=reason))


def _serial(tasks: list[_Task], timeout_s: float, done: Callable[[FileResult], None]) -> None:
    import threading

    alarm = threading.current_thread() is threading.main_thread() and timeout_s > 0

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm) if alarm else None
    try:
        for task in tasks:
            try:
                if alarm:
                    signal.setitimer(signal.ITIMER_REAL, timeout_s)
                result = _run_task(task)
            except _Timeout:
                result = _timeout_result(task, timeout_s)
            except Exception as exc:  # noqa: BLE001 - one bad file never stops the others
                reason = f"could not be read: {type(exc).__name__}: {exc}"
                result = FileResult(
                    task.source, "failed", failure=FailedFile(path=task.source, reason=reason)
                )
            finally:
                if alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            done(result)
    finally:
        if alarm:
            signal.signal(signal.SIGALRM, previous)


class _Pool:
    """Worker processes fed one file at a time; a worker past its deadline is killed and replaced."""

    def __init__(self, size: int):
        self.ctx = multiprocessing.get_context("fork")
        self.workers: list[tuple[Any, Connection]] = [self._spawn() for _ in range(size)]

    def _spawn(self) -> tuple[Any, Connection]:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        proc.start()
        child.close()
        return proc, parent

    def run(self, tasks: list[_Task], timeout_s: float, done: Callable[[FileResult], None]) -> None:
        pending = list(enumerate(tasks))
        pending.reverse()
        busy: dict[int, tuple[int, float]] = {}  # worker slot -> (task index, deadline)
        while pending or busy:
            for slot in range(len(self.workers)):
                if slot not in busy and pending:
                    index, task = pending.pop()
                    self.workers[slot][1].send((index, task))
                    busy[slot] = (index, time.monotonic() + timeout_s)
            conns = {self.workers[slot][1]: slot for slot in busy}
            next_deadline = min(deadline for _, deadline in busy.values())
            ready = wait(list(conns), timeout=max(0.0, next_deadline - time.monotonic()))
            for ready_conn in ready:
                slot = conns[ready_conn]  # type: ignore[index]
                try:
                    result: FileResult = self.workers[slot][1].recv()[1]
                except (EOFError, OSError):
                    index = busy[slot][0]
                    reason = "the worker reading it died"
                    result = FileResult(tasks[index].source, "failed",
                                        failure=FailedFile(path=tasks[index].source, reason=reason))  # fmt: skip
                    self._replace(slot)
                del busy[slot]
                done(result)
            now = time.monotonic()
            for slot, (index, deadline) in list(busy.items()):
                if now >= deadline:
                    self._replace(slot)
                    del busy[slot]
                    done(_timeout_result(tasks[index], timeout_s))

    def _replace(self, slot: int) -> None:
        proc, conn = self.workers[slot]
        proc.kill()
        proc.join()
        conn.close()
        self.workers[slot] = self._spawn()

    def close(self) -> None:
        for _proc, conn in self.workers:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc, conn in self.workers:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
            conn.close()


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.lower().endswith(DATA_SUFFIXES):
                yield Path(root) / name


def _unpack(archive: Path, into: Path, max_members: int, max_archive_bytes: int,
            max_file_bytes: int, failed: list[FailedFile]) -> list[_Task]:  # fmt: skip
    """Stream `archive`'s data files into `into`; refuse bombs, links and climbing names."""
    tasks: list[_Task] = []
    members = 0
    total = 0
    try:
        with tarfile.open(archive, "r|*") as tar:
            for member in tar:
                members += 1
                total += max(member.size, 0)
                if members > max_members:
                    failed.append(FailedFile(path=str(archive), reason=f"more than {max_members:,} members: "
                                             "the rest of the archive is not read"))  # fmt: skip
                    break
                if total > max_archive_bytes:
                    failed.append(FailedFile(path=str(archive), reason=f"members add up to more than "
                                             f"{max_archive_bytes:,} bytes: the rest is not read"))  # fmt: skip
                    break
                name = member.name.removeprefix("./")
                source = f"{archive}!{name}"
                if not name.lower().endswith(DATA_SUFFIXES) or member.isdir():
                    continue
                parts = Path(name).parts
                if name.startswith("/") or ".." in parts or not parts:
                    failed.append(
                        FailedFile(path=source, reason="member path leaves the archive: not extracted")
                    )
                    continue
                if not member.isfile():
                    failed.append(FailedFile(path=source, reason="member is a link or device: not extracted"))
                    continue
                if member.size > max_file_bytes:
                    reason = f"member is {member.size:,} bytes, over the {max_file_bytes:,}-byte limit"
                    failed.append(FailedFile(path=source, reason=reason))
                    continue
                target = into / name
                target.parent.mkdir(parents=True, exist_ok=True)
                stream = tar.extractfile(member)
                if stream is None:
                    continue
                target.write_bytes(stream.read())
                tasks.append(_Task(str(target), source, str(into), max_file_bytes))
    except (tarfile.TarError, OSError, EOFError) as exc:
        failed.append(
            FailedFile(path=str(archive), reason=f"unreadable archive: {type(exc).__name__}: {exc}")
        )
    return tasks


def read_paths(
    paths: list[str | Path],
    *,
    workers: int = 0,
    timeout_s: float = 30,
    max_file_bytes: int = MAX_FILE_BYTES,
    max_members: int = MAX_MEMBERS,
    max_archive_bytes: int = MAX_ARCHIVE_BYTES,
    progress: Callable[[int, int], None] | None = None,
    require_specs: bool = False,
) -> tuple[list[RawOperation], list[FailedFile], IngestStats]:
    """Read files, folders and .tar.gz archives: operations, files that failed, and counts.

    `progress(done, total)` is called after each file. Output order is by source then pointer.
    With `require_specs`, a file named in `paths` that holds no API spec fails (`NOT_A_SPEC`).
    """
    started = time.monotonic()
    failed: list[FailedFile] = []
    tasks: list[_Task] = []
    with tempfile.TemporaryDirectory(prefix="toolgen-ingest-") as scratch:
        for number, raw in enumerate(paths):
            path = Path(raw)
            if path.is_dir():
                tasks.extend(_Task(str(p), str(p), str(path), max_file_bytes) for p in _walk(path))
            elif path.name.lower().endswith((".tar.gz", ".tgz", ".tar")):
                into = Path(scratch) / str(number)
                into.mkdir()
                tasks.extend(_unpack(path, into, max_members, max_archive_bytes, max_file_bytes, failed))
            elif path.is_file():
                tasks.append(_Task(str(path), str(path), str(path.parent), max_file_bytes, require_specs))
            else:
                failed.append(FailedFile(path=str(path), reason="no such file or folder"))
        stats = IngestStats(files=len(tasks) + len({f.path for f in failed if "!" in f.path}))
        operations: list[RawOperation] = []

        def done(result: FileResult) -> None:
            if result.failure is not None:
                failed.append(result.failure)
                stats.failed += 1
            elif result.kind == "spec":
                stats.specs += 1
            else:
                stats.not_specs += 1
            stats.ops_per_file[result.source] = len(result.operations)
            operations.extend(result.operations)
            stats.problems.extend(result.problems)
            if progress is not None:
                progress(stats.specs + stats.not_specs + stats.failed, len(tasks))

        if workers > 0 and len(tasks) > 1:
            pool = _Pool(min(workers, len(tasks)))
            try:
                pool.run(tasks, timeout_s, done)
            finally:
                pool.close()
        else:
            _serial(tasks, timeout_s, done)
    operations.sort(key=lambda op: (op.source, op.pointer))
    failed.sort(key=lambda f: f.path)
    stats.problems.sort(key=lambda f: f.path)
    stats.failed = len(failed)
    stats.operations = len(operations)
    stats.seconds = time.monotonic() - started
    return operations, failed, stats
