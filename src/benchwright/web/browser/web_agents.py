"""The web agents, one class each, registered in `benchwright.registry.WEB_AGENTS` and built the
same way from the run's `AgentSpec`: what a run checks before it starts, the chat model that
drives browser-use, and browser-use's options for it. Nothing else branches on an agent's name.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from benchwright.errors import UserInputError, missing_extra
from benchwright.llm.urls import check_base_url
from benchwright.web.browser.trial_models import AgentSpec

if TYPE_CHECKING:
    from benchwright.web.evaluation.tasks import WebTask

EXCLUDED_ACTIONS = ["search"]


class WebAgent(Protocol):
    """A web agent as the run and the trial use it."""

    def check(self, tasks: list[WebTask], scripts: Scripts) -> None:
        """Refuse a run it cannot do, before the run folder is made."""
        ...

    def chat_model(self, site_urls: dict[str, str], task: WebTask | None = None) -> Any:
        """The browser-use chat model that decides each step (`task`: the trial's task)."""
        ...

    def options(self, file_system_path: Path) -> dict[str, Any]:
        """browser-use `Agent` keyword arguments."""
        ...

    def initial_actions(self, task: WebTask, site_urls: dict[str, str]) -> list[dict[str, Any]]:
        """Actions browser-use takes before the agent's first step."""
        ...


@dataclass(frozen=True)
class Scripts:
    """Where a run finds its action scripts."""

    find: Callable[[int], Path | None]
    """A task's action script, if there is one."""
    folder: Path | None
    """The folder they are looked for in (named in errors)."""
    needed: bool
    """False with the fake trial runner, which plays no script."""


def web_agent(spec: AgentSpec) -> WebAgent:
    """The registered agent `spec` names, built from it."""
    from benchwright.registry import WEB_AGENTS

    agent: WebAgent = WEB_AGENTS.get(str(spec.name)).from_setup(spec)
    return agent


def _harness_options(spec: AgentSpec, file_system_path: Path, scripted: bool) -> dict[str, Any]:
    from benchwright.web.browser.imports import browser_use_module

    tools = browser_use_module("browser_use.tools.service").Tools(exclude_actions=EXCLUDED_ACTIONS)
    return {
        "tools": tools, "use_judge": False, "directly_open_url": False,
        "enable_signal_handler": False, "calculate_cost": False, "generate_gif": False,
        "use_vision": False if scripted else spec.use_vision,
        "enable_planning": not scripted, "max_failures": spec.max_failures,
        "llm_timeout": spec.llm_timeout_s, "step_timeout": spec.step_timeout_s,
        "file_system_path": str(file_system_path), "loop_detection_enabled": not scripted,
    }


class ScriptedAgent:
    """`scripted`: an action script per task, played by a chat model of ours."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec

    @classmethod
    def from_setup(cls, setup: AgentSpec) -> ScriptedAgent:
        return cls(setup)

    def check(self, tasks: list[WebTask], scripts: Scripts) -> None:
        """Every task needs its script (the fake runner plays none)."""
        missing = [t.task_id for t in tasks if scripts.find(t.task_id) is None]
        if missing and scripts.needed:
            raise UserInputError(
                f"no action script for task(s) {', '.join(map(str, missing[:10]))}",
                path=scripts.folder,
                hint="the scripted agent needs <task_id>.yaml per task; pass --scripts DIR, "
                "or use --agent browser-use")

    def chat_model(self, site_urls: dict[str, str], task: WebTask | None = None) -> Any:
        """The script played by our chat model; it answers through the schema when the prompt
        asks for one and the task is given."""
        from benchwright.web.browser.action_script import load_script
        from benchwright.web.browser.prompts import uses_schema
        from benchwright.web.browser.scripted_model import ScriptedChatModel, scripted_answer

        if self.spec.script is None:
            raise UserInputError("the scripted agent needs a script", hint="set AgentSpec.script")
        answer = (scripted_answer(task) if task is not None and uses_schema(self.spec.prompt)
                  else None)
        return ScriptedChatModel(load_script(self.spec.script).with_sites(site_urls), answer)

    def options(self, file_system_path: Path) -> dict[str, Any]:
        return _harness_options(self.spec, file_system_path, scripted=True)

    def initial_actions(self, task: WebTask, site_urls: dict[str, str]) -> list[dict[str, Any]]:
        """None: the script opens its own pages."""
        return []


class BrowserUseAgent:
    """`browser-use` with any OpenAI-compatible model."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec

    @classmethod
    def from_setup(cls, setup: AgentSpec) -> BrowserUseAgent:
        return cls(setup)

    def check(self, tasks: list[WebTask], scripts: Scripts) -> None:
        """A model must be named, its base URL be one, its key be set and the model client
        installed."""
        if not self.spec.model:
            raise UserInputError("the browser-use agent needs a model",
                                 hint="pass --model NAME (and --base-url for a local server)")
        if self.spec.base_url is not None:
            try:
                check_base_url(self.spec.base_url)
            except ValueError as exc:
                raise UserInputError(f"--base-url: {exc}") from None
        _api_key(self.spec)
        if importlib.util.find_spec("openai") is None:
            raise missing_extra("the browser-use agent needs the openai package", "llm")

    def chat_model(self, site_urls: dict[str, str], task: WebTask | None = None) -> Any:
        """An OpenAI-compatible chat model; the key is read from the environment."""
        from benchwright.web.browser.imports import browser_use_module

        spec = self.spec
        if not spec.model:
            raise UserInputError("the browser-use agent needs a model", hint="pass --model NAME")
        key = _api_key(spec)
        chat = browser_use_module("browser_use.llm.openai.chat")
        options: dict[str, Any] = {"model": spec.model, "api_key": key, "max_retries": 0}
        if spec.base_url:
            options["base_url"] = spec.base_url
        if spec.temperature is not None:
            options["temperature"] = spec.temperature
        return chat.ChatOpenAI(**options)

    def options(self, file_system_path: Path) -> dict[str, Any]:
        return _harness_options(self.spec, file_system_path, scripted=False)

    def initial_actions(self, task: WebTask, site_urls: dict[str, str]) -> list[dict[str, Any]]:
        """The task's first start URL is opened before the model's first step."""
        if not task.start_urls:
            return []
        return [{"navigate": {"url": substitute_sites(task.start_urls[0], site_urls)}}]


def substitute_sites(text: str, site_urls: dict[str, str]) -> str:
    """`__SHOPPING__/x` -> `http://127.0.0.1:41233/x`."""
    for site, url in site_urls.items():
        text = text.replace(f"__{site.upper()}__", url.rstrip("/"))
    return text


def _api_key(spec: AgentSpec) -> str:
    """The key from the variable `--api-key-env` names, or a one-line error."""
    key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    if not key:
        raise UserInputError(f"environment variable {spec.api_key_env or '(none)'} is not set",
                             hint="export the API key there (it is never written to disk), or "
                             "name its variable with --api-key-env")
    return key
