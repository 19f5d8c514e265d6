"""opencode (`opencode`, npm opencode-ai) driven the way SCBench drives it.

`opencode run PROMPT --format json --model PROVIDER/MODEL`, with opencode.json in the isolated
HOME: every permission allowed (the sandbox is the boundary), no sharing or updates, the step cap
on the `build` agent, the provider's base URL when `--base-url` is given, and the thinking budget
as the provider's own model option. Usage and cost come from the `step_finish` events (opencode
prices them itself), else the price table. opencode retries provider errors on its own terms and
has no spend limit: the step cap and the wall clock bound it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchwright.coding.agents.base import AgentContext, Usage
from benchwright.coding.agents.chat_client import reasoning_effort
from benchwright.coding.agents.cli_agent import CliAgent, Launch, Parsed, json_events
from benchwright.coding.agents.toolchain import OPENCODE
from benchwright.coding.agents.trajectory import Role, Step, ToolCall, ToolResult
from benchwright.errors import UserInputError

DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"
# provider: (base URL variable, the API path under it, model-name prefixes)
PROVIDERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "anthropic": ("ANTHROPIC_BASE_URL", "/v1", ("claude",)),
    "openai": ("OPENAI_BASE_URL", "/v1", ("gpt", "o1", "o3", "o4", "codex")),
    "google": ("GOOGLE_GEMINI_BASE_URL", "/v1beta", ("gemini",)),
}


class OpencodeAgent(CliAgent):
    """`opencode run`, one invocation per checkpoint."""

    name = "opencode"
    credentials = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                   "GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY")
    npm_tool = OPENCODE

    def launch(self, ctx: AgentContext, home: Path) -> Launch:
        self.model = qualified(self.model or DEFAULT_MODEL)
        argv = [self.executable, "run", ctx.prompt, "--format", "json", "--model", self.model]
        env = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
               "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
               "OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS":
                   str(int(self.settings.command_timeout_s * 1000))}
        if "GEMINI_API_KEY" in self.secrets and "GOOGLE_GENERATIVE_AI_API_KEY" not in self.secrets:
            self.secrets["GOOGLE_GENERATIVE_AI_API_KEY"] = self.secrets["GEMINI_API_KEY"]
        return Launch(argv=argv, env=env,
                      files={".config/opencode/opencode.json": self.config_json()})

    def config_json(self) -> str:
        """opencode's global config (no credentials: keys stay in the environment)."""
        provider, _, model = (self.model or DEFAULT_MODEL).partition("/")
        entry: dict[str, Any] = {}
        if provider in PROVIDERS:
            variable, path, _ = PROVIDERS[provider]
            url = self.base_url(variable, with_v1=False)
            if url:
                entry["options"] = {"baseURL": url + path}
            thinking = _thinking_option(provider, self.settings.thinking_budget)
            if thinking:
                entry["models"] = {model: {"options": thinking}}
        config: dict[str, Any] = {"$schema": "https://opencode.ai/config.json",
                                  "autoupdate": False, "share": "disabled",
                                  "permission": {"*": "allow"}}
        if entry:
            config["provider"] = {provider: entry}
        if self.settings.step_limit:
            config["agent"] = {"build": {"steps": self.settings.step_limit}}
        return json.dumps(config, indent=2)

    def parse(self, lines: list[str]) -> Parsed:
        return parse_events(lines)


def qualified(model: str) -> str:
    """`provider/model` as opencode wants it; a bare name gets its provider from its prefix."""
    if "/" in model:
        return model
    for provider, (_, _, prefixes) in PROVIDERS.items():
        if model.lower().startswith(prefixes):
            return f"{provider}/{model}"
    raise UserInputError(f"opencode needs the model as PROVIDER/MODEL, got {model!r}",
                         hint="e.g. --model anthropic/claude-sonnet-4-5 or openai/gpt-5")


def _thinking_option(provider: str, budget: int | None) -> dict[str, Any]:
    if budget is None:
        return {}
    if provider == "anthropic":
        return {"thinking": {"type": "enabled", "budgetTokens": budget} if budget
                else {"type": "disabled"}}
    if provider == "google":
        return {"thinkingConfig": {"thinkingBudget": budget}}
    if provider == "openai":
        return {"reasoningEffort": reasoning_effort(budget)}
    return {}


def parse_events(lines: list[str]) -> Parsed:
    """opencode's `--format json` events: parts of each step, a `step_finish` with its usage."""
    parsed, last_reason = Parsed(), None
    cost = 0.0
    for event in json_events(lines):
        kind, part = event.get("type"), event.get("part") or {}
        if kind == "step_start":
            parsed.steps.append(Step(role=Role.ASSISTANT))
        elif kind == "text":
            _current(parsed).text += str(part.get("text", ""))
        elif kind == "reasoning":
            _current(parsed).thinking += str(part.get("text", ""))
        elif kind == "tool_use":
            _tool(parsed, part)
        elif kind == "step_finish":
            last_reason = part.get("reason")
            cost += float(part.get("cost") or 0.0)
            _add_usage(parsed, part.get("tokens") or {})
        elif kind == "error":
            parsed.errors.append(_error_message(event.get("error") or {}))
    parsed.usage.cost_usd = round(cost, 6)
    parsed.cost_reported = cost > 0
    parsed.finished = last_reason == "stop" and not parsed.errors
    return parsed


def _current(parsed: Parsed) -> Step:
    """The assistant step being built (the one after the last `step_start`)."""
    for step in reversed(parsed.steps):
        if step.role == Role.ASSISTANT:
            return step
    step = Step(role=Role.ASSISTANT)
    parsed.steps.append(step)
    return step


def _tool(parsed: Parsed, part: dict[str, Any]) -> None:
    state, call_id, name = part.get("state") or {}, part.get("callID"), str(part.get("tool", "?"))
    _current(parsed).tool_calls.append(
        ToolCall(id=call_id, name=name, arguments=state.get("input") or {}))
    output = state.get("output") if state.get("status") == "completed" else state.get("error")
    parsed.steps.append(Step(role=Role.TOOL, tool_results=[ToolResult(
        call_id=call_id, name=name, output=str(output or ""),
        is_error=state.get("status") == "error" or name == "invalid")]))


def _add_usage(parsed: Parsed, tokens: dict[str, Any]) -> None:
    cache = tokens.get("cache") or {}
    prompt = sum(int(v or 0) for v in (tokens.get("input"), cache.get("read"), cache.get("write")))
    output = int(tokens.get("output") or 0) + int(tokens.get("reasoning") or 0)
    total = parsed.usage
    parsed.usage = Usage(input_tokens=total.input_tokens + prompt,
                         output_tokens=total.output_tokens + output, steps=total.steps + 1)
    step = _current(parsed)
    step.input_tokens, step.output_tokens = prompt, output
    step.cache_read_tokens = int(cache.get("read") or 0)


def _error_message(error: dict[str, Any]) -> str:
    data = error.get("data") or {}
    status = data.get("statusCode")
    message = str(data.get("message") or error.get("name") or "opencode reported an error")
    return f"{message} (HTTP {status})" if status else message
