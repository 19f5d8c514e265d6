"""What a coding run's records and manifest must hold beyond their schema, checked as they are
read back (`benchwright.runs.journal.RecordRules`): a journal record belongs to the folder it is
in, its checkpoints go forward, nothing it spent or counted is negative; a manifest names an
agent and a prompt this version knows."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.coding.problems.prompts import BUILTIN_TEMPLATES
from benchwright.errors import UserInputError
from benchwright.runs.journal import JOURNAL_HINT

_NOT_NEGATIVE = ("input_tokens", "output_tokens", "cached_input_tokens", "cost_usd", "steps")


@dataclass(frozen=True)
class CheckpointRules:
    """The rules of checkpoint records (`CheckpointRecord`, or the digests' brief reading)."""

    problem: str | None = None
    """The problem of the journal's folder (None: a file of every attempt's records)."""
    trial: int | None = None
    """The trial of the journal's folder."""

    @classmethod
    def of(cls, journal: Path) -> CheckpointRules:
        """The rules of `<problem>/trial_<k>/journal.jsonl`."""
        trial = journal.parent.name.removeprefix("trial_")
        return cls(journal.parent.parent.name, int(trial) if trial.isdigit() else None)

    def key(self, record: Any) -> Hashable:
        """An attempt's checkpoint, by position."""
        return f"{record.problem}/trial_{record.trial}/checkpoint {record.index}"

    def check(self, record: Any, previous: Any | None) -> str | None:
        """Why the record cannot be, or None."""
        if self.problem is not None and record.problem != self.problem:
            return f"a record of problem {record.problem!r} in the folder of {self.problem!r}"
        if self.trial is not None and record.trial != self.trial:
            return f"a record of trial {record.trial} in the folder of trial {self.trial}"
        if record.trial < 1 or record.index < 1:
            return "trial and index count from 1"
        if previous is not None and (previous.problem, previous.trial) == (
                record.problem, record.trial) and record.index <= previous.index:
            return f"checkpoint {record.index} after checkpoint {previous.index}"
        return _spent(record)


@dataclass(frozen=True)
class JudgeRules:
    """The rules of a judge journal's records (a checkpoint judged again adds a line: the
    latest counts, so records have no key)."""

    problem: str
    """The problem of the journal's folder."""
    trial: int
    """Its trial."""

    def key(self, record: Any) -> Hashable:
        """None: repeats are allowed."""
        return None

    def check(self, record: Any, previous: Any | None) -> str | None:
        """Why the record cannot be, or None."""
        if (record.problem, record.trial) != (self.problem, self.trial):
            return (f"a record of {record.problem!r} trial {record.trial} in the folder of "
                    f"{self.problem!r} trial {self.trial}")
        for name in ("flags", "carried_over", "cost_usd"):
            if getattr(record, name) < 0:
                return f"{name}: {getattr(record, name)} is negative"
        if record.carried_over > record.flags:
            return "carried_over is more than flags"
        return None


def _spent(record: Any) -> str | None:
    """A negative amount the agent spent or the grader took, named."""
    agent = getattr(record, "agent", None)
    usage = getattr(agent, "usage", None)
    amounts = {f"agent.usage.{name}": getattr(usage, name, 0) for name in _NOT_NEGATIVE}
    amounts |= {"agent.duration_s": getattr(agent, "duration_s", 0),
                "grade_duration_s": getattr(record, "grade_duration_s", 0),
                "snapshot_files": getattr(record, "snapshot_files", 0)}
    for name, value in amounts.items():
        if value is not None and value < 0:
            return f"{name}: {value} is negative"
    return None


def check_config(manifest: Path, agent: str, prompt: str) -> None:
    """A manifest's agent and prompt are ones this version can name (a plugin's, a
    "module:Class", a built-in prompt or a template file's absolute path)."""
    from benchwright.registry import CODING_AGENTS

    if agent not in CODING_AGENTS:
        raise UserInputError(f"config.agent: unknown agent {agent[:80]!r}", path=manifest,
                             hint=JOURNAL_HINT)
    if prompt not in BUILTIN_TEMPLATES and not Path(prompt).is_absolute():
        raise UserInputError(f"config.prompt: unknown prompt {prompt[:80]!r}", path=manifest,
                             hint=JOURNAL_HINT)
