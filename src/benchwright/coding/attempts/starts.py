"""Where each checkpoint of an attempt starts (`--start-from`): the agent's own workspace
(chain), or the reference solution of the checkpoint before (reference, a counterfactual start).

A reference solution is the problem's `solutions/<checkpoint>/`, a real folder reached through
real folders: a link there (or on the way) is not followed, so that checkpoint has no reference
and the next one is not attempted in a reference-start run. It is copied as a snapshot is
(`take_snapshot`): links inside stay links, special files are left out, the static assets' paths
are left to the assets.
"""

from __future__ import annotations

import itertools
import os
import stat
from pathlib import Path

from benchwright.coding.attempts.models import StartFrom
from benchwright.coding.attempts.snapshots import SnapshotLimits, take_snapshot
from benchwright.coding.problems.config import CheckpointConfig, ProblemConfig
from benchwright.errors import ProblemConfigError

START = "start"
"""The folder, inside a reference-start checkpoint's folder, holding what it started from."""


def missing_reference(problem: ProblemConfig, checkpoint: str) -> str | None:
    """Why `solutions/<checkpoint>` cannot be a start (None when it can)."""
    for rel in ("solutions", f"solutions/{checkpoint}"):
        try:
            mode = os.lstat(problem.path / rel).st_mode
        except FileNotFoundError:
            return f"{rel}/ is missing"
        except OSError as exc:
            return f"{rel} cannot be read ({exc.strerror})"
        if stat.S_ISLNK(mode):
            return f"{rel} is a link (links are not followed)"
        if not stat.S_ISDIR(mode):
            return f"{rel} is not a folder"
    return None


def no_reference(problem: ProblemConfig) -> dict[str, str]:
    """The checkpoints a reference-start attempt cannot attempt, each with why: the checkpoint
    before it has no reference solution to start from."""
    ordered = problem.ordered_checkpoints()
    found = {}
    for before, checkpoint in itertools.pairwise(ordered):
        why = missing_reference(problem, before.name)
        if why is not None:
            found[checkpoint.name] = f"no reference solution of {before.name} to start from: {why}"
    return found


def unreachable(problem: ProblemConfig, start_from: StartFrom) -> dict[str, str]:
    """`no_reference` for reference starts; nothing for chain starts."""
    return no_reference(problem) if start_from is StartFrom.REFERENCE else {}


def planned(problem: ProblemConfig, start_from: StartFrom) -> list[CheckpointConfig]:
    """The checkpoints an attempt may run, in order."""
    skipped = unreachable(problem, start_from)
    return [c for c in problem.ordered_checkpoints() if c.name not in skipped]


def copy_reference(problem: ProblemConfig, checkpoint: str, dest: Path, exclude: set[str],
                   limits: SnapshotLimits) -> None:
    """Copy the reference solution of `checkpoint` to the new folder `dest`, nothing followed;
    `exclude` holds top-level paths left out (the static assets, placed separately)."""
    why = missing_reference(problem, checkpoint)
    if why is not None:  # it was there when the attempt was planned
        raise ProblemConfigError(f"the reference solution of {checkpoint} is gone: {why}",
                                 path=problem.path, hint="restore it, then --resume the run")
    take_snapshot(problem.solution_dir(checkpoint), dest, exclude, limits)
