"""The `replay` agent: re-applies the snapshots of an earlier run, deterministically."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from benchwright.coding.agents.base import AgentContext, CopyAgent
from benchwright.errors import UserInputError

if TYPE_CHECKING:
    from benchwright.coding.agents.setup import AgentSetup


class ReplayAgent(CopyAgent):
    """Copies `<run>/<problem>/trial_<k>/<checkpoint>/snapshot/` over the workspace."""

    name = "replay"

    @classmethod
    def from_setup(cls, setup: AgentSetup) -> ReplayAgent:
        """Replays `--replay-from`'s snapshots."""
        if setup.replay_from is None:
            raise UserInputError("the replay agent needs --replay-from RUN_DIR")
        return cls(setup.replay_from, set(setup.keep))

    def __init__(self, source_run: Path, keep: set[str]) -> None:
        super().__init__(keep)
        self.source_run = source_run

    def source(self, ctx: AgentContext) -> Path:
        return (self.source_run / ctx.problem / f"trial_{ctx.trial}" / ctx.checkpoint
                / "snapshot")
