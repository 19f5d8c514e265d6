"""The runs a viewer shows: found under the folders it was given, each opened by the kernel.

A folder holding `manifest.json` is a run (its track named by the kernel, `runs.open_run`);
the search does not go inside a run, into hidden folders, through symlinks, or deeper than
MAX_DEPTH. Each run gets a short id from its path, stable across restarts, used in the
viewer's addresses and in a bundle's file names.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from benchwright.errors import BenchwrightError, UserInputError
from benchwright.files.untrusted import read_untrusted_bytes
from benchwright.protocols import AnyTrack
from benchwright.runs import open_run
from benchwright.runs.layout import MANIFEST, RunFiles

M = TypeVar("M", bound=BaseModel)

MAX_DEPTH = 8
"""Folders searched below each folder given."""
MAX_RUNS = 100_000
"""Runs listed at most (a guard against pointing the viewer at `/`)."""


@dataclass(frozen=True)
class RunRef:
    """A run the viewer may show."""

    rid: str
    """Its id in addresses: 12 hex digits of its path's SHA-256."""
    path: Path
    """Its folder (absolute)."""
    track: AnyTrack
    """The track that owns it, as the kernel says."""


@dataclass(frozen=True)
class Unreadable:
    """A folder that looks like a run but the kernel could not open (shown in the list)."""

    path: Path
    """The folder."""
    error: str
    """Why, on one line."""


def run_id(path: Path) -> str:
    """The id of the run in `path`."""
    return hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def find_run_dirs(folders: list[Path]) -> list[Path]:
    """Every run folder under `folders` (a folder given may be a run itself), in order."""
    found: list[Path] = []
    for folder in folders:
        root = folder.expanduser().resolve()
        if not root.is_dir():
            raise UserInputError("not a folder", path=folder,
                                 hint="pass run folders or folders that hold runs")
        _search(root, 0, found)
    return list(dict.fromkeys(found))


def _search(folder: Path, depth: int, found: list[Path]) -> None:
    if (folder / MANIFEST).is_file():
        found.append(folder)
        return
    if depth >= MAX_DEPTH or len(found) >= MAX_RUNS:
        return
    try:
        with os.scandir(folder) as listing:
            children = sorted(e.name for e in listing
                              if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    except OSError:
        return
    for name in children:
        _search(folder / name, depth + 1, found)


def open_runs(folders: list[Path], known: dict[Path, RunRef] | None = None
              ) -> tuple[list[RunRef], list[Unreadable]]:
    """The runs under `folders`, opened through the kernel (those in `known` are not opened
    again); folders it refuses are listed."""
    refs, bad = [], []
    for path in find_run_dirs(folders):
        if known and path in known:
            refs.append(known[path])
            continue
        try:
            opened = open_run(path)
        except BenchwrightError as exc:
            bad.append(Unreadable(path=path, error=exc.one_line()))
            continue
        refs.append(RunRef(rid=run_id(path), path=path, track=opened.track))
    return refs, bad


def read_result(run_dir: Path, model: type[M]) -> M | None:
    """The run's result.json as its track's model; None while there is none, or when it cannot
    be read (the run's pages then show what the journals say)."""
    file = RunFiles(run_dir).result_json
    if not file.is_file():
        return None
    try:
        return model.model_validate_json(read_untrusted_bytes(file, what="result.json"))
    except (BenchwrightError, ValidationError):
        return None
