"""OpenHands (PyPI openhands-ai, pinned) driven the way SCBench drives it.

`python -m openhands.core.main --config-file CONFIG -t PROMPT` from a uv environment the harness
builds (Python 3.12, `benchwright.sandbox.environments`), with the `cli` runtime: commands run
directly in the workspace, inside our sandbox (OpenHands' default Docker runtime is not used).
config.toml in the isolated HOME carries the model, `--base-url`, retries, the step cap
(`max_iterations`) and the spend cap (`max_budget_per_task`); the key stays in the environment
(LLM_API_KEY, or the provider's own variable, which litellm reads). OpenHands saves its event
trajectory as JSON; usage and cost come from the `llm_metrics` it records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchwright.coding.agents.base import AgentContext, Usage
from benchwright.coding.agents.chat_client import reasoning_effort
from benchwright.coding.agents.cli_agent import CliAgent, Launch, Parsed
from benchwright.coding.agents.toolchain import OPENHANDS_PACKAGE, OPENHANDS_VERSION
from benchwright.coding.agents.trajectory import Role, Step, ToolCall, ToolResult
from benchwright.sandbox.bwrap import Mount
from benchwright.sandbox.environments import ensure_env
from benchwright.sandbox.interpreters import resolve_python

DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"
PYTHON = "3.12"  # openhands-ai needs Python 3.12 or newer
NATIVE_LOG = "openhands_events.json"
_ROLES = {"agent": Role.ASSISTANT, "user": Role.USER, "environment": Role.TOOL}


class OpenhandsAgent(CliAgent):
    """OpenHands' CodeActAgent headless, one invocation per checkpoint."""

    name = "openhands"
    credentials = ("LLM_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")
    env_path: Path | None = None
    events_path: Path | None = None

    @classmethod
    def pinned_version(cls, benchwright_version: str) -> str | None:
        """The OpenHands release `install` installs unless the run asks for another."""
        return OPENHANDS_VERSION

    def install(self) -> str:
        python = resolve_python(PYTHON)
        version = self.wanted_version or OPENHANDS_VERSION
        self.env_path = ensure_env("openhands", python, [f"{OPENHANDS_PACKAGE}=={version}"]).path
        self.python_prefix = python.prefix
        return version

    def launch(self, ctx: AgentContext, home: Path) -> Launch:
        assert self.env_path is not None
        self.model = self.model or DEFAULT_MODEL
        self.events_path = ctx.artifacts_dir / NATIVE_LOG
        config = home / "config.toml"
        argv = [str(self.env_path / "bin" / "python"), "-m", "openhands.core.main",
                "--config-file", str(config), "-t", ctx.prompt]
        env = {"LOG_TO_FILE": "false", "LOG_JSON": "false", "PYTHONUNBUFFERED": "1"}
        return Launch(argv=argv, env=env, files={"config.toml": self.config_toml(ctx, home)},
                      mounts=[Mount(path=self.env_path), Mount(path=self.python_prefix)])

    def config_toml(self, ctx: AgentContext, home: Path) -> str:
        """OpenHands' configuration (no credentials)."""
        s = self.settings
        anthropic = (self.model or "").startswith(("anthropic/", "claude"))
        url = self.base_url("LLM_BASE_URL", with_v1=not anthropic)
        core = {"runtime": "cli", "workspace_base": str(ctx.workspace),
                "save_trajectory_path": str(self.events_path), "file_store": "local",
                "file_store_path": str(home / "openhands-state"), "enable_browser": False,
                "cache_dir": str(home / "tmp" / "openhands-cache"),
                "max_iterations": s.step_limit or 1000}
        if s.cost_limit_usd:
            core["max_budget_per_task"] = s.cost_limit_usd
        llm: dict[str, Any] = {"model": self.model, "num_retries": s.llm_retries,
                               "retry_min_wait": int(s.retry_backoff_s),
                               "retry_max_wait": 60, "timeout": int(s.request_timeout_s)}
        if url:
            llm["base_url"] = url
        effort = reasoning_effort(s.thinking_budget)
        if effort is not None:
            llm["reasoning_effort"] = "low" if effort == "minimal" else effort
        agent = {"enable_browsing": False, "enable_jupyter": False}
        return "\n".join(_table(name, values) for name, values in
                         (("core", core), ("llm", llm), ("agent", agent)))

    def parse(self, lines: list[str]) -> Parsed:
        events: list[dict[str, Any]] = []
        if self.events_path is not None and self.events_path.is_file():
            loaded = json.loads(self.events_path.read_text() or "[]")
            events = loaded if isinstance(loaded, list) else []
        return parse_events(events)


def _table(name: str, values: dict[str, Any]) -> str:
    return f"[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())


def parse_events(events: list[dict[str, Any]]) -> Parsed:
    """OpenHands' saved events: actions (with the model's tool calls) and observations."""
    parsed, metrics = Parsed(), dict[str, Any]()
    for event in events:
        metrics = event.get("llm_metrics") or metrics
        step = _step(event)
        if step is not None:
            parsed.steps.append(step)
        if event.get("action") == "finish":
            parsed.finished = True
        if event.get("observation") == "error":
            parsed.errors.append(str(event.get("content") or event.get("message") or ""))
    usage = metrics.get("accumulated_token_usage") or {}
    parsed.usage = Usage(input_tokens=int(usage.get("prompt_tokens") or 0),
                         output_tokens=int(usage.get("completion_tokens") or 0),
                         cost_usd=float(metrics.get("accumulated_cost") or 0.0),
                         steps=len(metrics.get("response_latencies") or []) or sum(
                             "llm_metrics" in e for e in events))
    parsed.cost_reported = bool(metrics.get("accumulated_cost"))
    return parsed


def _step(event: dict[str, Any]) -> Step | None:
    role = _ROLES.get(str(event.get("source")))
    if event.get("action") == "system":
        role = Role.SYSTEM
    if role is None or event.get("action") == "recall" or event.get("observation") == "recall":
        return None
    meta = event.get("tool_call_metadata") or {}
    text = str(event.get("message") or "")
    if "observation" in event:
        return Step(role=Role.TOOL, timestamp=event.get("timestamp"), tool_results=[ToolResult(
            call_id=meta.get("tool_call_id"), name=meta.get("function_name"),
            output=str(event.get("content") or text),
            is_error=event.get("observation") == "error")])
    step = Step(role=role, text=text, timestamp=event.get("timestamp"))
    if meta.get("function_name"):
        step.tool_calls.append(ToolCall(id=meta.get("tool_call_id"), name=meta["function_name"],
                                        arguments=event.get("args") or {}))
    return step
