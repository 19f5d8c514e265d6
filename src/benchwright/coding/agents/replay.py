"""The `replay` agent: re-applies the snapshots of an earlier run, deterministically."""

from __future__ import annotations

from pathlib import Path

from benchwright.coding.agents.base import AgentContext, CopyAgent


class ReplayAgent(CopyAgent):
    """Copies `<run>/<problem>/trial_<k>/<checkpoint>/snapshot/` over the workspace."""

    name = "replay"

    def __init__(self, source_run: Path, keep: set[str]) -> None:
        super().__init__(keep)
        self.source_run = source_run

    def source(self, ctx: AgentContext) -> Path:
        return (self.source_run / ctx.problem / f"trial_{ctx.trial}" / ctx.checkpoint
                / "snapshot")
