"""What a Harbor task folder holds, checked before anything of it is built, copied or run: no
link leading out of the task, no special file (a FIFO would hang a copy, a device would read
the host), no file or total past the limits below, and a `test.sh` for every step.

The folder is walked without following a link (`files.nofollow.TreeWalk`): a task folder is
hostile input, and its build context and test folders are handed whole to the engine.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.files.nofollow import Entry, TreeWalk

MAX_FILE_BYTES = 512 * 2**20
"""One file of a task (apparent size): a Dockerfile's context or a test's data, not a disk."""
MAX_TASK_BYTES = 2 * 2**30
"""All of a task's files together."""
MAX_TASK_FILES = 100_000
"""Files and links in a task."""
HINT = "docs/harbor.md (Task folders) says what a task may hold"


def check_task_files(task: Path) -> None:
    """Raise one `UserInputError` naming the first entry of `task` benchwright will not use."""
    walk = TreeWalk(task)
    files = total = 0
    for entry in walk:
        if entry.kind == "dir":
            continue
        files += 1
        if entry.kind == "link":
            _check_link(task, entry)
        else:
            size = os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False).st_size
            total += size
            if size > MAX_FILE_BYTES:
                raise UserInputError(f"{entry.rel} is {size / 2**20:.0f} MiB, over the "
                                     f"{MAX_FILE_BYTES >> 20} MiB a task's file may hold",
                                     path=task / entry.rel, hint=HINT)
        if total > MAX_TASK_BYTES or files > MAX_TASK_FILES:
            raise UserInputError(f"the task holds over {MAX_TASK_BYTES >> 30} GiB or "
                                 f"{MAX_TASK_FILES} files", path=task, hint=HINT)
    if walk.skipped:
        what = walk.skipped[0].removesuffix(" skipped")  # TreeWalk's words for a copy
        raise UserInputError(f"the task holds what is not a file or a folder: {what}",
                             path=task, hint=HINT)


def _check_link(task: Path, entry: Entry) -> None:
    """A link must lead to a place inside the task, resolved as the kernel would (links it
    passes through followed, `..` after them taken physically); nothing it names is opened."""
    target = os.readlink(entry.name, dir_fd=entry.dir_fd)
    root = os.path.realpath(task)
    where = os.path.realpath(task / entry.rel)
    if where != root and not where.startswith(root + os.sep):
        raise UserInputError(f"{entry.rel} is a link out of the task (to {target})",
                             path=task / entry.rel, hint="copy what it names into the task, "
                             "or remove it")


def check_test_scripts(task: Path, step_folders: list[Path | None], names: list[str]) -> None:
    """Every step has a plain `tests/test.sh`: its own, else the task's (Harbor's fallback)."""
    for folder, name in zip(step_folders, names, strict=True):
        candidates = ([folder / "tests" / "test.sh"] if folder else []) + [
            task / "tests" / "test.sh"]
        if not any(p.is_file() and not p.is_symlink() for p in candidates):
            raise UserInputError(f"step {name!r} has no tests/test.sh (the verifier Harbor runs)",
                                 path=candidates[0], hint="give the step (or the task) "
                                 "tests/test.sh writing /logs/verifier/reward.json")
