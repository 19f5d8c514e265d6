"""What the LLM judge has to do in a coding run: each journaled checkpoint's files, spec and
state (already judged, to judge, judged with other settings), and how its lines moved since the
previous checkpoint (for carry-forward)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.judging.files import (
    JudgeRecord,
    latest_records,
    read_diff,
    read_flags,
    read_judge_file,
)
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, RunConfig
from benchwright.coding.problems.config import ProblemConfig
from benchwright.coding.problems.loader import load_problem
from benchwright.errors import BenchwrightError
from benchwright.files.nofollow import read_regular
from benchwright.files.untrusted import read_untrusted_text
from benchwright.judge.batching import SourceFile, judged_files
from benchwright.judge.carry import LineMap, line_map, patch_between
from benchwright.judge.flags import RubricFlag
from benchwright.judge.snapshot import JudgeContext, SnapshotPlan, plan_snapshot

State = Literal["todo", "done", "conflict"]
SUFFIX = ".py"  # the entry file's suffix: the coding track's problems are Python


@dataclass
class CheckpointTask:
    """One journaled checkpoint, as the judge sees it."""

    problem: str
    trial: int
    record: CheckpointRecord
    folder: Path
    state: State = "todo"
    plan: SnapshotPlan | None = None
    """Its requests (None when it cannot be judged: see `error`)."""
    error: str | None = None
    """Why it cannot be judged (a snapshot past the judge's limits, no spec)."""
    judged_with: str | None = None
    """The model of an earlier judgement with other settings (state `conflict`)."""

    @property
    def label(self) -> str:
        return f"{self.problem}/trial_{self.trial}/{self.record.checkpoint}"

    @property
    def loc(self) -> float | None:
        """The snapshot's LOC, when metrics were measured."""
        quality = self.record.quality
        return quality.values.get("loc") if quality is not None else None

    def saved_flags(self) -> list[RubricFlag] | None:
        """The flags this checkpoint's rubric.jsonl holds (state `done`)."""
        return read_flags(self.folder)


@dataclass
class Attempt:
    """One problem x trial: its checkpoints, in order."""

    problem: str
    trial: int
    tasks: list[CheckpointTask] = field(default_factory=list)


def plan_attempts(layout: RunLayout, config: RunConfig, ctx: JudgeContext, settings_sha: str,
                  problems: list[str], overwrite: bool) -> list[Attempt]:
    """Every journaled checkpoint of these problems, planned and given its state."""
    attempts = []
    for problem in problems:
        spec_of = _spec_reader(config.problems_dir / problem)
        for trial in range(1, config.trials + 1):
            attempt = Attempt(problem=problem, trial=trial)
            saved = latest_records(layout, problem, trial)
            for record in journal.read_records(layout.journal(problem, trial)):
                task = CheckpointTask(problem=problem, trial=trial, record=record,
                                      folder=layout.checkpoint_dir(problem, trial,
                                                                   record.checkpoint))
                plan_task(task, ctx, spec_of)
                _state(task, saved.get(record.checkpoint), settings_sha, overwrite)
                attempt.tasks.append(task)
            attempts.append(attempt)
    return attempts


def plan_task(task: CheckpointTask, ctx: JudgeContext,
              spec_of: Callable[[str, Path], str]) -> None:
    """The checkpoint's requests (or why it cannot be judged) from its snapshot and spec."""
    try:
        files = judged_files(task.folder / "snapshot", SUFFIX)
        task.plan = plan_snapshot(ctx, spec_of(task.record.checkpoint, task.folder), files)
    except BenchwrightError as exc:
        task.error = exc.one_line()


def _state(task: CheckpointTask, saved: JudgeRecord | None, settings_sha: str,
           overwrite: bool) -> None:
    if overwrite or saved is None or saved.status != "judged" or task.plan is None:
        return
    if saved.snapshot_sha256 != task.plan.snapshot_sha256:
        return  # the checkpoint was run again since: a new snapshot
    written = read_judge_file(task.folder)
    if written is None or written.status != "judged" or task.saved_flags() is None:
        return  # killed between the files and the record, or files lost: judge again
    if saved.settings_sha256 == settings_sha:
        task.state = "done"
    else:
        task.state, task.judged_with = "conflict", saved.model


def _spec_reader(problem_dir: Path) -> Any:
    """checkpoint, folder -> the spec the judge is shown: the problem's, or (the problem folder
    gone) the prompt the agent was given."""
    try:
        problem: ProblemConfig | None = load_problem(problem_dir)
    except BenchwrightError:
        problem = None

    def spec(checkpoint: str, folder: Path) -> str:
        if problem is not None:
            return problem.render_spec(checkpoint)
        return read_untrusted_text(folder / "prompt.txt", what="the checkpoint's prompt")

    return spec


def line_maps(task: CheckpointTask, previous: CheckpointTask) -> dict[str, LineMap | None]:
    """For each file judged now: how its lines moved since `previous` (None: unchanged); a
    file new at this checkpoint has no entry (nothing to carry onto it)."""
    assert task.plan is not None
    diff = read_diff(task.folder)
    modified, patches = set(diff.get("modified", [])), diff.get("patches", {})
    maps: dict[str, LineMap | None] = {}
    for file in task.plan.files:
        before = read_regular(previous.folder / "snapshot", file.path)
        if before is None:
            continue
        if file.path in modified:
            patch = patches.get(file.path) if isinstance(patches, dict) else None
            maps[file.path] = line_map(patch if isinstance(patch, str)
                                       else _patch(before, file))
        elif before.decode("utf-8", errors="replace") == file.text:
            maps[file.path] = None
        else:  # diff.json disagrees with the snapshots: trust the files
            maps[file.path] = line_map(_patch(before, file))
    return maps


def _patch(before: bytes, file: SourceFile) -> str:
    return patch_between(before.decode("utf-8", errors="replace"), file.text)
