"""Where each file of a web run directory lives."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from benchwright.runs.layout import RunFiles
from benchwright.web.evaluation.scoring import TRIAL_PREFIX

JOURNAL: Final = "journal.jsonl"
TASKS: Final = "tasks"


class WebRunLayout(RunFiles):
    """Paths inside one web run directory."""

    @property
    def journal(self) -> Path:
        return self.root / JOURNAL

    @property
    def tasks_dir(self) -> Path:
        """The official layout (`<task_id>/trial_<n>/`) that scoring reads."""
        return self.root / TASKS

    def trial_dir(self, task_id: int, trial: int) -> Path:
        return self.tasks_dir / str(task_id) / f"{TRIAL_PREFIX}{trial}"

    def trial_dirs(self) -> list[Path]:
        """Every trial folder present, finished or not."""
        if not self.tasks_dir.is_dir():
            return []
        return sorted(p for p in self.tasks_dir.glob(f"*/{TRIAL_PREFIX}*") if p.is_dir())
