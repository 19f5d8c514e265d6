"""Gemini CLI (`gemini`, npm @google/gemini-cli) driven the way SCBench drives it.

`gemini -p PROMPT -y --output-format stream-json -m M` on Node.js; settings.json in the isolated
HOME selects API-key auth, trusts the workspace, caps turns (`model.maxSessionTurns`) and retries
(`general.maxAttempts`), and sets the thinking budget; GOOGLE_GEMINI_BASE_URL carries
`--base-url`. Usage comes from the `result` event, cost from the price table. gemini has no spend
limit of its own: the turn cap and the wall clock bound it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchwright.coding.agents.base import AgentContext, Usage
from benchwright.coding.agents.cli_agent import (
    NODE_ADDRESS_SPACE_MB,
    CliAgent,
    Launch,
    Parsed,
    json_events,
)
from benchwright.coding.agents.toolchain import GEMINI_CLI
from benchwright.coding.agents.trajectory import Role, Step, ToolCall, ToolResult

DEFAULT_MODEL = "gemini-2.5-pro"
MAX_ATTEMPTS = 10  # gemini refuses more


class GeminiAgent(CliAgent):
    """`gemini -p` in YOLO mode, one invocation per checkpoint."""

    name = "gemini"
    credentials = ("GEMINI_API_KEY",)
    npm_tool = GEMINI_CLI

    def launch(self, ctx: AgentContext, home: Path) -> Launch:
        self.model = self.model or DEFAULT_MODEL
        argv = [self.executable, "-p", ctx.prompt, "-y", "--output-format", "stream-json",
                "-m", self.model]
        env = {"GEMINI_CLI_TRUST_WORKSPACE": "true", "NO_COLOR": "1"}
        url = self.base_url("GOOGLE_GEMINI_BASE_URL", with_v1=False)
        if url:
            env["GOOGLE_GEMINI_BASE_URL"] = url
        return Launch(argv=argv, env=env, files={".gemini/settings.json": self.settings_json()},
                      address_space_mb=NODE_ADDRESS_SPACE_MB)

    def settings_json(self) -> str:
        """gemini's user settings (no credentials: the key stays in $GEMINI_API_KEY)."""
        model: dict[str, Any] = {}
        if self.settings.step_limit:
            model["maxSessionTurns"] = self.settings.step_limit
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"},
                         "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True,
                        "maxAttempts": min(MAX_ATTEMPTS, self.settings.llm_retries + 1)},
            "model": model}
        if self.settings.thinking_budget is not None:
            thinking = {"thinkingConfig": {"thinkingBudget": self.settings.thinking_budget}}
            settings["modelConfigs"] = {"customOverrides": [
                {"match": {"model": self.model},
                 "modelConfig": {"generateContentConfig": thinking}}]}
        return json.dumps(settings, indent=2)

    def parse(self, lines: list[str]) -> Parsed:
        return parse_stream(lines)


def parse_stream(lines: list[str]) -> Parsed:
    """gemini's stream-json: streamed message deltas, tool use and results, one `result`."""
    parsed = Parsed()
    for event in json_events(lines):
        kind = event.get("type")
        if kind == "message":
            _message(parsed, event)
        elif kind == "tool_use":
            _assistant_step(parsed, event, with_text=False).tool_calls.append(ToolCall(
                id=event.get("tool_id"), name=str(event.get("tool_name", "?")),
                arguments=event.get("parameters") or {}))
        elif kind == "tool_result":
            _tool_result(parsed, event)
        elif kind == "error":
            parsed.errors.append(str(event.get("message", "")))
        elif kind == "result":
            _result(parsed, event)
    parsed.usage.steps = sum(s.role == Role.ASSISTANT for s in parsed.steps)
    return parsed


def _message(parsed: Parsed, event: dict[str, Any]) -> None:
    content = str(event.get("content", ""))
    if event.get("role") == "assistant":
        _assistant_step(parsed, event, with_text=True).text += content
    else:
        parsed.steps.append(Step(role=Role.USER, text=content, timestamp=event.get("timestamp")))


def _assistant_step(parsed: Parsed, event: dict[str, Any], with_text: bool) -> Step:
    """The model turn being streamed: text comes before the turn's tool calls."""
    last = parsed.steps[-1] if parsed.steps else None
    if last is not None and last.role == Role.ASSISTANT and not (with_text and last.tool_calls):
        return last
    step = Step(role=Role.ASSISTANT, timestamp=event.get("timestamp"))
    parsed.steps.append(step)
    return step


def _tool_result(parsed: Parsed, event: dict[str, Any]) -> None:
    error = event.get("error") or {}
    output = event.get("output") or (error.get("message") if isinstance(error, dict) else "")
    result = ToolResult(call_id=event.get("tool_id"), output=str(output or ""),
                        is_error=event.get("status") != "success")
    last = parsed.steps[-1] if parsed.steps else None
    if last is not None and last.role == Role.TOOL:
        last.tool_results.append(result)
    else:
        parsed.steps.append(Step(role=Role.TOOL, tool_results=[result],
                                 timestamp=event.get("timestamp")))


def _result(parsed: Parsed, event: dict[str, Any]) -> None:
    stats = event.get("stats") or {}
    parsed.usage = Usage(input_tokens=int(stats.get("input_tokens") or 0),
                         output_tokens=int(stats.get("output_tokens") or 0))
    parsed.finished = event.get("status") == "success"
    error = event.get("error")
    if not parsed.finished:
        message = error.get("message") if isinstance(error, dict) else error
        parsed.errors.append(str(message or "gemini reported an error"))
