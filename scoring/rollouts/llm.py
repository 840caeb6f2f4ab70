"""`openai:MODEL@URL`: an agent loop against any OpenAI-compatible chat endpoint.

    policy = OpenAIPolicy.parse("openai:qwen3-8b@http://127.0.0.1:8000/v1")

Sends the domain policy and task instruction with the environment's tools, runs each tool call
the model makes, and hands in its final message as the answer. An endpoint failure ends the
rollout as an infrastructure failure (`EndpointError`). The key is `$OPENAI_API_KEY` when set.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from typing import Any

import httpx2

from simulator.serve.mcptools import SUBMIT_ANSWER

from .base import Context, Ended
from .env import Env

#: HTTP statuses worth retrying (rate limits and server errors)
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class EndpointError(Exception):
    """The chat endpoint failed (after retries): infrastructure, not the agent."""


@dataclass
class OpenAIPolicy:
    """A chat model behind an OpenAI-compatible `/chat/completions` endpoint."""

    name: str
    model: str
    base_url: str
    backoff: float = 0.5
    temperature: float | None = None

    @classmethod
    def parse(cls, text: str) -> OpenAIPolicy:
        """`openai:MODEL@URL` (URL: the base, e.g. http://host:port/v1)."""
        spec = text.partition(":")[2]
        model, sep, url = spec.partition("@")
        if not sep or not model or not url.startswith(("http://", "https://")):
            raise ValueError(
                f"policy {text!r}: write openai:MODEL@URL, e.g. openai:gpt-4o-mini@http://127.0.0.1:8000/v1"
            )
        return cls(name=text, model=model, base_url=url.rstrip("/"))

    async def complete(
        self, client: httpx2.AsyncClient, body: dict[str, Any], ctx: Context
    ) -> dict[str, Any]:
        """The assistant message of one chat completion, with retries (EndpointError when it fails)."""
        url = f"{self.base_url}/chat/completions"
        last = ""
        for attempt in range(ctx.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = await client.post(url, json=body, timeout=ctx.timeout)
            except httpx2.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUSES:
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code != 200:
                raise EndpointError(f"{url} answered HTTP {response.status_code}: {response.text[:200]}")
            try:
                message = response.json()["choices"][0]["message"]
            except (ValueError, KeyError, IndexError, TypeError):
                raise EndpointError(
                    f"{url} answered something that is not a chat completion: {response.text[:200]}"
                ) from None
            if not isinstance(message, dict):
                raise EndpointError(f"{url}: the completion's message is not an object")
            return message
        raise EndpointError(f"{url} failed {ctx.retries + 1} times; the last: {last}")

    def _tools(self, env: Env) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.schema},
            }
            for t in env.tools
        ]

    async def run(self, env: Env, ctx: Context) -> Ended:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": env.policy},
            {"role": "user", "content": env.instruction},
        ]
        body: dict[str, Any] = {"model": self.model, "messages": messages, "tools": self._tools(env)}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        headers = (
            {"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"}
            if os.environ.get("OPENAI_API_KEY")
            else {}
        )
        async with httpx2.AsyncClient(headers=headers) as client:
            for turn in range(1, ctx.max_turns + 1):
                try:
                    message = await self.complete(client, body, ctx)
                except EndpointError as exc:
                    return Ended(turns=turn - 1, infra=str(exc))
                calls = message.get("tool_calls") or []
                messages.append(
                    {
                        "role": "assistant",
                        "content": message.get("content"),
                        **({"tool_calls": calls} if calls else {}),
                    }
                )
                if not calls:
                    await env.answer(str(message.get("content") or ""))
                    return Ended(turns=turn)
                for call in calls:
                    text, done = await self._run_call(env, call)
                    messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": text})
                    if done:
                        return Ended(turns=turn)
        return Ended(turns=ctx.max_turns, truncated=True)

    async def _run_call(self, env: Env, call: dict[str, Any]) -> tuple[str, bool]:
        """Run one tool call of the model: (the text it gets back, whether the rollout ended)."""
        function = call.get("function") or {}
        name = str(function.get("name", ""))
        raw = function.get("arguments") or "{}"
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError as exc:
            return f"Error: the arguments of {name} are not valid JSON ({exc}); send a JSON object.", False
        if not isinstance(arguments, dict):
            return f"Error: the arguments of {name} must be a JSON object.", False
        if name == SUBMIT_ANSWER:
            await env.answer(str(arguments.get("answer", "")))
            return "Your answer was recorded.", True
        observed = await env.call(name, arguments)
        return observed.text, False
