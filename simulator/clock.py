"""The simulated clock's text form: reading a domain's `clock.start`, rendering `$now`."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_time(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    if value.utcoffset() == UTC.utcoffset(None):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value.isoformat()
