"""What the LLM judge has to do in a coding run: each journaled checkpoint's snapshot, spec,
changes since the previous checkpoint (for carry-forward) and earlier judgement, read from the
run folder into the judge's `Chain`s of `Unit`s."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.judging.files import (
    JudgeRecord,
    latest_records,
    read_diff,
    read_flags,
    read_judge_file,
)
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, RunConfig, StartFrom
from benchwright.coding.problems.config import ProblemConfig
from benchwright.coding.problems.loader import load_problem
from benchwright.errors import BenchwrightError
from benchwright.files.untrusted import read_untrusted_text
from benchwright.judge.session import Before, Chain, Changes, Saved, Unit

SUFFIX = ".py"  # the entry file's suffix: the coding track's problems are Python
SpecOf = Callable[[str, Path], str]


def read_chains(layout: RunLayout, config: RunConfig, problems: list[str]) -> list[Chain]:
    """Every journaled checkpoint of these problems, one chain per attempt."""
    chains = []
    chained = config.start_from is StartFrom.CHAIN
    for problem in problems:
        spec_of = _spec_reader(config.problems_dir / problem)
        for trial in range(1, config.trials + 1):
            saved = latest_records(layout, problem, trial)
            units = [unit_of(layout, problem, trial, record, spec_of,
                             saved.get(record.checkpoint))
                     for record in journal.read_records(layout.journal(problem, trial))]
            chains.append(Chain(units, chained=chained))
    return chains


def unit_of(layout: RunLayout, problem: str, trial: int, record: CheckpointRecord,
            spec_of: SpecOf, saved: JudgeRecord | None = None) -> Unit:
    """One journaled checkpoint, as the judge sees it."""
    folder = layout.checkpoint_dir(problem, trial, record.checkpoint)
    spec, error = "", None
    try:
        spec = spec_of(record.checkpoint, folder)
    except BenchwrightError as exc:
        error = exc.one_line()
    quality = record.quality
    return Unit(problem=problem, trial=trial, checkpoint=record.checkpoint,
                snapshot=folder / "snapshot", spec=spec, suffix=SUFFIX, error=error,
                loc=quality.values.get("loc") if quality is not None else None,
                changes=_changes(folder), saved=_saved(folder, saved))


def before_of(layout: RunLayout, problem: str, trial: int, record: CheckpointRecord) -> Before:
    """The checkpoint a new one continued: its flags, or that it could not be judged."""
    folder = layout.checkpoint_dir(problem, trial, record.checkpoint)
    written, flags = read_judge_file(folder), read_flags(folder)
    if written is None or written.status != "judged" or flags is None:
        return Before(record.checkpoint, folder / "snapshot", blocked="error")
    return Before(record.checkpoint, folder / "snapshot", flags)


def _saved(folder: Path, record: JudgeRecord | None) -> Saved | None:
    """The checkpoint's judgement when its record and its files agree that it was judged (a
    kill between the files and the record, or files lost: judged again)."""
    if record is None or record.status != "judged":
        return None
    written, flags = read_judge_file(folder), read_flags(folder)
    if written is None or written.status != "judged" or flags is None:
        return None
    return Saved(snapshot_sha256=record.snapshot_sha256, settings_sha256=record.settings_sha256,
                 model=record.model, flags=flags, agreement=written.agreement)


def _changes(folder: Path) -> Changes:
    """diff.json's changed files and their patches; what it cannot say (unreadable, or not
    what the run writes) the judge finds by diffing the snapshots themselves."""
    try:
        diff = read_diff(folder)
    except BenchwrightError:
        return Changes()
    modified, patches = diff.get("modified", []), diff.get("patches", {})
    return Changes(
        modified=frozenset(m for m in modified if isinstance(m, str))
        if isinstance(modified, list) else frozenset(),
        patches={k: v for k, v in patches.items() if isinstance(v, str)}
        if isinstance(patches, dict) else {})


def _spec_reader(problem_dir: Path) -> SpecOf:
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
