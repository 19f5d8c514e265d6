"""`benchwright eval RUN_DIR --repeat N` on a web run: every trial scored N more times by the
run's evaluator (never reusing a verdict), to measure the scoring's own noise
(`report_parts/grading_noise.py`): each attempt's verdict at every scoring, and each evaluator that
failed it in some scorings and not in others."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.protocols import RegradeSettings
from benchwright.report_parts.grading_noise import GradingNoise, measure
from benchwright.web.evaluation.scoring import TaskRow, load_summary
from benchwright.web.trials.layout import WebRunLayout
from benchwright.web.trials.runner import ScoredRun, finish

Failing = dict[str, list[set[str]]]


def repeat_rescore(run_dir: Path, settings: RegradeSettings) -> tuple[GradingNoise, ScoredRun]:
    """Score the run `settings.repeat` times; the noise over the saved scoring and these, and
    the last scoring."""
    verdicts: dict[str, list[bool]] = {}
    failing: Failing = {}
    with suppress(UserInputError):  # never scored: the repeats alone
        _observe(load_summary(WebRunLayout(run_dir).tasks_dir).tasks, verdicts, failing)
    scored: ScoredRun | None = None
    for scoring in range(1, settings.repeat + 1):
        scored = finish(run_dir, _told(settings, scoring), force=True, config=settings.config)
        _observe(scored.summary.tasks, verdicts, failing)
    if scored is None:
        raise ValueError(f"--repeat must be at least 1, not {settings.repeat}")
    return measure(verdicts, _outcomes(failing), settings.repeat), scored


def _told(settings: RegradeSettings, scoring: int) -> Callable[[str], None]:
    """The status line of one scoring, naming which of the repeats it is."""
    tell = settings.progress or (lambda _line: None)
    return lambda line: tell(f"{line} ({scoring}/{settings.repeat})")


def _observe(rows: list[TaskRow], verdicts: dict[str, list[bool]], failing: Failing) -> None:
    for row in rows:
        unit = f"task {row.task_id} trial {row.trial}"
        verdicts.setdefault(unit, []).append(row.score >= 1.0)
        failing.setdefault(unit, []).append({m.evaluator for m in row.mismatches
                                             if not m.passed})


def _outcomes(failing: Failing) -> dict[str, dict[str, list[bool]]]:
    """unit -> evaluator -> passed at each scoring (an evaluator that never failed: left out)."""
    return {unit: {name: [name not in seen for seen in sets]
                   for name in sorted(set().union(*sets))}
            for unit, sets in failing.items()}
