"""The two agents: `scripted` (an action script played by a chat model of ours) and
`browser-use` with any OpenAI-compatible model; plus the task prompt and the cost of a run.

Agent options chosen for a harness: no judge call, no opening of URLs found in the task text,
no SIGINT handler of its own, no web `search` action (it would try a search engine), cost from a
local price table (browser-use's own cost service downloads one).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchwright.errors import UserInputError
from benchwright.llm.pricing import price_of
from benchwright.web.browser.prompts import (
    PLAIN,
    STRUCTURED,
    file_prompt,
    plain_prompt,
    structured_prompt,
)
from benchwright.web.browser.trial_models import AgentSpec
from benchwright.web.browser.web_agents import substitute_sites, web_agent
from benchwright.web.evaluation.tasks import WebTask


class TimedModel:
    """Wraps a chat model and adds up the seconds spent in its calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model = inner.model
        self._verified_api_keys = True
        self.seconds = 0.0
        self.calls: list[tuple[float, Any]] = []
        """(epoch seconds when the call ended, its usage or None) of each call, failed ones too."""

    @property
    def provider(self) -> str:
        """The wrapped model's provider."""
        return str(self.inner.provider)

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return str(self.inner.name)

    @property
    def model_name(self) -> str:
        """Legacy alias of `model`."""
        return str(self.model)

    async def ainvoke(self, messages: list[Any], output_format: Any = None, **kwargs: Any) -> Any:
        """The wrapped call, timed."""
        started = time.perf_counter()
        answer = None
        try:
            answer = await self.inner.ainvoke(messages, output_format, **kwargs)
            return answer
        finally:
            self.seconds += time.perf_counter() - started
            # a failed call counts too, its usage unknown (never a step "without a call")
            self.calls.append((time.time(), getattr(answer, "usage", None)))


def task_prompt(task: WebTask, site_urls: dict[str, str], prompt: str = STRUCTURED) -> str:
    """What the agent is told (`prompt`: structured, plain, or a template file's path)."""
    start = ", ".join(substitute_sites(u, site_urls) for u in task.start_urls)
    intent = substitute_sites(task.intent, site_urls)
    if prompt == PLAIN:
        return plain_prompt(start, intent)
    if prompt == STRUCTURED:
        return structured_prompt(task, start, site_urls, intent)
    return file_prompt(Path(prompt), task, start, site_urls, intent)


def build_model(spec: AgentSpec, site_urls: dict[str, str], task: WebTask | None = None) -> Any:
    """The chat model of the agent spec (`web_agents`: one class per registered agent; the
    scripted agent answers through the schema when the prompt asks for one and the task is
    given)."""
    return web_agent(spec).chat_model(site_urls, task)


def agent_options(spec: AgentSpec, file_system_path: Path) -> dict[str, Any]:
    """browser-use `Agent` keyword arguments for a harness."""
    return web_agent(spec).options(file_system_path)


def price_table(path: Path | None) -> dict[str, Any]:
    """The local litellm-format price table (empty without one)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserInputError(f"cannot read the price table: {exc}", path=path) from None
    if not isinstance(data, dict):
        raise UserInputError("the price table must map model names to prices", path=path)
    return data


def cost_usd(prices: dict[str, Any], model: str | None, prompt: int, cached: int,
             completion: int) -> float | None:
    """Dollars for these tokens at the model's prices (the given table first, then the list
    prices the coding agents use); None when neither knows the model."""
    entry = prices.get(model or "") or prices.get((model or "").rsplit("/", 1)[-1])
    if not isinstance(entry, dict):
        listed = price_of(model)
        return listed.cost(prompt, completion) if listed is not None else None
    per_in = float(entry.get("input_cost_per_token", 0.0))
    per_cached = float(entry.get("cache_read_input_token_cost", per_in))
    per_out = float(entry.get("output_cost_per_token", 0.0))
    return (prompt - cached) * per_in + cached * per_cached + completion * per_out
