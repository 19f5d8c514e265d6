"""The one settings object every coding agent is built from (`Class.from_setup`, registered in
`benchwright.registry.CODING_AGENTS`), so building an agent never branches on its name. The run
loop makes it from the run's configuration (`benchwright.coding.attempts.agent_factory`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchwright.coding.agents.settings import AgentSettings
from benchwright.coding.problems.config import ProblemConfig
from benchwright.protocols import Limits, Runtime
from benchwright.sandbox.interpreters import Interpreter, resolve_python


@dataclass(frozen=True)
class AgentSetup:
    """What a run gives the agent of one problem."""

    problem: ProblemConfig
    """The problem the agent works on."""
    runtime: Runtime
    """Where the agent's commands run."""
    keep: frozenset[str]
    """Workspace entries the agent must not remove."""
    model: str | None
    """The model name (agents that call an LLM)."""
    settings: AgentSettings
    """Limits, endpoint and retries of agents that call an LLM."""
    limits: Limits
    """Sandbox limits of the agent's turn."""
    network: bool
    """Whether the agent's sandbox has the network."""
    python: str | None = None
    """Interpreter request for the agent's tools."""
    command: str | None = None
    """The `command` agent's shell command."""
    replay_from: Path | None = None
    """The run whose snapshots the `replay` agent re-applies."""
    mounts: tuple[Path, ...] = ()
    """Host paths bound read-only into the `command` agent's sandbox."""
    agent_version: str | None = None
    """The version of a CLI agent to install and run; None: the one benchwright pins."""

    @property
    def interpreter(self) -> Interpreter:
        """The Python the agent's tools run with."""
        return resolve_python(self.python)
