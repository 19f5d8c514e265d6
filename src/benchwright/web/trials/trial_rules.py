"""What a web run's journal records must hold beyond their schema
(`benchwright.runs.journal.RecordRules`): a planned task and trial, steps and seconds that are not
negative, and each trial finished once (a record of an infrastructure error is redone by
`--resume`, so it does not count as the trial's)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.runs.journal import read_jsonl
from benchwright.web.trials.models import TrialRecord, TrialStatus, WebManifest


@dataclass(frozen=True)
class TrialRules:
    """The rules of one web run's trial records."""

    manifest: WebManifest
    """The run's manifest: its planned tasks and trials."""
    tasks: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", frozenset(t.task_id for t in self.manifest.tasks))

    def key(self, record: TrialRecord) -> Hashable:
        """The trial it finishes (none for an infrastructure error, which is redone)."""
        if record.status is TrialStatus.INFRA_ERROR:
            return None
        return f"task {record.task_id} trial {record.trial}"

    def check(self, record: TrialRecord, previous: TrialRecord | None) -> str | None:
        """Why the record cannot be, or None."""
        if record.task_id not in self.tasks:
            return f"task_id: {record.task_id} is not a task of this run"
        if not 1 <= record.trial <= self.manifest.config.trials:
            return f"trial: {record.trial} is not a trial of this run (1 to " \
                   f"{self.manifest.config.trials})"
        if record.steps < 0 or record.duration_s < 0:
            return "steps and duration_s cannot be negative"
        return None


def read_trials(journal: Path, manifest: WebManifest) -> list[TrialRecord]:
    """The run's journal records, each checked against its manifest."""
    return read_jsonl(journal, TrialRecord, TrialRules(manifest))
