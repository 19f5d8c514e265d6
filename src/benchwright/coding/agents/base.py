"""What an agent is given for one checkpoint, and what it reports back."""

from __future__ import annotations

import shutil
import time
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from benchwright.files.nofollow import remove_tree
from benchwright.sandbox.interpreters import Interpreter


class AgentStatus(StrEnum):
    """How the agent's turn ended."""

    COMPLETED = "completed"
    """The agent finished on its own."""
    ERROR = "error"
    """The agent failed (non-zero exit, exception); the workspace is graded as it is."""
    TIMEOUT = "timeout"
    """The agent ran out of time and was stopped; the workspace is graded as it is."""
    INFRA_ERROR = "infra_error"
    """The model provider failed (429, 5xx, timeouts) after retries: not the agent's fault.

    The checkpoint is not graded, is left out of agent scores, and `--resume` redoes it."""


class Usage(BaseModel):
    """What the agent spent."""

    input_tokens: int = 0
    """Prompt tokens sent to the model."""
    output_tokens: int = 0
    """Tokens the model generated."""
    cached_input_tokens: int = 0
    """Of the prompt tokens, those read from the provider's cache (0 when the agent does not
    report it)."""
    cost_usd: float | None = 0.0
    """Cost in US dollars, from the agent's own report or a price table; None: unknown (tokens
    spent on a model with no price), never shown as 0."""
    steps: int = 0
    """Agent steps (model calls or actions)."""


class AgentContext(BaseModel):
    """Everything an agent gets for one checkpoint."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    problem: str
    """The problem's name."""
    problem_dir: Path
    """The problem folder (agents must not read its tests; the oracle reads its solutions)."""
    checkpoint: str
    """The checkpoint to implement."""
    trial: int
    """The trial number, from 1."""
    workspace: Path
    """The folder to change; the previous checkpoint's result is already in it."""
    prompt: str
    """The rendered prompt."""
    prompt_file: Path
    """The prompt as a file, outside the workspace."""
    is_continuation: bool
    """True from the second checkpoint on."""
    artifacts_dir: Path
    """Where the agent may keep logs and trajectories (saved with the run)."""


class AgentResult(BaseModel):
    """What the agent reports after one checkpoint."""

    status: AgentStatus = AgentStatus.COMPLETED
    """How its turn ended."""
    usage: Usage = Field(default_factory=Usage)
    """What it spent."""
    duration_s: float = 0.0
    """Wall-clock seconds it took."""
    error: str | None = None
    """What went wrong, when it did."""
    exit_code: int | None = None
    """The agent process's exit code, for agents that run one (None: none ran, or not known)."""
    started_at: str | None = None
    """When the run loop started the agent's turn (UTC, ISO 8601; None in records written
    before this field)."""
    ended_at: str | None = None
    """When the turn ended (UTC, ISO 8601)."""


def sandbox_env(interpreter: Interpreter, home: Path) -> dict[str, str]:
    """The environment every sandboxed agent command starts from: the problem's Python first on
    PATH, HOME in the agent's own folder, a fixed locale and time zone."""
    return {"PATH": f"{interpreter.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home), "LANG": "C.UTF-8", "TZ": "UTC"}


def replace_workspace(workspace: Path, source: Path, keep: set[str]) -> None:
    """Make `workspace` hold exactly `source`'s files, leaving top-level entries in `keep`."""
    for entry in workspace.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink()
    shutil.copytree(source, workspace, dirs_exist_ok=True, symlinks=True)


class Agent(Protocol):
    """Something that changes a workspace to meet a checkpoint's spec."""

    name: str

    def act(self, ctx: AgentContext) -> AgentResult:
        """Work on one checkpoint in `ctx.workspace`; return status, usage and timing."""
        ...

    def cleanup(self) -> None:
        """Release whatever the agent holds (processes, temporary files)."""
        ...


class CopyAgent:
    """An agent that makes the workspace a copy of a stored snapshot (oracle, replay)."""

    name = ""

    def __init__(self, keep: set[str]) -> None:
        self.keep = keep

    @classmethod
    def pinned_version(cls, benchwright_version: str) -> str | None:
        """Part of benchwright: its version is the one that ran the run."""
        return benchwright_version

    def source(self, ctx: AgentContext) -> Path:
        """The snapshot to copy for this checkpoint."""
        raise NotImplementedError

    def act(self, ctx: AgentContext) -> AgentResult:
        start = time.monotonic()
        source = self.source(ctx)
        if not source.is_dir():
            return AgentResult(status=AgentStatus.ERROR,
                               error=f"{self.name}: nothing to copy at {source}")
        replace_workspace(ctx.workspace, source, self.keep)
        return AgentResult(duration_s=round(time.monotonic() - start, 3))

    def cleanup(self) -> None:
        """Nothing to release."""
