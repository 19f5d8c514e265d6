"""The `replay` agent: re-applies the snapshots of an earlier run, deterministically."""

from __future__ import annotations

import time
from pathlib import Path

from benchwright.coding.agents.base import AgentContext, AgentResult, AgentStatus, replace_workspace


class ReplayAgent:
    """Copies `<run>/<problem>/trial_<k>/<checkpoint>/snapshot/` over the workspace."""

    name = "replay"

    def __init__(self, source_run: Path, keep: set[str]) -> None:
        self.source_run = source_run
        self.keep = keep

    def act(self, ctx: AgentContext) -> AgentResult:
        start = time.monotonic()
        snapshot = (self.source_run / ctx.problem / f"trial_{ctx.trial}" / ctx.checkpoint
                    / "snapshot")
        if not snapshot.is_dir():
            return AgentResult(status=AgentStatus.ERROR,
                               error=f"the run being replayed has no snapshot at {snapshot}")
        replace_workspace(ctx.workspace, snapshot, self.keep)
        return AgentResult(duration_s=round(time.monotonic() - start, 3))

    def cleanup(self) -> None:
        """Nothing to release."""
