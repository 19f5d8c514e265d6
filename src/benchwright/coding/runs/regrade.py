"""`benchwright eval RUN_DIR`: grade every saved snapshot again, offline, and say what changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from benchwright.coding.artifacts import save_grade_output
from benchwright.coding.grading import GradeOptions, grader_of
from benchwright.coding.loader import get_checkpoint, load_problem
from benchwright.coding.runs import journal
from benchwright.coding.runs.chain import grade_fields
from benchwright.coding.runs.layout import RunLayout
from benchwright.coding.runs.models import CheckpointRecord, RunResult
from benchwright.coding.runs.runner import finish, load_manifest, saved_attempt
from benchwright.sandbox import get_runtime


class VerdictChange(BaseModel):
    """A checkpoint whose grade differs from the one saved in the run."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    checkpoint: str
    """The checkpoint."""
    what: str
    """The policy, or `Group` counts, that changed."""
    before: str
    """The saved value."""
    after: str
    """The new value."""


def regrade_run(
    run_dir: Path, on_checkpoint: Callable[[str], None] = lambda _s: None
) -> tuple[list[VerdictChange], RunResult]:
    """Grade every snapshot of the run again; update its files and journals; list changes."""
    manifest = load_manifest(run_dir)
    config = manifest.config
    layout = RunLayout(run_dir)
    runtime = get_runtime(config.unsafe_no_sandbox)
    options = GradeOptions(runtime=runtime, limits=config.limits, python=config.python,
                           scratch_root=layout.grading_dir)
    changes: list[VerdictChange] = []
    summaries = []
    for problem_name in config.problems:
        problem = load_problem(config.problems_dir / problem_name)
        for trial in range(1, config.trials + 1):
            records = journal.read_records(layout.journal(problem_name, trial))
            updated = []
            for record in records:
                on_checkpoint(f"{problem_name}/trial_{trial}/{record.checkpoint}")
                folder = layout.checkpoint_dir(problem_name, trial, record.checkpoint)
                output = grader_of(options)(problem, get_checkpoint(problem, record.checkpoint),
                                          folder / "snapshot", options)
                save_grade_output(output, folder)
                new = record.model_copy(update=grade_fields(output.evaluation,
                                                            config.pass_policy))
                changes += _changes(record, new)
                updated.append(new)
            journal.rewrite(layout.journal(problem_name, trial), updated)
            summaries.append(saved_attempt(run_dir, config, (problem_name, problem), trial,
                                           updated))
    return changes, finish(run_dir, config, summaries)


def _changes(old: CheckpointRecord, new: CheckpointRecord) -> list[VerdictChange]:
    found = []
    for policy, verdict in new.verdicts.items():
        if old.verdicts.get(policy) != verdict:
            found.append(_change(old, str(policy), str(old.verdicts.get(policy)), str(verdict)))
    for group in sorted(set(old.counts) | set(new.counts)):
        before, after = old.counts.get(group), new.counts.get(group)
        if before != after:
            found.append(_change(old, f"{group} tests", _ratio(before), _ratio(after)))
    return found


def _change(record: CheckpointRecord, what: str, before: str, after: str) -> VerdictChange:
    return VerdictChange(problem=record.problem, trial=record.trial,
                         checkpoint=record.checkpoint, what=what, before=before, after=after)


def _ratio(count: object) -> str:
    return "-" if count is None else f"{getattr(count, 'passed', 0)}/{getattr(count, 'total', 0)}"
