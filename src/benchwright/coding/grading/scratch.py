"""Where grading lays out its workspaces (hidden tests included), and the leftovers' cleanup.

Scratch folders live in a 0700 folder of ours: the run's `.work/.grading` when grading is part
of a run, else `grading/` in benchwright's cache folder, never a world-writable /tmp. Each is
named for the process that owns it (pid and start time), so a later start removes the ones whose
owner is gone, e.g. a harness killed with SIGKILL in the middle of grading.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from benchwright.errors import WorkspaceError
from benchwright.sandbox.environments import cache_base

_PREFIX = "grade-"


def private_root() -> Path:
    """The scratch root used outside a run."""
    return cache_base() / "grading"


def new_scratch(root: Path | None) -> Path:
    """A fresh 0700 scratch folder under `root` (default: `private_root()`), as an absolute
    path: the sandbox's mounts and PYTHONPATH are made from it (`eval RUN_DIR` with a relative
    RUN_DIR gave a relative one, and pytest inside could not import the verdict plugin)."""
    base = _ensure_private((root or private_root()).absolute())
    sweep_leftovers(base)
    return Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-{_start_time(os.getpid())}-",
                                 dir=base))


def _ensure_private(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise WorkspaceError("the grading scratch folder is not a folder of this user's",
                             path=root, hint="remove it; benchwright recreates it")
    if stat.S_IMODE(info.st_mode) != 0o700:
        root.chmod(0o700)
    return root


def sweep_leftovers(root: Path | None = None, prefix: str = _PREFIX) -> list[Path]:
    """Remove the scratch folders under `root` whose owning process is gone; returns them."""
    base = root or private_root()
    removed = []
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            if (entry.name.startswith(prefix) and not _owner_alive(entry.name, prefix)
                    and not _held(entry)):
                remove_tree(entry)
                removed.append(entry)
    return removed


@contextlib.contextmanager
def owned_folder(root: Path, prefix: str) -> Iterator[Path]:
    """A fresh folder under `root` named for this process and locked (flock) while in use, then
    removed; a kill -9 leaves it to the next sweep. The lock speaks where the name cannot: a
    process of another PID namespace sharing this /tmp (a second Ray node on the same host, a
    container) sees our pid as dead, and would otherwise remove the folder in use."""
    sweep_leftovers(root, prefix)
    folder = Path(tempfile.mkdtemp(prefix=owned_prefix(prefix), dir=root))
    held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield folder
    finally:
        with contextlib.suppress(OSError):
            remove_tree(folder)
        os.close(held)


def _held(entry: Path) -> bool:
    """Whether a live process holds the folder's lock (`owned_folder`), in any PID namespace."""
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def owned_prefix(prefix: str) -> str:
    """`prefix` with this process's pid and start time: a folder so named is swept by
    `sweep_leftovers(root, prefix)` once this process is gone (a kill -9 included)."""
    return f"{prefix}{os.getpid()}-{_start_time(os.getpid())}-"


def _owner_alive(name: str, prefix: str = _PREFIX) -> bool:
    if not name.startswith(prefix):
        return True
    parts = name[len(prefix):].split("-")
    try:
        pid, started = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        # a grading folder of an older version is ours to remove; another name is left alone
        return prefix != _PREFIX
    return _start_time(pid) == started


def _start_time(pid: int) -> int:
    """The process's start time in clock ticks since boot; -1 when there is no such process."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat_line.rsplit(")", 1)[-1].split()[19])


def remove_tree(path: Path) -> None:
    """Remove a folder the sandbox wrote to, even where it took its own permissions away."""

    def allow_and_retry(_func: object, name: str, _exc: object) -> None:
        failed = Path(name)
        with contextlib.suppress(OSError):
            failed.parent.chmod(0o700)
            if failed.is_dir() and not failed.is_symlink():
                failed.chmod(0o700)
                shutil.rmtree(failed, ignore_errors=True)
            else:
                failed.unlink()

    shutil.rmtree(path, onerror=allow_and_retry)  # onexc from Python 3.12 only
