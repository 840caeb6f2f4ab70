"""Server labels: what the server alone can say about a rollout, signed so no transcript can forge it.

An agent under RL pressure learns every path to "not scored", so scoring believes an
infrastructure label (an injected fault, a timeout the server imposed, a capacity refusal, a
storage failure) only when the server signed it. The server keeps a secret key beside its
transcripts (`RUNS/.toolgym-key`, created on first use, readable by its owner only); `toolgym
score` finds it there or is given it (`--key FILE`). A label that does not verify is ignored: the
call counts as the agent's.

What is signed (HMAC-SHA256 over the canonical JSON of a list of fields):

- a transcript's `header` record: `["header", session, domain, version, task, seed, started_at]`;
  a verified header marks a server-written transcript, which must end with its `end` record;
- an infrastructure-labelled `call` record: `["call", session, index, tool, arguments, kind]`;
- the `end` record: `["end", session, calls, digest, reason]`.

The error text an agent (and so a client-side chat log) sees for an infrastructure failure ends
with a token `[toolgym-label kind=K session=S index=I sig=X]` over the same fields as the call
record, so a client log can be verified with the same key. The fault schedule of a session is
drawn from the key too (`fault_stream`), so a client cannot choose a session name whose faults
suit it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ErrorKind

#: The key's file name inside a runs folder.
KEY_FILE = ".toolgym-key"

_TOKEN = re.compile(
    r"\[toolgym-label kind=(?P<kind>[a-z]+) session=(?P<session>\S*) index=(?P<index>-?\d+) "
    r"sig=(?P<sig>[0-9a-f]{64})\]\s*\Z"
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


def call_fields(session: str, index: int, tool: str, arguments: Any, kind: str) -> list[Any]:
    return ["call", session, index, tool, arguments, kind]


def header_fields(record: dict[str, Any]) -> list[Any]:
    keys = ("session", "domain", "version", "task", "seed", "started_at")
    return ["header", *(record.get(k) for k in keys)]


def end_fields(session: str, record: dict[str, Any]) -> list[Any]:
    return ["end", session, record.get("calls"), record.get("digest"), record.get("reason")]


def label_token(key: Key, session: str, index: int, tool: str, arguments: Any, kind: str) -> str:
    """The token appended to an infrastructure error's text, verifiable from a client-side log."""
    sig = key.sign(call_fields(session, index, tool, arguments, kind))
    return f"[toolgym-label kind={kind} session={session} index={index} sig={sig}]"


@dataclass(frozen=True)
class Label:
    """A label token read from an error text (not yet verified)."""

    kind: str
    session: str
    index: int
    sig: str

    def verify(self, key: Key | None, tool: str, arguments: Any) -> bool:
        kind = ErrorKind.read(self.kind)
        if key is None or kind is None or not kind.is_infra:
            return False
        return key.verify(call_fields(self.session, self.index, tool, arguments, self.kind), self.sig)


def read_label(text: str) -> Label | None:
    """The label token at the end of an error text, if there is one."""
    m = _TOKEN.search(text[-400:]) if isinstance(text, str) else None
    if m is None:
        return None
    return Label(m["kind"], m["session"], int(m["index"]), m["sig"])


def strip_label(text: str) -> str:
    """The error text without its label token."""
    m = _TOKEN.search(text[-400:])
    return text if m is None else text[: len(text) - len(m.group(0))].rstrip()


def load_key(path: str | Path) -> Key:
    """Read a key file (hex). Raises OSError / ValueError with the path in the message."""
    p = Path(path)
    text = p.read_text(encoding="ascii").strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{p}: not a toolgym key (expected hex digits)") from None
    if len(secret) < 16:
        raise ValueError(f"{p}: not a toolgym key (too short)")
    return Key(secret)


def runs_key(runs: str | Path, create: bool = False) -> Key | None:
    """The key kept in a runs folder (`RUNS/.toolgym-key`); created (mode 0600) when `create`."""
    path = Path(runs) / KEY_FILE
    if path.is_file():
        return load_key(path)
    if not create:
        return None
    key = Key.generate()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server made it first
        return load_key(path)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key.secret.hex() + "\n")
    return key


def find_key(transcript: str | Path) -> Key | None:
    """The key beside a transcript (its folder's `.toolgym-key`), or None."""
    try:
        return runs_key(Path(transcript).parent)
    except (OSError, ValueError):
        return None
