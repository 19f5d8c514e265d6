"""`run coding|web --baseline RUN --until-decided`: a run that adds one trial per problem (or
web task) a round and looks at the paired comparison after each, until it is decided or a
budget is spent (`benchwright.stats.sequential` holds the statistics; docs/statistics.md says why
they stay valid).

The run is an ordinary run folder whose trials grow round by round, plus `sequence.json`:
the settings and every look, written after each round. Killed and resumed, the round in
progress is finished, its look taken (the same data give the same look), and the sequence goes
on with the looks already recorded, at the same levels. The tracks differ only in how a round
is run and added (`_Rounds`); coding compares problems solved per problem, web the pass rate
per intent template.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Unpack

from benchwright.api.coding import CodingHooks, CodingOptions, new_coding_run, run_coding
from benchwright.api.decisions import Metric, clusters_of, paired
from benchwright.api.placement import Placement, take_placement
from benchwright.coding.attempts.models import RunResult
from benchwright.errors import UserInputError
from benchwright.files.atomic import write_json_atomic
from benchwright.report_parts.sequence import SEQUENCE_FILE, read_sequence
from benchwright.stats.sequential import Look, SequenceSettings, SequenceState, look, stop_reason

if TYPE_CHECKING:  # the web track is imported when a web sequence runs
    from benchwright.api.web import WebOptions
    from benchwright.web.trials.models import WebRunResult
    from benchwright.web.trials.runner import RunHooks

OnLook = Callable[[Look], None]


class _Round(NamedTuple):
    """A run after its latest session: the track's result, the rounds (trials per problem or
    task) its configuration holds, whether all of them are finished, and its cost so far."""

    result: Any
    rounds: int
    complete: bool
    cost_usd: float | None


@dataclass(frozen=True)
class _Rounds:
    """What a sequence needs of its track."""

    metric: Metric
    """The figure compared."""
    run: Callable[[], _Round]
    """Resume the run folder: run whatever is not finished."""
    add_round: Callable[[int], None]
    """Raise the trials per problem (task) to this many."""
    write_report: Callable[[Any], None]
    """report.md again, from the track's result."""


def run_until_decided(problems_dir: Path | str | None, *, baseline: Path,
                      settings: dict[str, Any], out: Path | str | None = None,
                      workers: int = 1, hooks: CodingHooks | None = None,
                      on_look: OnLook | None = None,
                      **options: Unpack[CodingOptions]) -> tuple[RunResult, SequenceState]:
    """A new coding sequence: its folder and `sequence.json` first, then round 1 (one trial
    per problem), then rounds until `sequential.stop_reason` says stop. `settings` holds
    SequenceSettings' fields but the baseline, the metric and the unit."""
    clusters_of(baseline, "problems solved")  # a baseline that is no coding run: refused now
    _one_trial(options.get("trials", 1))
    options["trials"] = 1
    checked = CodingOptions(**options)
    take_placement(checked)  # where jobs run is no part of the run's configuration
    run_dir, _config = new_coding_run(problems_dir, out, checked)
    state = _new_state(run_dir, baseline, "problems solved", "problems", settings)
    clock = _Clock(0.0)
    result = run_coding(problems_dir, out=run_dir, workers=workers, hooks=hooks, **options)
    return _rounds(run_dir, state, _coding(run_dir, workers, hooks), _coding_round(result),
                   on_look, clock)


def run_web_until_decided(suite: str | Path, *, baseline: Path, settings: dict[str, Any],
                          out: Path | str | None = None, hooks: RunHooks | None = None,
                          on_look: OnLook | None = None,
                          **options: Unpack[WebOptions]) -> tuple[WebRunResult, SequenceState]:
    """A new web sequence: as `run_until_decided`, one trial per task a round, compared by
    the pass rate per intent template."""
    from benchwright.api.web import WebOptions, new_web_run, run_web

    clusters_of(baseline, "pass rate")  # a baseline that is no web run: refused now
    _one_trial(options.get("trials", 1))
    options["trials"] = 1
    checked = WebOptions(**options)
    where = take_placement(checked)
    run_dir, _suite, _config = new_web_run(str(suite), out, checked)
    state = _new_state(run_dir, baseline, "pass rate", "templates", settings)
    clock = _Clock(0.0)
    result = run_web(suite, out=run_dir, hooks=hooks, **options)
    return _rounds(run_dir, state, _web(run_dir, hooks, where), _web_round(run_dir, result),
                   on_look, clock)


def resume_until_decided(run_dir: Path, workers: int = 1, hooks: CodingHooks | None = None,
                         on_look: OnLook | None = None) -> tuple[RunResult, SequenceState]:
    """Continue a coding sequence: finish the round in progress, then go on as before."""
    state, clock = _resumed(run_dir, "coding")
    track = _coding(run_dir, workers, hooks)
    return _rounds(run_dir, state, track, track.run(), on_look, clock)


def resume_web_until_decided(run_dir: Path, hooks: RunHooks | None = None,
                             on_look: OnLook | None = None,
                             **where: Unpack[Placement]) -> tuple[WebRunResult, SequenceState]:
    """Continue a web sequence: finish the round in progress, then go on as before."""
    state, clock = _resumed(run_dir, "web")
    track = _web(run_dir, hooks, where)
    return _rounds(run_dir, state, track, track.run(), on_look, clock)


def is_sequence(run_dir: Path) -> bool:
    """Whether the folder holds an `--until-decided` run."""
    return (run_dir / SEQUENCE_FILE).is_file()


def _one_trial(trials: int) -> None:
    if trials != 1:
        raise UserInputError("--trials is set by --until-decided (one trial per problem or "
                             "task a round)", hint="drop --trials; --max-rounds is the trial "
                             "budget")


def _new_state(run_dir: Path, baseline: Path, metric: Metric, unit: str,
               settings: dict[str, Any]) -> SequenceState:
    if (run_dir / "manifest.json").exists():
        raise UserInputError("this folder already holds a run", path=run_dir,
                             hint=f"continue it with --resume {run_dir}, or pick another --out")
    state = SequenceState(settings=SequenceSettings(
        baseline=str(Path(baseline).resolve()), metric=metric, unit=unit, **settings))
    run_dir.mkdir(parents=True, exist_ok=True)
    save(run_dir, state)
    return state


def _resumed(run_dir: Path, track: str) -> tuple[SequenceState, _Clock]:
    state = read_sequence(run_dir)
    if state is None:
        raise UserInputError("this run was not started with --until-decided", path=run_dir,
                             hint=f"continue it with: benchwright run {track} --resume "
                             f"{run_dir}")
    return state, _Clock(state.looks[-1].elapsed_s if state.looks else 0.0)


class _Clock:
    """Wall time of the sequence, summed over sessions (time between sessions not counted)."""

    def __init__(self, before: float) -> None:
        self.before = before
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return self.before + time.monotonic() - self.started


def _rounds(run_dir: Path, state: SequenceState, track: _Rounds, done: _Round,
            on_look: OnLook | None, clock: _Clock) -> tuple[Any, SequenceState]:
    """Look after each finished round; stop, or add a round and run it. A round the harness
    left unfinished (web trials it failed) gets no look: `--resume` finishes it first."""
    base = clusters_of(Path(state.settings.baseline), track.metric)
    while done.complete:
        if len(state.looks) < done.rounds:  # the round just run has no look yet
            ours, theirs = paired(clusters_of(run_dir, track.metric), base)
            found = look(state.settings, done.rounds, ours, theirs).model_copy(
                update={"cost_usd": done.cost_usd, "elapsed_s": clock.elapsed()})
            state.looks.append(found)
            save(run_dir, state)
            if on_look is not None:
                on_look(found)
        reason = stop_reason(state, done.cost_usd, clock.elapsed())
        if reason is not None:
            state.stopped = reason
            save(run_dir, state)
            track.write_report(done.result)
            break
        track.add_round(done.rounds + 1)
        done = track.run()
    return done.result, state


def _coding(run_dir: Path, workers: int, hooks: CodingHooks | None) -> _Rounds:
    def run() -> _Round:
        return _coding_round(run_coding(resume=run_dir, workers=workers, hooks=hooks))

    def add_round(trials: int) -> None:
        from benchwright.coding.attempts.runner import extend_trials
        from benchwright.runs.lock import run_lock

        with run_lock(run_dir, f"benchwright run coding --resume {run_dir}"):
            extend_trials(run_dir, trials)

    def write_report(result: RunResult) -> None:
        from benchwright.coding.report.run_report import write_run_report

        write_run_report(run_dir, result)

    return _Rounds("problems solved", run, add_round, write_report)


def _coding_round(result: RunResult) -> _Round:
    # a coding round always gets its look (attempts that broke off count as the agent's)
    return _Round(result, result.n_trials, True, result.totals.cost_usd)


def _web(run_dir: Path, hooks: RunHooks | None, where: Placement) -> _Rounds:
    from benchwright.api.web import run_web

    def run() -> _Round:
        return _web_round(run_dir, run_web(resume=run_dir, hooks=hooks, **where))

    def add_round(trials: int) -> None:
        from benchwright.runs.lock import run_lock
        from benchwright.web.trials.runner import extend_web_trials

        with run_lock(run_dir, f"benchwright run web --resume {run_dir}"):
            extend_web_trials(run_dir, trials)

    def write_report(_result: WebRunResult) -> None:
        from benchwright.files.atomic import write_text_atomic
        from benchwright.web.track import TRACK
        from benchwright.web.trials.layout import WebRunLayout

        report = TRACK.report(run_dir, None)
        write_text_atomic(WebRunLayout(run_dir).report_md, TRACK.render(report))

    return _Rounds("pass rate", run, add_round, write_report)


def _web_round(run_dir: Path, result: WebRunResult) -> _Round:
    from benchwright.web.trials.runner import load_web_manifest

    totals = result.totals
    cost = totals.cost_usd if totals is not None and not totals.cost_unknown else None
    return _Round(result, load_web_manifest(run_dir).config.trials, result.complete, cost)


def save(run_dir: Path, state: SequenceState) -> None:
    """`sequence.json`, replaced whole (a kill leaves the old or the new one)."""
    write_json_atomic(run_dir / SEQUENCE_FILE, state.model_dump(mode="json"))
