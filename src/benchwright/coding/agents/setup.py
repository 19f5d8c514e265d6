"""The one settings object every coding agent is built from (`Class.from_setup`, registered in
`benchwright.registry.CODING_AGENTS`), so building an agent never branches on its name."""

from __future__ import annotations

from dataclasses import dataclass

from benchwright.coding.problem import ProblemConfig
from benchwright.coding.runs.models import RunConfig
from benchwright.interpreters import Interpreter, resolve_python
from benchwright.protocols import Runtime


@dataclass(frozen=True)
class AgentSetup:
    """What a run gives the agent of one problem."""

    config: RunConfig
    """The run's configuration (agent name, model, settings, limits, network, mounts)."""
    problem: ProblemConfig
    """The problem the agent works on."""
    runtime: Runtime
    """Where the agent's commands run."""
    keep: frozenset[str]
    """Workspace entries the agent must not remove."""

    @property
    def interpreter(self) -> Interpreter:
        """The Python the agent's tools run with."""
        return resolve_python(self.config.python)
