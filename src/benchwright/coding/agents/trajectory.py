"""The normalised trajectory every LLM agent leaves behind: `trajectory.json`, one per checkpoint.

Each adapter parses its agent's native log (claude's stream-json, codex's JSON events, ...) into
this one format and writes it into `AgentContext.artifacts_dir`, the raw log beside it. Readers
check `format` and refuse versions they do not know. A step is one message of the conversation:
the model's turn (text, thinking, tool calls) or the tools' answers to it.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchwright.coding.agents.base import AgentStatus, Usage
from benchwright.files.atomic import write_text_atomic

TRAJECTORY_FILE = "trajectory.json"


class Role(StrEnum):
    """Who produced a step."""

    SYSTEM = "system"
    """The agent's own setup or status (system prompt, init event, a final result summary)."""
    USER = "user"
    """The task or a human's message."""
    ASSISTANT = "assistant"
    """The model: text, thinking and tool calls."""
    TOOL = "tool"
    """Tool results sent back to the model."""


class CostSource(StrEnum):
    """Where a trajectory's cost comes from."""

    AGENT = "agent"
    """The agent reported it (claude's total_cost_usd, opencode's per-step cost)."""
    PRICE_TABLE = "price_table"
    """Computed from token counts with `benchwright.llm.pricing`."""
    UNKNOWN = "unknown"
    """Neither: the model is not in the price table and the agent did not say."""


class ToolCall(BaseModel):
    """One tool call the model asked for."""

    id: str | None = None
    """The call's id as the protocol gave it (matches `ToolResult.call_id`)."""
    name: str
    """The tool's name as the agent declared it (`Bash`, `shell`, `write_file`, ...)."""
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """The arguments: parsed JSON when they were JSON, else the raw string."""


class ToolResult(BaseModel):
    """What a tool returned."""

    call_id: str | None = None
    """The id of the call it answers."""
    name: str | None = None
    """The tool's name, when the log gives it."""
    output: str = ""
    """The tool's output as text (truncated by the agent, not by us)."""
    is_error: bool = False
    """Whether the agent marked the call as failed."""


class Step(BaseModel):
    """One message of the conversation."""

    role: Role
    """Who produced it."""
    text: str = ""
    """Visible text (the model's answer, the user's task, a status line)."""
    thinking: str = ""
    """The model's reasoning, when the agent logs it."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Tool calls the model made in this step."""
    tool_results: list[ToolResult] = Field(default_factory=list)
    """Tool results carried by this step (role `tool`, sometimes `user` in Anthropic terms)."""
    input_tokens: int | None = None
    """Prompt tokens of the model call behind this step, when the log attributes them."""
    output_tokens: int | None = None
    """Generated tokens of that model call, when the log attributes them."""
    cache_read_tokens: int | None = None
    """Prompt tokens served from the provider's cache, when reported."""
    timestamp: str | None = None
    """When the step happened (ISO 8601), when the log says."""
    duration_s: float | None = None
    """Seconds the step took (a model turn: the call and its tools' runs), when measured."""


class Trajectory(BaseModel):
    """`trajectory.json`: what one agent did on one checkpoint, in one format for all agents."""

    format: Literal["benchwright.trajectory/1"] = "benchwright.trajectory/1"
    """The file's format and version."""
    agent: str
    """The adapter's registered name (`claude_code`, `codex`, `mini`, ...)."""
    agent_version: str | None = None
    """The agent's own version (the npm package's, the library's)."""
    model: str | None = None
    """The model the agent was asked to use."""
    steps: list[Step] = Field(default_factory=list)
    """The conversation, in order."""
    usage: Usage = Field(default_factory=Usage)
    """Totals over the checkpoint: tokens, cost and model calls (`steps` counts model turns)."""
    cost_source: CostSource = CostSource.UNKNOWN
    """Where `usage.cost_usd` comes from."""
    exit_status: AgentStatus = AgentStatus.COMPLETED
    """How the agent's turn ended."""
    exit_code: int | None = None
    """The agent process's exit code (None for in-process agents)."""
    error: str | None = None
    """What went wrong, when something did (secrets redacted)."""
    raw_log: str | None = None
    """The native log's file name beside this file, if one was kept."""

    @property
    def cost_usd(self) -> float | None:
        """The checkpoint's cost in US dollars (None when unknown)."""
        return self.usage.cost_usd

    def write(self, folder: Path) -> Path:
        """Save as `folder/trajectory.json`; returns the path."""
        path = folder / TRAJECTORY_FILE
        write_text_atomic(path, self.model_dump_json(indent=2) + "\n")
        return path


def load_trajectory(path: Path) -> Trajectory:
    """Read a `trajectory.json` (a wrong format is a validation error)."""
    return Trajectory.model_validate_json(path.read_text())
