"""What a coding run's progress bar counts: the checkpoints that will run, nothing else.

The plan is made after resume has cut every journal back to its valid records, so checkpoints
done before are not counted and ones to redo are. An attempt that stops early (a failed
checkpoint, an error) takes the checkpoints it never reached off the total.
"""

from __future__ import annotations

from benchwright.coding.attempts.models import ChainSummary, CheckpointRecord

Key = tuple[str, int]


class CheckpointTally:
    """Checkpoints finished and still expected in this invocation of a run."""

    def __init__(self) -> None:
        self.plan: dict[Key, tuple[int, int]] = {}
        self.total = 0
        self.completed = 0

    def start(self, plan: dict[Key, tuple[int, int]]) -> None:
        """Each attempt's (checkpoints already done, checkpoints it may still run)."""
        self.plan = dict(plan)
        self.total = sum(to_run for _done, to_run in plan.values())

    def record(self, _record: CheckpointRecord) -> None:
        """A checkpoint finished."""
        self.completed += 1

    def summary(self, summary: ChainSummary) -> None:
        """An attempt ended: the checkpoints it did not reach are no longer expected."""
        done, to_run = self.plan.pop((summary.problem, summary.trial), (0, 0))
        ran = max(0, len(summary.records) - done)
        self.total -= max(0, to_run - ran)
