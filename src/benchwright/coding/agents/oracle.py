"""The `oracle` agent: puts the reference solution in the workspace (the harness's self-check)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from benchwright.coding.agents.base import AgentContext, CopyAgent
from benchwright.coding.problems.config import ProblemConfig

if TYPE_CHECKING:
    from benchwright.coding.agents.setup import AgentSetup


class OracleAgent(CopyAgent):
    """Copies `solutions/<checkpoint>/` over the workspace."""

    name = "oracle"

    @classmethod
    def from_setup(cls, setup: AgentSetup) -> OracleAgent:
        """The oracle of the setup's problem."""
        return cls(setup.problem, set(setup.keep))

    def __init__(self, problem: ProblemConfig, keep: set[str]) -> None:
        super().__init__(keep)
        self.problem = problem

    def source(self, ctx: AgentContext) -> Path:
        return self.problem.solution_dir(ctx.checkpoint)
