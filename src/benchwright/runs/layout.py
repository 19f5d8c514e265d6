"""Where the files every run directory has (coding or web) live; each track adds its own."""

from __future__ import annotations

import os
from pathlib import Path

from benchwright.errors import UserInputError

MANIFEST = "manifest.json"
RESULT_JSON = "result.json"
REPORT_MD = "report.md"
WORK = ".work"


class RunFiles:
    """The files every run directory (coding or web) has at its root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def result_json(self) -> Path:
        return self.root / RESULT_JSON

    @property
    def report_md(self) -> Path:
        return self.root / REPORT_MD


def require_kind(path: Path, *, folder: bool) -> None:
    """A path of a run folder that is there but of the wrong kind (replaced by hand: a file for
    a folder, a folder or a pipe for a file) is one clear error, before anything reads or
    deletes it; a missing one is fine (it is made when needed)."""
    if not os.path.lexists(path) or (path.is_dir() if folder else path.is_file()):
        return
    raise UserInputError(f"should be a {'folder' if folder else 'regular file'} but is not",
                         path=path, hint="the run folder was changed by hand; restore it or "
                         "start a new run")
