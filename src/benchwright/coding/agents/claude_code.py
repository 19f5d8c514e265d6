"""Claude Code (`claude`, npm @anthropic-ai/claude-code) driven the way SCBench drives it.

`claude --print --output-format stream-json --verbose --model M --max-turns N --max-budget-usd C
--permission-mode bypassPermissions -- PROMPT`; the thinking budget goes in MAX_THINKING_TOKENS.
The stream's `result` event carries the totals and `total_cost_usd`; a provider failure that
outlasts claude's retries shows as `api_error_status` there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchwright.coding.agents.base import AgentContext, Usage
from benchwright.coding.agents.cli_agent import CliAgent, Launch, Parsed, json_events
from benchwright.coding.agents.toolchain import CLAUDE_CODE
from benchwright.coding.agents.trajectory import Role, Step, ToolCall, ToolResult

DEFAULT_MODEL = "claude-sonnet-4-5"


class ClaudeCodeAgent(CliAgent):
    """Claude Code in print mode, one invocation per checkpoint."""

    name = "claude_code"
    credentials = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
    npm_tool = CLAUDE_CODE

    def launch(self, ctx: AgentContext, home: Path) -> Launch:
        self.model = self.model or DEFAULT_MODEL
        argv = [self.executable, "--print", "--output-format", "stream-json",
                "--verbose", "--model", self.model, "--permission-mode", "bypassPermissions",
                "--no-session-persistence"]
        if self.settings.step_limit:
            argv += ["--max-turns", str(self.settings.step_limit)]
        if self.settings.cost_limit_usd:
            argv += ["--max-budget-usd", f"{self.settings.cost_limit_usd:g}"]
        return Launch(argv=[*argv, "--", ctx.prompt], env=self._env())

    def _env(self) -> dict[str, str]:
        timeout_ms = str(int(self.settings.command_timeout_s * 1000))
        env = {"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               # claude refuses to skip permissions as root; the sandbox is what protects us
               "IS_SANDBOX": "1",
               "CLAUDE_CODE_MAX_RETRIES": str(self.settings.llm_retries),
               "API_TIMEOUT_MS": str(int(self.settings.request_timeout_s * 1000)),
               "BASH_DEFAULT_TIMEOUT_MS": timeout_ms, "BASH_MAX_TIMEOUT_MS": timeout_ms}
        if self.settings.thinking_budget is not None:
            env["MAX_THINKING_TOKENS"] = str(self.settings.thinking_budget)
        url = self.base_url("ANTHROPIC_BASE_URL", with_v1=False)
        return env | ({"ANTHROPIC_BASE_URL": url} if url else {})

    def parse(self, lines: list[str]) -> Parsed:
        return parse_stream(lines)


def parse_stream(lines: list[str]) -> Parsed:
    """claude's stream-json: assistant/user messages, then one `result` event with totals."""
    parsed, calls = Parsed(), _Calls()
    for event in json_events(lines):
        kind = event.get("type")
        if kind == "assistant":
            _assistant(parsed, calls, event)
        elif kind == "user":
            _tool_results(parsed, event)
        elif kind == "result":
            _result(parsed, calls, event)
    if not parsed.usage.steps:
        parsed.usage = calls.totals()
    return parsed


class _Calls:
    """Usage per model call (claude repeats a message's usage on each of its content blocks)."""

    def __init__(self) -> None:
        self.usage: dict[str, dict[str, Any]] = {}
        self.last_id: str | None = None
        """The message id of the last assistant step."""

    def totals(self) -> Usage:
        values = self.usage.values()
        return Usage(input_tokens=sum(_prompt_tokens(u) for u in values),
                     output_tokens=sum(int(u.get("output_tokens") or 0) for u in values),
                     cached_input_tokens=sum(_cache_read(u) for u in values),
                     steps=len(self.usage))


def _assistant(parsed: Parsed, calls: _Calls, event: dict[str, Any]) -> None:
    message = event.get("message") or {}
    if event.get("is_api_error_message") or event.get("error"):
        parsed.errors.append(_text(message.get("content")) or str(event.get("error")))
    if message.get("model") != "<synthetic>" and message.get("id"):
        calls.usage[message["id"]] = message.get("usage") or {}
    step = Step(role=Role.ASSISTANT, timestamp=event.get("timestamp"))
    for block in message.get("content") or []:
        if block.get("type") == "text":
            step.text += block.get("text", "")
        elif block.get("type") == "thinking":
            step.thinking += block.get("thinking", "")
        elif block.get("type") == "tool_use":
            step.tool_calls.append(ToolCall(id=block.get("id"), name=block.get("name", "?"),
                                            arguments=block.get("input") or {}))
    _merge(parsed, calls, step, message)


def _merge(parsed: Parsed, calls: _Calls, step: Step, message: dict[str, Any]) -> None:
    """Blocks of one message arrive as separate events: keep them as one step."""
    usage, message_id = message.get("usage") or {}, message.get("id")
    step.input_tokens = _prompt_tokens(usage) if usage else None
    # The event is written when the message starts: its output count is not final (totals are).
    step.cache_read_tokens = usage.get("cache_read_input_tokens") if usage else None
    last = parsed.steps[-1] if parsed.steps else None
    if last is not None and message_id and calls.last_id == message_id:
        last.text += step.text
        last.thinking += step.thinking
        last.tool_calls += step.tool_calls
        return
    calls.last_id = message_id
    parsed.steps.append(step)


def _tool_results(parsed: Parsed, event: dict[str, Any]) -> None:
    content = (event.get("message") or {}).get("content")
    if isinstance(content, str):
        parsed.steps.append(Step(role=Role.USER, text=content))
        return
    results = [ToolResult(call_id=b.get("tool_use_id"), output=_text(b.get("content")),
                          is_error=bool(b.get("is_error")))
               for b in content or [] if b.get("type") == "tool_result"]
    if results:
        parsed.steps.append(Step(role=Role.TOOL, tool_results=results,
                                 timestamp=event.get("timestamp")))


def _result(parsed: Parsed, calls: _Calls, event: dict[str, Any]) -> None:
    usage = event.get("usage") or {}
    parsed.usage = Usage(input_tokens=_prompt_tokens(usage),
                         output_tokens=int(usage.get("output_tokens") or 0),
                         cached_input_tokens=_cache_read(usage),
                         cost_usd=float(event.get("total_cost_usd") or 0.0),
                         steps=len(calls.usage))
    parsed.cost_reported = "total_cost_usd" in event
    parsed.finished = event.get("subtype") == "success" and not event.get("is_error")
    if not parsed.finished:
        status = event.get("api_error_status")
        reason = event.get("result") or event.get("subtype") or "claude reported an error"
        parsed.errors.append(f"{reason} (HTTP {status})" if status else str(reason))
    parsed.steps.append(Step(role=Role.SYSTEM, text=str(event.get("result") or "")))


def _prompt_tokens(usage: dict[str, Any]) -> int:
    return sum(int(usage.get(k) or 0) for k in
               ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))


def _cache_read(usage: dict[str, Any]) -> int:
    return int(usage.get("cache_read_input_tokens") or 0)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""
