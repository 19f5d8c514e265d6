"""OpenAI Codex CLI (`codex`, npm @openai/codex) driven the way SCBench drives it.

`codex exec PROMPT --skip-git-repo-check --json --dangerously-bypass-approvals-and-sandbox
--model M`, with CODEX_HOME in the isolated HOME. A provider of our own in its config.toml points
at `--base-url` (else api.openai.com) over plain HTTPS, with the key from $OPENAI_API_KEY and our
retry counts; the thinking budget becomes `model_reasoning_effort`. Usage comes from the
`turn.completed` event, cost from the price table. codex has no turn or spend limit of its own:
only the wall clock (`--agent-timeout`) bounds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchwright.coding.agents.base import AgentContext, Usage
from benchwright.coding.agents.chat_client import reasoning_effort
from benchwright.coding.agents.cli_agent import CliAgent, Launch, Parsed, json_events
from benchwright.coding.agents.toolchain import CODEX
from benchwright.coding.agents.trajectory import Role, Step, ToolCall, ToolResult

DEFAULT_MODEL = "gpt-5-codex"
OPENAI_URL = "https://api.openai.com/v1"
_ACTIONS = {"command_execution", "file_change", "mcp_tool_call", "web_search"}


class CodexAgent(CliAgent):
    """`codex exec`, one invocation per checkpoint."""

    name = "codex"
    credentials = ("OPENAI_API_KEY",)
    npm_tool = CODEX

    def launch(self, ctx: AgentContext, home: Path) -> Launch:
        self.model = self.model or DEFAULT_MODEL
        argv = [self.executable, "exec", ctx.prompt, "--skip-git-repo-check", "--json",
                "--dangerously-bypass-approvals-and-sandbox", "--model", self.model]
        effort = reasoning_effort(self.settings.thinking_budget)
        if effort is not None:
            argv += ["-c", f"model_reasoning_effort={effort}"]
        return Launch(argv=argv, env={"CODEX_HOME": str(home / ".codex")},
                      files={".codex/config.toml": self.config_toml()})

    def config_toml(self) -> str:
        """The provider and policies; the key itself is read by codex from $OPENAI_API_KEY."""
        url = self.base_url("OPENAI_BASE_URL", with_v1=True) or OPENAI_URL
        timeout_ms = int(self.settings.request_timeout_s * 1000)
        retries = self.settings.llm_retries
        return "\n".join([
            'model_provider = "benchwright"', "", "[analytics]", "enabled = false", "",
            "[model_providers.benchwright]", 'name = "benchwright"',
            f"base_url = {json.dumps(url)}", 'env_key = "OPENAI_API_KEY"',
            'wire_api = "responses"', "supports_websockets = false",
            f"request_max_retries = {retries}", f"stream_max_retries = {retries}",
            f"stream_idle_timeout_ms = {timeout_ms}", ""])

    def parse(self, lines: list[str]) -> Parsed:
        return parse_events(lines)


def parse_events(lines: list[str]) -> Parsed:
    """codex's `--json` events: items as they complete, usage per turn, errors."""
    parsed = Parsed()
    failed = completed = False
    for event in json_events(lines):
        kind = event.get("type")
        if kind == "item.completed":
            _item(parsed, event.get("item") or {})
        elif kind == "turn.completed":
            completed = True
            _add_usage(parsed, event.get("usage") or {})
        elif kind == "turn.failed":
            failed = True
            parsed.errors.append(str((event.get("error") or {}).get("message", "turn failed")))
        elif kind == "error":
            parsed.errors.append(str(event.get("message", "")))
    parsed.finished = completed and not failed
    parsed.usage.steps = sum(bool(s.tool_calls) for s in parsed.steps) + any(
        s.role == Role.ASSISTANT and s.text and not s.tool_calls for s in parsed.steps)
    return parsed


def _item(parsed: Parsed, item: dict[str, Any]) -> None:
    kind = item.get("type")
    if kind == "agent_message":
        parsed.steps.append(Step(role=Role.ASSISTANT, text=str(item.get("text", ""))))
    elif kind == "reasoning":
        parsed.steps.append(Step(role=Role.ASSISTANT, thinking=str(item.get("text", ""))))
    elif kind in _ACTIONS:
        _action(parsed, kind, item)
    elif kind == "error":
        parsed.steps.append(Step(role=Role.SYSTEM, text=str(item.get("message", ""))))


def _action(parsed: Parsed, kind: str, item: dict[str, Any]) -> None:
    call_id = item.get("id")
    if kind == "command_execution":
        call = ToolCall(id=call_id, name="exec_command", arguments={"cmd": item.get("command")})
        result = ToolResult(call_id=call_id, name="exec_command",
                            output=str(item.get("aggregated_output", "")),
                            is_error=item.get("exit_code") not in (0, None))
    else:
        name = str(item.get("tool") or kind)
        arguments = {k: v for k, v in item.items() if k not in ("id", "type", "status")}
        call = ToolCall(id=call_id, name=name, arguments=arguments)
        result = ToolResult(call_id=call_id, name=name, output=str(item.get("result") or ""),
                            is_error=item.get("status") == "failed")
    parsed.steps.append(Step(role=Role.ASSISTANT, tool_calls=[call]))
    parsed.steps.append(Step(role=Role.TOOL, tool_results=[result]))


def _add_usage(parsed: Parsed, usage: dict[str, Any]) -> None:
    total = parsed.usage
    parsed.usage = Usage(input_tokens=total.input_tokens + int(usage.get("input_tokens") or 0),
                         output_tokens=total.output_tokens + int(usage.get("output_tokens") or 0))
