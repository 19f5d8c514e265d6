"""`run coding --baseline RUN --until-decided`: a coding run that adds one trial per problem a
round and looks at the paired comparison after each, until it is decided or a budget is spent
(`benchwright.sequential` holds the statistics; docs/statistics.md says why they stay valid).

The run is an ordinary run folder whose trials grow round by round, plus `sequence.json`:
the settings and every look, written after each round. Killed and resumed, the round in
progress is finished, its look taken (the same data give the same look), and the sequence goes
on with the looks already recorded, at the same levels.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Unpack

from benchwright.api.coding import CodingHooks, CodingOptions, new_coding_run, run_coding
from benchwright.api.decisions import clusters_of, paired
from benchwright.api.placement import take_placement
from benchwright.coding.runs.models import RunResult
from benchwright.errors import UserInputError
from benchwright.fileio import write_json_atomic
from benchwright.report.sequence import SEQUENCE_FILE, read_sequence
from benchwright.sequential import Look, SequenceSettings, SequenceState, look, stop_reason

OnLook = Callable[[Look], None]


def run_until_decided(problems_dir: Path | str | None, *, baseline: Path,
                      settings: dict[str, Any], out: Path | str | None = None,
                      workers: int = 1, hooks: CodingHooks | None = None,
                      on_look: OnLook | None = None,
                      **options: Unpack[CodingOptions]) -> tuple[RunResult, SequenceState]:
    """A new sequence: its folder and `sequence.json` first, then round 1 (one trial per
    problem), then rounds until `sequential.stop_reason` says stop. `settings` holds
    SequenceSettings' fields but the baseline and the metric."""
    clusters_of(baseline, "problems solved")  # a baseline that is no coding run: refused now
    if options.get("trials", 1) != 1:
        raise UserInputError("--trials is set by --until-decided (one trial per problem a "
                             "round)", hint="drop --trials; --max-rounds is the trial budget")
    state = SequenceState(settings=SequenceSettings(
        baseline=str(Path(baseline).resolve()), metric="problems solved", **settings))
    options["trials"] = 1
    checked = CodingOptions(**options)
    take_placement(checked)  # where jobs run is no part of the run's configuration
    run_dir, _config = new_coding_run(problems_dir, out, checked)
    if (run_dir / "manifest.json").exists():
        raise UserInputError("this folder already holds a run", path=run_dir,
                             hint=f"continue it with --resume {run_dir}, or pick another --out")
    run_dir.mkdir(parents=True, exist_ok=True)
    save(run_dir, state)
    clock = _Clock(0.0)
    result = run_coding(problems_dir, out=run_dir, workers=workers, hooks=hooks, **options)
    return _rounds(run_dir, state, result, workers, hooks, on_look, clock)


def resume_until_decided(run_dir: Path, workers: int = 1, hooks: CodingHooks | None = None,
                         on_look: OnLook | None = None) -> tuple[RunResult, SequenceState]:
    """Continue a sequence: finish the round in progress, then go on as before."""
    state = read_sequence(run_dir)
    if state is None:
        raise UserInputError("this run was not started with --until-decided", path=run_dir,
                             hint=f"continue it with: benchwright run coding --resume {run_dir}")
    clock = _Clock(state.looks[-1].elapsed_s if state.looks else 0.0)
    result = run_coding(resume=run_dir, workers=workers, hooks=hooks)
    return _rounds(run_dir, state, result, workers, hooks, on_look, clock)


def is_sequence(run_dir: Path) -> bool:
    """Whether the folder holds an `--until-decided` run."""
    return (run_dir / SEQUENCE_FILE).is_file()


class _Clock:
    """Wall time of the sequence, summed over sessions (time between sessions not counted)."""

    def __init__(self, before: float) -> None:
        self.before = before
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return self.before + time.monotonic() - self.started


def _rounds(run_dir: Path, state: SequenceState, result: RunResult, workers: int,
            hooks: CodingHooks | None, on_look: OnLook | None,
            clock: _Clock) -> tuple[RunResult, SequenceState]:
    """Look after each finished round; stop, or add a round and run it."""
    base = clusters_of(Path(state.settings.baseline), "problems solved")
    while True:
        if len(state.looks) < result.n_trials:  # the round just run has no look yet
            ours, theirs = paired(clusters_of(run_dir, "problems solved"), base)
            found = look(state.settings, result.n_trials, ours, theirs).model_copy(
                update={"cost_usd": result.totals.cost_usd, "elapsed_s": clock.elapsed()})
            state.looks.append(found)
            save(run_dir, state)
            if on_look is not None:
                on_look(found)
        reason = stop_reason(state, result.totals.cost_usd, clock.elapsed())
        if reason is not None:
            state.stopped = reason
            save(run_dir, state)
            return _final_report(run_dir, result), state
        _add_round(run_dir, result.n_trials + 1)
        result = run_coding(resume=run_dir, workers=workers, hooks=hooks)


def _add_round(run_dir: Path, trials: int) -> None:
    from benchwright.coding.runs.runner import extend_trials
    from benchwright.runs.lock import run_lock

    with run_lock(run_dir, f"benchwright run coding --resume {run_dir}"):
        extend_trials(run_dir, trials)


def _final_report(run_dir: Path, result: RunResult) -> RunResult:
    """report.md again, now that the sequence has stopped (it says when and why)."""
    from benchwright.coding.report.run_report import write_run_report

    write_run_report(run_dir, result)
    return result


def save(run_dir: Path, state: SequenceState) -> None:
    """`sequence.json`, replaced whole (a kill leaves the old or the new one)."""
    write_json_atomic(run_dir / SEQUENCE_FILE, state.model_dump(mode="json"))
