"""The `mini` agent: a minimal bash agent on the openai SDK, in the spirit of mini-swe-agent.

One tool, `bash`: every command runs in the checkpoint's workspace inside the sandbox (no
network; with `--agent-network`, the package indexes through the egress proxy), with its output
returned to the model. The agent stops when the model answers without a tool call, or at the
step or cost limit. Model calls are made from
the harness (see `chat_client` for providers, keys and retries); usage is summed from the
replies and priced with the price table. `trajectory.json` is written after every step.
Why our own loop rather than the mini-swe-agent library: docs/agents.md.
"""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Self

from benchwright.coding.agents.base import (
    AgentContext,
    AgentResult,
    AgentStatus,
    Usage,
    sandbox_env,
)
from benchwright.coding.agents.chat_client import ChatClient, describe, resolve_target
from benchwright.coding.agents.network import run_with_egress
from benchwright.coding.agents.settings import AgentSettings
from benchwright.coding.agents.trajectory import (
    CostSource,
    Role,
    Step,
    ToolCall,
    ToolResult,
    Trajectory,
)
from benchwright.errors import ProviderUnavailable, UserInputError
from benchwright.files.owned_temp import OwnedTemp
from benchwright.llm.pricing import cost_of, run_price
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import ExecResult, Limits, Mount
from benchwright.sandbox.capped_output import CappedPipe
from benchwright.sandbox.egress.proxy import index_endpoints
from benchwright.sandbox.interpreters import Interpreter
from benchwright.version import __version__

if TYPE_CHECKING:
    from benchwright.coding.agents.setup import AgentSetup

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

SYSTEM_PROMPT = """\
You are an autonomous software engineer working in a Linux shell, in the project's folder.
Use the `bash` tool to inspect files, write code and run it; each call runs in a fresh shell in
that folder (state such as `cd` or exported variables does not carry over). Work until the task
is complete and you have checked your work, then reply with a short summary and no tool call:
a reply without a tool call ends your turn."""
BASH_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "bash", "description": "Run a bash command in the project folder; returns its "
    "exit code and combined output.",
    "parameters": {"type": "object", "required": ["command"],
                   "properties": {"command": {"type": "string",
                                              "description": "The command to run."}}}}}
OUTPUT_LIMIT = 10_000

MINI_HOME_PREFIX = "benchwright-mini-"
"""The agent's home for its commands, one per checkpoint (owned: `benchwright.files.owned_temp`)."""


class MiniAgent:
    """The bash-tool loop."""

    name = "mini"

    @classmethod
    def pinned_version(cls, benchwright_version: str) -> str | None:
        """Part of benchwright: its version is the one that ran the run."""
        return benchwright_version

    @classmethod
    def from_setup(cls, setup: AgentSetup) -> Self:
        """Built from the run's model and agent settings (it calls an LLM itself)."""
        return cls(setup.model, setup.settings, setup.runtime, setup.limits, setup.interpreter,
                   setup.network)

    def __init__(self, model: str | None, settings: AgentSettings, runtime: Runtime,
                 limits: Limits, interpreter: Interpreter, network: bool = False) -> None:
        if not model:
            raise UserInputError("the mini agent needs a model",
                                 hint="pass --model, e.g. --model openai/gpt-4.1")
        self.model, self.settings = model, settings
        self.runtime, self.interpreter, self.network = runtime, interpreter, network
        self.limits = limits.model_copy(update={"wall_clock_s": settings.command_timeout_s})
        self.client = ChatClient(resolve_target(model, settings.base_url), settings)
        self.price = run_price(model, settings.input_price_per_mtok,
                               settings.output_price_per_mtok)

    def act(self, ctx: AgentContext) -> AgentResult:
        start = time.monotonic()
        session = _Session(self, ctx)
        with OwnedTemp(MINI_HOME_PREFIX) as home:  # a kill -9 leaves it to the next start's sweep
            status, error = self._loop(session, home)
        session.save(status, error)
        return AgentResult(status=status, usage=session.usage, error=error,
                           duration_s=round(time.monotonic() - start, 3))

    def cleanup(self) -> None:
        """Nothing to release: each command's sandbox is gone when it returns."""

    def _loop(self, session: _Session, home: Path) -> tuple[AgentStatus, str | None]:
        import openai

        while (limit := session.limit_reached()) is None:
            session.turn_started()
            try:
                reply = self.client.complete(session.messages, [BASH_TOOL])
            except ProviderUnavailable as exc:
                return AgentStatus.INFRA_ERROR, exc.one_line()
            except openai.APIError as exc:
                return AgentStatus.ERROR, f"the model provider refused the call: {describe(exc)}"
            calls = session.add_reply(reply)
            if not calls:
                return AgentStatus.COMPLETED, None
            for call in calls:
                session.add_result(call, self._bash(call, session.ctx, home))
            session.turn_ended()
            session.save(AgentStatus.COMPLETED, None)
        return AgentStatus.ERROR, limit

    def _run(self, argv: list[str], ctx: AgentContext, env: dict[str, str],
             mounts: list[Mount], out: IO[bytes] | int) -> ExecResult:
        """A command; with `--agent-network` it reaches the package indexes and nothing else
        (the model is called by the harness, never from the sandbox)."""
        if not self.network:
            return self.runtime.run(argv, cwd=ctx.workspace, env=env, mounts=mounts,
                                    limits=self.limits, stdout=out, stderr=subprocess.STDOUT)
        return run_with_egress(self.runtime, argv, allow=index_endpoints(),
                               python=self.interpreter.executable, cwd=ctx.workspace, env=env,
                               mounts=mounts, limits=self.limits, stdout=out,
                               stderr=subprocess.STDOUT)

    def _bash(self, call: dict[str, Any], ctx: AgentContext, home: Path) -> str:
        command = _command(call)
        if command is None:
            return 'error: call bash with JSON arguments {"command": "..."}'
        env = {**sandbox_env(self.interpreter, home), "TERM": "dumb"}
        mounts = [Mount(path=self.interpreter.prefix), Mount(path=ctx.workspace, writable=True),
                  Mount(path=home, writable=True)]
        # Read through a capped pipe: a command that prints gigabytes costs the harness the head
        # and tail it keeps (with how much was cut), streamed past, never the whole.
        capture = CappedPipe(OUTPUT_LIMIT)
        try:
            result = self._run(["/bin/bash", "-c", command], ctx, env, mounts, capture.write_fd)
        finally:
            output = capture.finish().decode(errors="replace")
        if result.timed_out:
            return f"timed out after {self.limits.wall_clock_s:g} s\n{_clip(output)}"
        if result.memory_exceeded:
            output = ("killed: the command went over the sandbox's memory limit\n" + output)
        return f"exit code {result.exit_code}\n{_clip(output)}"


class _Session:
    """One checkpoint's conversation, usage and trajectory."""

    def __init__(self, agent: MiniAgent, ctx: AgentContext) -> None:
        self.agent, self.ctx = agent, ctx
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                               {"role": "user", "content": ctx.prompt}]
        self.steps = [Step(role=Role.SYSTEM, text=SYSTEM_PROMPT),
                      Step(role=Role.USER, text=ctx.prompt)]
        self.usage = Usage()
        self.turn_start, self.turn_at = time.monotonic(), datetime.now(UTC)

    def turn_started(self) -> None:
        self.turn_start, self.turn_at = time.monotonic(), datetime.now(UTC)

    def turn_ended(self) -> None:
        """The turn's time: its model call and its commands."""
        turn = next(s for s in reversed(self.steps) if s.role == Role.ASSISTANT)
        turn.duration_s = round(time.monotonic() - self.turn_start, 3)

    def limit_reached(self) -> str | None:
        settings = self.agent.settings
        if 0 < settings.step_limit <= self.usage.steps:
            return f"stopped at the step limit ({settings.step_limit} model calls)"
        if 0 < settings.cost_limit_usd <= (self.usage.cost_usd or 0.0):
            return f"stopped at the cost limit (${settings.cost_limit_usd:g})"
        return None

    def add_reply(self, reply: ChatCompletion) -> list[dict[str, Any]]:
        """Count the reply, remember it; returns its tool calls."""
        message = reply.choices[0].message
        tokens = (reply.usage.prompt_tokens, reply.usage.completion_tokens) if reply.usage \
            else (0, 0)
        cost = cost_of(self.agent.price, *tokens)
        spent = self.usage.cost_usd
        self.usage = Usage(input_tokens=self.usage.input_tokens + tokens[0],
                           output_tokens=self.usage.output_tokens + tokens[1],
                           cost_usd=None if cost is None or spent is None
                           else round(spent + cost, 8),
                           steps=self.usage.steps + 1)
        calls = [c.model_dump(exclude_none=True) for c in message.tool_calls or []
                 if c.type == "function"]
        self.messages.append({"role": "assistant", "content": message.content,
                              **({"tool_calls": calls} if calls else {})})
        self.steps.append(Step(role=Role.ASSISTANT, text=message.content or "",
                               tool_calls=[_traj_call(c) for c in calls],
                               input_tokens=tokens[0], output_tokens=tokens[1],
                               timestamp=self.turn_at.isoformat(timespec="seconds"),
                               duration_s=round(time.monotonic() - self.turn_start, 3)))
        return calls

    def add_result(self, call: dict[str, Any], output: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
        self.steps.append(Step(role=Role.TOOL, tool_results=[ToolResult(
            call_id=call["id"], name=call["function"]["name"], output=output,
            is_error=not output.startswith("exit code 0"))]))

    def save(self, status: AgentStatus, error: str | None) -> None:
        Trajectory(agent="mini", agent_version=__version__, model=self.agent.model,
                   steps=self.steps, usage=self.usage, exit_status=status, error=error,
                   cost_source=CostSource.PRICE_TABLE if self.agent.price else CostSource.UNKNOWN
                   ).write(self.ctx.artifacts_dir)


def _command(call: dict[str, Any]) -> str | None:
    try:
        arguments = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError:
        return None
    command = arguments.get("command") if isinstance(arguments, dict) else None
    return command if isinstance(command, str) and call["function"]["name"] == "bash" else None


def _traj_call(call: dict[str, Any]) -> ToolCall:
    raw = call["function"]["arguments"] or ""
    try:
        arguments: dict[str, Any] | str = json.loads(raw)
    except json.JSONDecodeError:
        arguments = raw
    return ToolCall(id=call["id"], name=call["function"]["name"],
                    arguments=arguments if isinstance(arguments, dict) else raw)


def _clip(output: str) -> str:
    if len(output) <= OUTPUT_LIMIT + 100:  # a capped read's note fits
        return output
    half = OUTPUT_LIMIT // 2
    return f"{output[:half]}\n[... {len(output) - OUTPUT_LIMIT} characters left out ...]\n" \
           f"{output[-half:]}"
