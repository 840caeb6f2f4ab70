"""What every policy shares: its context, how its run ended, and the protocol it follows."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from simulator import Domain

from ..tasks import Task
from .env import Env


@dataclass
class Context:
    """What a policy is given besides its environment: the grading side's domain and task (only
    the gold policies read them), the rollout's random stream and its limits."""

    domain: Domain
    task: Task
    rng: random.Random
    max_turns: int = 30
    retries: int = 3  # of a model endpoint's failed requests
    timeout: float = 60.0  # seconds per model request
    keys: dict[Any, list[Any]] = field(default_factory=dict)


@dataclass
class Ended:
    """How a policy's run ended."""

    turns: int = 0
    truncated: bool = False
    infra: str | None = None  # an endpoint failure: the rollout is kept out of rewards


class Policy(Protocol):
    name: str

    async def run(self, env: Env, ctx: Context) -> Ended: ...
