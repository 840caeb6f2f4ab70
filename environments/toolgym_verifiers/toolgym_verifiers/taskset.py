"""The taskset, its task (tools and reward) and the environment that can start a toolgym server."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import verifiers.v1 as vf
from verifiers.v1.dialects.chat import message_to_wire


class ToolgymTaskConfig(vf.TaskConfig):
    url: str = ""
    """The toolgym MCP server's URL (`.../mcp`); the taskset fills it in."""

    toolgym: str = "toolgym"
    """The toolgym command (in toolgym's own virtual environment), for scoring."""

    domain: str = ""
    """The domain (filled in by the taskset)."""


class ToolgymTasksetConfig(vf.TasksetConfig):
    domain: str = "bank"
    """A bundled domain's name or a domain folder, as toolgym takes it."""

    url: str = "http://127.0.0.1:8000/mcp"
    """A running `toolgym serve DOMAIN --transport http` (its `/mcp` URL)."""

    manifest: str | None = None
    """Serve only the tasks this validated manifest lists (`toolgym validate --manifest-dir`)."""

    toolgym: str = "toolgym"
    """The toolgym command, e.g. /path/to/toolgym/.venv/bin/toolgym."""

    task: ToolgymTaskConfig = ToolgymTaskConfig()


class ToolgymData(vf.TaskData):
    task_id: str
    seed: int = 0


class ToolgymTools(vf.Toolset[vf.ToolsetConfig, vf.State]):
    """The domain's tools, served by the toolgym MCP server (listed bare, without a prefix)."""

    TOOL_PREFIX = None


def _toolgym(config: ToolgymTasksetConfig | ToolgymTaskConfig) -> list[str]:
    return shlex.split(config.toolgym)


class ToolgymTask(vf.Task[ToolgymData, vf.State, ToolgymTaskConfig]):
    @classmethod
    def toolsets(cls, config: ToolgymTaskConfig) -> list[vf.Toolset]:
        return [ToolgymTools(vf.ToolsetConfig(url=config.url))]

    @vf.reward(weight=1.0)
    async def toolgym(self, trace: vf.Trace) -> float:
        """toolgym's reward for the rollout: its chat transcript scored by `toolgym score`."""
        transcript = {
            "domain": self.config.domain,
            "task": self.data.task_id,
            "seed": self.data.seed,
            "truncated": trace.is_truncated,
            "messages": [message_to_wire(m) for m in trace.messages],
        }
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{self.data.task_id}.json"
            path.write_text(json.dumps(transcript), encoding="utf-8")
            proc = await asyncio.create_subprocess_exec(
                *_toolgym(self.config),
                "score",
                str(path),
                "--json",
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"toolgym score failed: {err.decode(errors='replace').strip()[-2000:]}")
        report = json.loads(out)
        trace.info["toolgym"] = {k: report.get(k) for k in ("status", "reward", "partial", "explanation")}
        if report.get("partial") is not None:
            trace.record_metric("toolgym_partial", float(report["partial"]))
        if report.get("reward") is None:  # failed-infra / incomplete: kept out of rewards by toolgym
            raise RuntimeError(f"toolgym did not score the rollout: {report.get('status')}")
        return float(report["reward"])


class ToolgymTaskset(vf.Taskset[ToolgymTask, ToolgymTasksetConfig]):
    def load(self) -> Iterator[ToolgymTask]:
        """The domain's tasks (a manifest's validated ones) as toolgym exports them: system prompt
        (the policy), instruction, episode seed; each task's tools reach `url?task=ID&seed=N`."""
        config = self.config
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "tasks.jsonl"
            command = [*_toolgym(config), "export-sft", config.domain, "--out", str(out), "--json"]
            if config.manifest:
                command += ["--manifest", config.manifest]
            subprocess.run(command, check=True, capture_output=True)
            rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        for row in rows:
            system, user = row["messages"][0], row["messages"][1]
            url = f"{config.url}?task={row['task']}&seed={row['seed']}"
            task_config = config.task.model_copy(
                update={"url": url, "toolgym": config.toolgym, "domain": config.domain}
            )
            yield ToolgymTask(
                ToolgymData(
                    id=row["task"],
                    name=row["task"],
                    prompt=user["content"],
                    system_prompt=system["content"],
                    task_id=row["task"],
                    seed=row["seed"],
                ),
                task_config,
            )
