"""Server labels: what only the server can say about a rollout, signed so no transcript forges it.

Scoring believes an infrastructure label (an injected fault, a timeout the server imposed, a
capacity refusal, a storage failure) only when the server signed it with the runs key
(`RUNS/.toolgym-key`), and only in the rollout it was signed for. A signature is HMAC-SHA256 over
the canonical JSON of a `header`, `end`, `void` or infrastructure-labelled `call` record. An agent
sees such a failure's text end with `[toolgym-label kind=K session=S task=T index=I sig=X]`.
Format 1 (no task) is read by the `*_v1` functions only.
Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import re
import secrets
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from ..errors import ErrorKind

#: The key's file name inside a runs folder.
KEY_FILE = ".toolgym-key"
#: The signed-field format the server writes.
FORMAT = 2
#: The error kinds the server signs.
SIGNED = frozenset(k for k in ErrorKind if k.signed)
#: How far from the end of an error text its label token may start.
_TAIL = 2000

_TOKEN = re.compile(
    r"\[toolgym-label kind=(?P<kind>[a-z]+) session=(?P<session>\S*)(?: task=(?P<task>\S*))? "
    r"index=(?P<index>-?\d+) sig=(?P<sig>[0-9a-f]{64})\]\s*\Z"
)


def canonical(value: Any) -> bytes:
    """The canonical JSON bytes of a value (sorted keys, no spaces, non-JSON values as strings)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str).encode()


@dataclass(frozen=True)
class Key:
    """A server secret: signs labels, verifies them, seeds fault schedules."""

    secret: bytes

    @classmethod
    def generate(cls) -> Key:
        return cls(secrets.token_bytes(32))

    def sign(self, fields: list[Any]) -> str:
        return hmac.new(self.secret, canonical(fields), hashlib.sha256).hexdigest()

    def verify(self, fields: list[Any], signature: Any) -> bool:
        return isinstance(signature, str) and hmac.compare_digest(self.sign(fields), signature)

    def fault_stream(self, fault_seed: int, session: str) -> random.Random:
        """The seeded fault schedule of one session: depends on the secret, the seed and the name."""
        digest = hmac.new(self.secret, canonical(["faults", fault_seed, session]), hashlib.sha256).digest()
        return random.Random(int.from_bytes(digest, "big"))


# -- what is signed ------------------------------------------------------------------------------


def call_fields(
    session: str, index: int, tool: str, arguments: Any, kind: str, task: str | None = None
) -> list[Any]:
    return ["call", FORMAT, session, task, index, tool, arguments, str(kind)]


def header_fields(record: dict[str, Any]) -> list[Any]:
    keys = ("session", "task", "seed", "domain", "version", "fingerprint", "domain_path", "started_at")
    return ["header", FORMAT, *(record.get(k) for k in keys)]


def end_fields(session: str, record: dict[str, Any], task: str | None = None) -> list[Any]:
    return ["end", FORMAT, session, task, record.get("calls"), record.get("digest"), record.get("reason")]


def call_fields_v1(session: str, index: int, tool: str, arguments: Any, kind: str) -> list[Any]:
    """Format 1: a call bound to its session and index only."""
    return ["call", session, index, tool, arguments, str(kind)]


def header_fields_v1(record: dict[str, Any]) -> list[Any]:
    """Format 1: no fingerprint and no folder."""
    return [
        "header",
        *(record.get(k) for k in ("session", "domain", "version", "task", "seed", "started_at")),
    ]


def end_fields_v1(session: str, record: dict[str, Any]) -> list[Any]:
    return ["end", session, record.get("calls"), record.get("digest"), record.get("reason")]


def sign_record(key: Key, session: str, task: str | None, record: dict[str, Any]) -> dict[str, Any]:
    """A transcript record with the server's `signature` when it is one the server signs (its
    header, an infrastructure-labelled call, a void record, its end), else the record as it is."""
    kind = record.get("type")
    if kind == "header":
        fields = header_fields(record)
    elif kind == "call" and ErrorKind.read(record.get("error_kind")) in SIGNED:
        fields = call_fields(
            session, record["index"], record["tool"], record["arguments"], record["error_kind"], task
        )
    elif kind == "void":  # a call recorded as done whose commit failed (signed as storage)
        fields = call_fields(
            session, record["index"], record["tool"], record["arguments"], ErrorKind.STORAGE, task
        )
    elif kind == "end":
        fields = end_fields(session, record, task)
    else:
        return record
    return {**record, "signature": key.sign(fields)}


# -- the label token in an error text ------------------------------------------------------------


def label_token(
    key: Key, session: str, index: int, tool: str, arguments: Any, kind: str, task: str | None = None
) -> str:
    """The token appended to an infrastructure error's text, verifiable from a client-side log."""
    sig = key.sign(call_fields(session, index, tool, arguments, kind, task))
    return f"[toolgym-label kind={kind} session={quote(session, safe='')} task={quote(task or '', safe='')} index={index} sig={sig}]"


@dataclass(frozen=True)
class Label:
    """A label token read from an error text (not yet verified); `version` 1 has no task."""

    kind: str
    session: str
    index: int
    sig: str
    task: str | None = None
    version: int = FORMAT

    def verify(self, key: Key | None, tool: str, arguments: Any) -> bool:
        """Whether the server signed this label for this call (in its own format)."""
        kind = ErrorKind.read(self.kind)
        if key is None or kind is None or not kind.is_infra:
            return False
        if self.version == 1:
            fields = call_fields_v1(self.session, self.index, tool, arguments, self.kind)
        else:
            fields = call_fields(self.session, self.index, tool, arguments, self.kind, self.task)
        return key.verify(fields, self.sig)


def read_label(text: str) -> Label | None:
    """The label token at the end of an error text, if there is one."""
    m = _TOKEN.search(text[-_TAIL:]) if isinstance(text, str) else None
    if m is None:
        return None
    if m["task"] is None:
        return Label(m["kind"], m["session"], int(m["index"]), m["sig"], None, 1)
    return Label(m["kind"], unquote(m["session"]), int(m["index"]), m["sig"], unquote(m["task"]) or None)


def strip_label(text: str) -> str:
    """The error text without its label token."""
    m = _TOKEN.search(text[-_TAIL:])
    return text if m is None else text[: len(text) - len(m.group(0))].rstrip()


# -- the key file --------------------------------------------------------------------------------


class _NotAKey(ValueError):
    """A key file whose text is not a key (or not yet a whole one)."""


def load_key(path: str | Path) -> Key:
    """Read a key file (hex). Raises OSError / ValueError with the path in the message, and
    ValueError for a file that is a symlink, not the current user's, or open to group or others."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        if p.is_symlink():
            raise ValueError(
                f"{p}: refused: the key file is a symlink (it must be a file of its own)"
            ) from None
        raise
    with os.fdopen(fd, encoding="ascii") as fh:
        _check_owner(p, os.fstat(fd))
        text = fh.read().strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        raise _NotAKey(f"{p}: not a toolgym key (expected hex digits)") from None
    if len(secret) < 16:
        raise _NotAKey(f"{p}: not a toolgym key (too short)")
    return Key(secret)


def _check_owner(path: Path, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path}: refused: the key is not a regular file")
    if os.name == "nt":
        return
    if st.st_uid != os.geteuid():
        raise ValueError(
            f"{path}: refused: the key file is owned by uid {st.st_uid}, not by this user "
            f"(uid {os.geteuid()}); a key someone else wrote could sign anything"
        )
    if st.st_mode & 0o077:
        raise ValueError(
            f"{path}: refused: the key file is readable or writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):04o}); make it 0600 (chmod 600) or delete it"
        )


def runs_key(runs: str | Path, create: bool = False) -> Key | None:
    """The key kept in a runs folder (`RUNS/.toolgym-key`), or None; created (mode 0600) when
    `create`. Servers racing to create it all get the one key: each writes a whole key to a
    temporary file and links it into place, which only one link can win."""
    path = Path(runs) / KEY_FILE
    try:
        return load_key(path)
    except FileNotFoundError:
        if not create:
            return None
    except _NotAKey:
        if not create:
            raise
        return _whole_key(path)  # being written by a server on a file system without hard links
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Key.generate()
    fd, tmp = tempfile.mkstemp(prefix=f"{KEY_FILE}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:  # mkstemp: mode 0600, this user's
            fh.write(key.secret.hex() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:  # another server made it first: its key is whole
            return load_key(path)
        except OSError:  # no hard links on this file system: an O_EXCL create instead
            return _create_exclusive(path, key)
        return key
    finally:
        os.unlink(tmp)


def _create_exclusive(path: Path, key: Key) -> Key:
    """Create the key with O_EXCL where hard links are not supported; a loser waits (bounded)
    until the winner's key is whole."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _whole_key(path)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key.secret.hex() + "\n")
    return key


def _whole_key(path: Path, wait_s: float = 5.0) -> Key:
    """The key at `path` once its writer has written it whole (a bounded wait)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return load_key(path)
        except _NotAKey:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def find_key(transcript: str | Path) -> Key | None:
    """The key beside a transcript (its folder's `.toolgym-key`), or None when there is none.

    Raises ValueError / OSError (naming the file) for a key file that is there but refused."""
    return runs_key(Path(transcript).parent)
