"""Attempts on an executor that shares no filesystem with the run (`--executor ray`).

The driver alone writes the run directory. A worker gets a `RemoteAttempt`: the problem's files,
a template file's text, the journal's valid records and the last finished checkpoint's snapshot
and metrics. It runs the very same checkpoint loop (`chain.continue_attempt`) in a private
scratch folder and yields each finished checkpoint as a `Landed` item (its record and the
checkpoint folder's files). The driver writes the folder, redacts it, and only then journals the
record (`land`): the order the local executor keeps, so a kill -9 of the driver at any moment
leaves what `--resume` expects. A worker lost mid-checkpoint loses that checkpoint only: the
executor starts the attempt again from `RemoteAttempt.ready()`, which reads the driver's journal,
and a record that is not the journal's next one is never written (no checkpoint twice).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.chain import ChainJob, attempt_prefix, broken_off, continue_attempt
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import (
    CheckpointRecord,
    InfraErrorRecord,
    RunConfig,
    runtime_of,
)
from benchwright.coding.grading.grader import GradeOptions, GradeOutput, grader_of
from benchwright.coding.grading.scratch import owned_folder
from benchwright.coding.problems.loader import get_checkpoint, load_problem
from benchwright.coding.problems.prompts import BUILTIN_TEMPLATES, template_text
from benchwright.errors import BenchwrightError
from benchwright.files.atomic import write_json_atomic, write_text_atomic
from benchwright.files.nofollow import CACHE_FOLDERS
from benchwright.files.redaction import Redactor
from benchwright.runs.file_tree import FileTree, pack_tree, replace_tree, unpack_tree


def _not_needed_later(rel: str) -> bool:
    """What a continued attempt does not read of the checkpoint before it (it reads the
    workspace to restore and diff against, and the metrics its erosion figures start from)."""
    return not (rel in ("snapshot", "quality_analysis", "quality_analysis/metrics.json")
                or rel.startswith("snapshot/"))


class RemoteAttempt(BaseModel):
    """One problem x trial as a worker gets it."""

    job: ChainJob
    """The attempt as the driver knows it (its paths are the driver's, unused on a worker)."""
    problem: FileTree
    """The problem folder's files."""
    template: str | None = None
    """The prompt template's text when it is a file (a built-in one is installed everywhere)."""
    records: list[CheckpointRecord] = []
    """The journal's valid records: the attempt goes on after them."""
    previous: FileTree | None = None
    """The last of those checkpoints' snapshot and metrics."""

    def ready(self) -> RemoteAttempt | None:
        """This attempt as the driver's journal has it now (None: it is over). Called by the
        executor before the attempt starts and before it starts again after a lost worker."""
        records, left = attempt_prefix(self.job)
        if not left:
            return None
        previous = None
        if records:
            layout = RunLayout(self.job.run_dir)
            folder = layout.checkpoint_dir(self.job.problem, self.job.trial, records[-1].checkpoint)
            previous = pack_tree(folder, prune=_not_needed_later)
        return self.model_copy(update={"records": records, "previous": previous})


class Landed(BaseModel):
    """A finished checkpoint (or the one an infrastructure error stopped) and its files."""

    record: CheckpointRecord | InfraErrorRecord
    """Its record."""
    files: FileTree
    """The checkpoint folder: prompt, agent logs, snapshot, diff, grading, metrics."""


class BrokeOff(BaseModel):
    """An attempt that could not go on (a broken problem, a grader that could not run)."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    error: str
    """Why, on one line (redacted)."""


class Ended(BaseModel):
    """An attempt's job is over (its summary is read from the driver's journal)."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""


Item = Landed | BrokeOff | Ended


def remote_attempts(jobs: list[ChainJob]) -> list[RemoteAttempt]:
    """The attempts as workers will get them, each problem packed once."""
    trees: dict[str, FileTree] = {}
    attempts = []
    for job in jobs:
        if job.problem not in trees:
            trees[job.problem] = _problem_tree(job.config.problems_dir / job.problem)
        prompt = job.config.prompt
        attempts.append(RemoteAttempt(job=job, problem=trees[job.problem], template=None
                                      if prompt in BUILTIN_TEMPLATES else template_text(prompt)))
    return attempts


def _problem_tree(folder: Path) -> FileTree:
    return pack_tree(folder, prune=lambda rel: rel.rpartition("/")[2] in CACHE_FOLDERS)


JOB_PREFIX = "benchwright-job-"
"""The scratch folders of attempts on machines without the run directory."""
REGRADE_PREFIX = "benchwright-regrade-"
"""... and of re-grading there."""


def run_remote_attempt(attempt: RemoteAttempt) -> Iterator[Item]:
    """On a worker: the attempt in a private scratch folder, each checkpoint sent back."""
    # a worker killed with SIGKILL leaves its folder: the next attempt on the machine sweeps it
    with owned_folder(Path(tempfile.gettempdir()), JOB_PREFIX) as scratch:
        job = _scratch_job(attempt, scratch)
        layout = RunLayout(job.run_dir)
        try:
            for record in continue_attempt(job, attempt.records):
                folder = layout.checkpoint_dir(job.problem, job.trial, record.checkpoint)
                yield Landed(record=record, files=pack_tree(folder))
        except BenchwrightError as exc:
            yield BrokeOff(problem=job.problem, trial=job.trial,
                           error=Redactor.from_environ().text(exc.one_line()))
    yield Ended(problem=attempt.job.problem, trial=attempt.job.trial)


def _scratch_job(attempt: RemoteAttempt, scratch: Path) -> ChainJob:
    """The attempt laid out under `scratch`: its problem, template and previous checkpoint."""
    job = attempt.job
    problems = scratch / "problems"
    problems.mkdir()
    unpack_tree(attempt.problem, problems / job.problem)
    update: dict[str, object] = {"problems_dir": problems}
    if attempt.template is not None:
        write_text_atomic(scratch / "template.jinja", attempt.template)
        update["prompt"] = str(scratch / "template.jinja")
    local = ChainJob(run_dir=scratch / "run", config=job.config.model_copy(update=update),
                     problem=job.problem, trial=job.trial)
    if attempt.records and attempt.previous is not None:
        layout = RunLayout(local.run_dir)
        folder = layout.checkpoint_dir(job.problem, job.trial, attempt.records[-1].checkpoint)
        folder.parent.mkdir(parents=True)
        unpack_tree(attempt.previous, folder)
    return local


def land(run_dir: Path, item: Item,
         redactor: Redactor) -> CheckpointRecord | InfraErrorRecord | None:
    """On the driver: write a worker's item into the run directory; returns the record written
    (None for a record that is not the journal's next one: it was written before)."""
    layout = RunLayout(run_dir)
    if isinstance(item, BrokeOff):
        broken_off(run_dir, item.problem, item.trial, item.error)
        return None
    if not isinstance(item, Landed):
        return None
    record = item.record
    path = layout.journal(record.problem, record.trial)
    if record.index != len(journal.read_records(path)) + 1:
        return None
    folder = layout.checkpoint_dir(record.problem, record.trial, record.checkpoint)
    replace_tree(item.files, folder)
    redactor.tree(folder)  # the driver's secrets too, before the record says it is finished
    if isinstance(record, InfraErrorRecord):
        write_json_atomic(layout.infra_error(record.problem, record.trial),
                          record.model_dump(mode="json"))
    else:
        journal.append_record(path, record)
    return record


class RegradeJob(BaseModel):
    """One saved checkpoint to grade again where jobs run (`eval RUN_DIR`)."""

    config: RunConfig
    """The run's configuration (grader, limits, Python, sandbox)."""
    key: tuple[str, int, str]
    """(problem, trial, checkpoint)."""
    problem: FileTree
    """The problem folder's files."""
    snapshot: FileTree
    """The checkpoint's saved snapshot."""


def regrade_jobs(run_dir: Path, config: RunConfig,
                 units: list[tuple[str, int, CheckpointRecord]]) -> list[RegradeJob]:
    """A job per saved checkpoint, each problem packed once."""
    layout = RunLayout(run_dir)
    trees = {name: _problem_tree(config.problems_dir / name) for name in config.problems}
    return [RegradeJob(config=config, key=(name, trial, record.checkpoint), problem=trees[name],
                       snapshot=pack_tree(layout.checkpoint_dir(name, trial, record.checkpoint)
                                          / "snapshot"))
            for name, trial, record in units]


def regrade_remote(job: RegradeJob) -> tuple[tuple[str, int, str], GradeOutput]:
    """On a worker: the checkpoint graded in a private scratch folder; the grader's output."""
    with owned_folder(Path(tempfile.gettempdir()), REGRADE_PREFIX) as root:
        unpack_tree(job.problem, root / "problem")
        unpack_tree(job.snapshot, root / "snapshot")
        (root / "grading").mkdir(mode=0o700)
        config = job.config
        options = GradeOptions(runtime=runtime_of(config),
                               limits=config.limits, python=config.python,
                               scratch_root=root / "grading")
        problem = load_problem(root / "problem")
        output = grader_of(options)(problem, get_checkpoint(problem, job.key[2]),
                                    root / "snapshot", options)
    return job.key, output
