"""The `oracle` agent: puts the reference solution in the workspace (the harness's self-check)."""

from __future__ import annotations

import time

from benchwright.coding.agents.base import AgentContext, AgentResult, AgentStatus, replace_workspace
from benchwright.coding.problem import ProblemConfig


class OracleAgent:
    """Copies `solutions/<checkpoint>/` over the workspace."""

    name = "oracle"

    def __init__(self, problem: ProblemConfig, keep: set[str]) -> None:
        self.problem = problem
        self.keep = keep

    def act(self, ctx: AgentContext) -> AgentResult:
        start = time.monotonic()
        solution = self.problem.solution_dir(ctx.checkpoint)
        if not solution.is_dir():
            return AgentResult(status=AgentStatus.ERROR,
                               error=f"the problem has no reference solution at {solution}")
        replace_workspace(ctx.workspace, solution, self.keep)
        return AgentResult(duration_s=round(time.monotonic() - start, 3))

    def cleanup(self) -> None:
        """Nothing to release."""
