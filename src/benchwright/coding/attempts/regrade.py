"""`benchwright eval RUN_DIR`: grade every saved snapshot again, offline, and say what changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.chain import grade_fields
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, RunConfig, RunResult, runtime_of
from benchwright.coding.attempts.remote import regrade_jobs, regrade_remote
from benchwright.coding.attempts.runner import finish, load_manifest, saved_attempt
from benchwright.coding.grading.artifacts import save_grade_output
from benchwright.coding.grading.grader import GradeOptions, GradeOutput, grader_of
from benchwright.coding.problems.loader import get_checkpoint, load_problem
from benchwright.protocols import Executor


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
    grading: int = 1
    """Which grading changed it: 1, or with `eval --repeat N` 1 to N (each against the one
    before it)."""


def regrade_run(
    run_dir: Path, on_checkpoint: Callable[[str], None] = lambda _s: None,
    executor: Executor | None = None,
) -> tuple[list[VerdictChange], RunResult]:
    """Grade every snapshot of the run again; update its files and journals; list changes.
    On an `executor` that shares no filesystem the grading runs on its machines (each gets the
    problem and the snapshot, and sends the grader's output back); this process writes."""
    config = load_manifest(run_dir).config
    layout = RunLayout(run_dir)
    units = [(name, trial, record) for name in config.problems
             for trial in range(1, config.trials + 1)
             for record in journal.read_records(layout.journal(name, trial))]
    outputs = _grade_all(run_dir, config, units, executor, on_checkpoint)
    changes: list[VerdictChange] = []
    summaries = []
    for problem_name in config.problems:
        problem = load_problem(config.problems_dir / problem_name)
        for trial in range(1, config.trials + 1):
            updated = []
            for record in journal.read_records(layout.journal(problem_name, trial)):
                output = outputs[(problem_name, trial, record.checkpoint)]
                save_grade_output(output, layout.checkpoint_dir(problem_name, trial,
                                                                record.checkpoint))
                new = record.model_copy(update=grade_fields(output.evaluation,
                                                            config.pass_policy))
                changes += _changes(record, new)
                updated.append(new)
            journal.rewrite(layout.journal(problem_name, trial), updated)
            summaries.append(saved_attempt(run_dir, config, (problem_name, problem), trial,
                                           updated))
    return changes, finish(run_dir, config, summaries)


Unit = tuple[str, int, CheckpointRecord]


def _grade_all(run_dir: Path, config: RunConfig, units: list[Unit], executor: Executor | None,
               on_checkpoint: Callable[[str], None]) -> dict[tuple[str, int, str], GradeOutput]:
    """Every unit's grader output, by (problem, trial, checkpoint)."""
    if executor is not None and not executor.shares_filesystem:
        outputs = {}
        for key, output in executor.run(regrade_remote, regrade_jobs(run_dir, config, units)):
            on_checkpoint(f"{key[0]}/trial_{key[1]}/{key[2]}")
            outputs[key] = output
        return outputs
    layout = RunLayout(run_dir)
    options = GradeOptions(runtime=runtime_of(config), limits=config.limits,
                           python=config.python, scratch_root=layout.grading_dir)
    problems = {name: load_problem(config.problems_dir / name) for name in config.problems}
    graded = {}
    for name, trial, record in units:
        on_checkpoint(f"{name}/trial_{trial}/{record.checkpoint}")
        problem = problems[name]
        snapshot = layout.checkpoint_dir(name, trial, record.checkpoint) / "snapshot"
        graded[(name, trial, record.checkpoint)] = grader_of(options)(
            problem, get_checkpoint(problem, record.checkpoint), snapshot, options)
    return graded


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
