"""`runs.new_or_resumed`: every track's front door (a new run, or a saved one with nothing else
asked of it); `runs.start`: the one lifecycle of every run, new or resumed, of any track;
`runs.regrade`: a saved run graded again. The track supplies the steps
(`benchwright.protocols.Track`); the kernel decides their order, holds the lock and turns an
interrupt into a resume hint.

    node checks -> lock -> create (new) or refresh (resumed) -> sweep leftovers -> execute
    (ends with finish: result.json, report.md) -> outcome (the line saying where to look next)

A resumed run's folder is opened here and nowhere else: `open_run` with the track expected, so
a folder of another track, or no run at all, is one clear error before anything is touched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from benchwright.errors import Interrupted, UserInputError
from benchwright.protocols import Executor, RegradeSettings, StartedRun, Track
from benchwright.runs.lock import locked_run_folder, run_lock
from benchwright.runs.node_checks import require_on_every_node
from benchwright.runs.owner import open_run
from benchwright.sandbox.caches import using_run

C = TypeVar("C", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
log = logging.getLogger(__name__)


def new_or_resumed(resume: Path | str | None, given: Sequence[str],
                   new: Callable[[], tuple[Path, C]]) -> tuple[Path, C | None]:
    """Every track's front door, before `start`: with `resume`, the saved run (config None)
    and nothing else asked of it (`given`: the options the caller was handed, each one a
    refusal); else the folder and configuration `new()` makes and checks."""
    if resume is None:
        return new()
    if given:
        raise UserInputError(f"resume uses the run's saved configuration; drop {', '.join(given)}",
                             hint="or start a new run")
    return Path(resume), None


def start(track: Track[C, Any, R, Any], run_dir: Path, config: C | None = None, *,
          executor: Executor, hooks: Any = None) -> R:
    """Run `track`'s run in `run_dir`: a new one from `config`, or (config None) the run saved
    there, continued. Returns the track's result (result.json and report.md written)."""
    run_dir = run_dir.expanduser().resolve()
    resuming = config is None
    if config is None:
        config = open_resumed(track, run_dir)
    require_on_every_node(executor, track.node_checks(config))
    with locked_run_folder(run_dir, track.resume_command(run_dir)):
        if resuming:
            track.refresh(run_dir)
        else:
            track.create(run_dir, config)
        log.info("%s %s %s", "resuming" if resuming else "new", track.noun, run_dir)
        track.sweep(run_dir)
        with using_run(run_dir):  # the caches it uses note it (`benchwright cache`)
            result = _execute(track, StartedRun(run_dir, config, executor, hooks, resuming))
    log.info("%s", track.outcome(run_dir, result))
    return result


def open_saved(track: Track[Any, M, Any, Any], run_dir: Path) -> M:
    """The manifest of the run in `run_dir`, which must be `track`'s: the one place a run folder
    to continue is opened (`start`, and the CLI's check of `--resume` against its options)."""
    open_run(run_dir, expect=track.name)  # a run of another track: say so, and how to go on
    return track.read(run_dir)


def open_resumed(track: Track[C, Any, Any, Any], run_dir: Path) -> C:
    """The saved configuration of the run in `run_dir`, which must be `track`'s and able to go
    on."""
    open_saved(track, run_dir)
    return track.resumed(run_dir)


def _execute(track: Track[C, Any, R, Any], run: StartedRun[C]) -> R:
    try:
        return track.execute(run)
    except KeyboardInterrupt:
        raise Interrupted(track.interrupted(run.run_dir),
                          hint=f"continue with: {track.resume_command(run.run_dir)}") from None


def amend(run_dir: Path, track_name: str, work: Callable[[], T]) -> T:
    """A step over a saved run of `track_name` that changes its records (the LLM judge over a
    coding run): the run opened, `work` under its lock, then the track's `finish` (result.json
    and report.md rewritten from the records)."""
    track = open_run(run_dir, expect=track_name).track
    with run_lock(run_dir):
        done = work()
        track.finish(run_dir)
    return done


def regrade(run_dir: Path, settings: RegradeSettings) -> tuple[Track[Any, Any, Any, Any],
                                                               BaseModel]:
    """Grade a saved run again offline under its lock (leftovers swept first); the track that
    owns it and what its `regrade` returned."""
    track = open_run(run_dir).track  # not a run: say so before taking a lock in the folder
    with run_lock(run_dir, f"benchwright eval {run_dir}"):
        track.sweep(run_dir)
        with using_run(run_dir):
            return track, track.regrade(run_dir, settings)
