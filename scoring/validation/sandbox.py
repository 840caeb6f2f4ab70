"""No network during validation: sockets are blocked and every attempt is recorded.

Tools touch only their database (invariant 5). Validation runs every task inside `no_network()`,
so an attempt to resolve a name or open a connection fails the call and marks the task `network`.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class NetworkBlocked(OSError):
    """A network access was attempted while the network is blocked."""


@contextmanager
def no_network() -> Iterator[list[str]]:
    """Block outbound sockets and name resolution; yields the list of attempts (as text)."""
    attempts: list[str] = []
    patched: list[tuple[Any, str, str]] = [
        (socket.socket, "connect", "socket.connect"),
        (socket.socket, "connect_ex", "socket.connect_ex"),
        (socket, "create_connection", "create_connection"),
        (socket, "getaddrinfo", "getaddrinfo"),
        (socket, "gethostbyname", "gethostbyname"),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patched]

    def refuse(what: str) -> Any:
        def blocked(*args: Any, **kwargs: Any) -> Any:
            target = args[1] if what.startswith("socket.") and len(args) > 1 else (args[0] if args else "?")
            attempts.append(f"{what}({target!r})")
            raise NetworkBlocked(f"network access is blocked during validation: {what}({target!r})")

        return blocked

    for owner, name, what in patched:
        setattr(owner, name, refuse(what))
    try:
        yield attempts
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
