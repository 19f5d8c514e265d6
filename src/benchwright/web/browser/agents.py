"""The two agents: `scripted` (an action script played by a chat model of ours) and
`browser-use` with any OpenAI-compatible model; plus the task prompt and the cost of a run.

Agent options chosen for a harness: no judge call, no opening of URLs found in the task text,
no SIGINT handler of its own, no web `search` action (it would try a search engine), cost from a
local price table (browser-use's own cost service downloads one).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from benchwright.coding.agents.prices import price_of
from benchwright.errors import UserInputError
from benchwright.web.browser.action_script import load_script
from benchwright.web.browser.imports import browser_use_module
from benchwright.web.browser.prompts import (
    PLAIN,
    STRUCTURED,
    file_prompt,
    plain_prompt,
    structured_prompt,
    uses_schema,
)
from benchwright.web.browser.scripted_model import ScriptedChatModel, scripted_answer
from benchwright.web.browser.trial_models import AgentSpec
from benchwright.web.tasks import WebTask

EXCLUDED_ACTIONS = ["search"]


class TimedModel:
    """Wraps a chat model and adds up the seconds spent in its calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model = inner.model
        self._verified_api_keys = True
        self.seconds = 0.0

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
        try:
            return await self.inner.ainvoke(messages, output_format, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


def substitute_sites(text: str, site_urls: dict[str, str]) -> str:
    """`__SHOPPING__/x` -> `http://127.0.0.1:41233/x`."""
    for site, url in site_urls.items():
        text = text.replace(f"__{site.upper()}__", url.rstrip("/"))
    return text


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
    """The chat model of the agent spec (the scripted agent answers through the schema when
    the prompt asks for one and the task is given)."""
    if spec.name == "scripted":
        if spec.script is None:
            raise UserInputError("the scripted agent needs a script", hint="set AgentSpec.script")
        answer = (scripted_answer(task) if task is not None and uses_schema(spec.prompt)
                  else None)
        return ScriptedChatModel(load_script(spec.script).with_sites(site_urls), answer)
    if not spec.model:
        raise UserInputError("the browser-use agent needs a model", hint="pass --model NAME")
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise UserInputError(f"environment variable {spec.api_key_env} is not set",
                             hint="export the API key there (it is never written to disk)")
    chat = browser_use_module("browser_use.llm.openai.chat")
    options: dict[str, Any] = {"model": spec.model, "api_key": key, "max_retries": 0}
    if spec.base_url:
        options["base_url"] = spec.base_url
    if spec.temperature is not None:
        options["temperature"] = spec.temperature
    return chat.ChatOpenAI(**options)


def agent_options(spec: AgentSpec, file_system_path: Path) -> dict[str, Any]:
    """browser-use `Agent` keyword arguments for a harness."""
    scripted = spec.name == "scripted"
    tools = browser_use_module("browser_use.tools.service").Tools(exclude_actions=EXCLUDED_ACTIONS)
    return {
        "tools": tools, "use_judge": False, "directly_open_url": False,
        "enable_signal_handler": False, "calculate_cost": False, "generate_gif": False,
        "use_vision": False if scripted else spec.use_vision,
        "enable_planning": not scripted, "max_failures": spec.max_failures,
        "llm_timeout": spec.llm_timeout_s, "step_timeout": spec.step_timeout_s,
        "file_system_path": str(file_system_path), "loop_detection_enabled": not scripted,
    }


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
