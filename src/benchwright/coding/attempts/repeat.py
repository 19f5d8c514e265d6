"""`benchwright eval RUN_DIR --repeat N`: every saved snapshot graded N more times, to measure the
grader's own noise (`report_parts/grading_noise.py`): each checkpoint's verdict at every grading and
each test's outcome, read from the journal and grading.json the regrade rewrote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import RunResult
from benchwright.coding.attempts.regrade import VerdictChange, regrade_run
from benchwright.coding.attempts.runner import load_manifest
from benchwright.coding.grading.artifacts import GRADING_JSON
from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.files.nofollow import read_regular
from benchwright.protocols import Executor
from benchwright.report_parts.grading_noise import GradingNoise, measure

Verdicts = dict[str, list[bool]]
Outcomes = dict[str, dict[str, list[bool]]]


def repeat_regrade(run_dir: Path, repeats: int, on_checkpoint: Callable[[str], None],
                   executor: Executor | None = None
                   ) -> tuple[GradingNoise, list[VerdictChange], RunResult]:
    """Grade the run `repeats` times; the noise over the saved grading and these, every verdict
    that changed from one grading to the next (its `grading` says which), the last result."""
    verdicts: Verdicts = {}
    outcomes: Outcomes = {}
    _observe(run_dir, verdicts, outcomes)
    changes: list[VerdictChange] = []
    result: RunResult | None = None
    for grading in range(1, repeats + 1):
        found, result = regrade_run(run_dir, executor=executor,
                                    on_checkpoint=_told(on_checkpoint, grading, repeats))
        changes += [c.model_copy(update={"grading": grading}) for c in found]
        _observe(run_dir, verdicts, outcomes)
    if result is None:
        raise ValueError(f"--repeat must be at least 1, not {repeats}")
    return measure(verdicts, outcomes, repeats), changes, result


def _told(tell: Callable[[str], None], grading: int, repeats: int) -> Callable[[str], None]:
    """The status line of one grading, naming which of the repeats it is."""
    return lambda line: tell(f"{line} ({grading}/{repeats})")


def _observe(run_dir: Path, verdicts: Verdicts, outcomes: Outcomes) -> None:
    """Add the run's current verdicts and test outcomes to those seen so far."""
    config = load_manifest(run_dir).config
    layout = RunLayout(run_dir)
    for problem in config.problems:
        for trial in range(1, config.trials + 1):
            for record in journal.read_records(layout.journal(problem, trial)):
                unit = f"{problem}/trial_{trial}/{record.checkpoint}"
                verdicts.setdefault(unit, []).append(record.passed)
                folder = layout.checkpoint_dir(problem, trial, record.checkpoint)
                tests = outcomes.setdefault(unit, {})
                for test_id, passed in _tests(folder).items():
                    tests.setdefault(test_id, []).append(passed)


def _tests(folder: Path) -> dict[str, bool]:
    """Each test's pass at the checkpoint's last grading (grading.json, read through no link)."""
    data = read_regular(folder, GRADING_JSON)
    if data is None:
        return {}
    try:
        evaluation = CheckpointEvaluation.model_validate_json(data)
    except (ValueError, ValidationError):
        return {}
    return {test.id: test.passed for test in evaluation.tests}
