"""The validated manifest: the tasks of one domain fingerprint that passed `toolgym validate`.

`serve --manifest` and `score --manifest` take it to refuse tasks that were not validated, or a
domain that changed since (its fingerprint differs).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from simulator import Domain
from simulator.errors import Problem, SpecError, TaskError


class Manifest(BaseModel):
    """Which tasks of which domain fingerprint passed validation."""

    domain: str = Field(description="name@version")
    fingerprint: str
    valid_tasks: list[str]

    def check(self, domain: Domain, task_id: str | None) -> None:
        """Raise TaskError unless the domain is the validated one and the task is valid."""
        validated = self.domain.partition("@")[0]
        if validated != domain.name:
            raise TaskError(
                f"the manifest is another domain's: it validated {self.domain}, not {domain.name}; "
                f"give {domain.name}'s manifest (`toolgym validate {domain.name} --manifest-dir DIR`)"
            )
        if domain.fingerprint() != self.fingerprint:
            raise TaskError(
                f"domain {domain.ref} has fingerprint {domain.fingerprint()}, but the manifest validated {self.domain} "
                f"with {self.fingerprint}: the domain changed since validation; run `toolgym validate` again"
            )
        if task_id is not None and task_id not in self.valid_tasks:
            raise TaskError(
                f"task {task_id!r} of {domain.ref} did not pass validation (see `toolgym validate {domain.name}`)"
            )


def load_manifest(path: str | Path) -> Manifest:
    """Read a manifest file; SpecError names the file when it is not one."""
    try:
        return Manifest.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        raise SpecError([Problem(str(path), "", f"not a validated manifest: {exc}")]) from None
