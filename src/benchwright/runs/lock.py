"""One process at a time per run folder: an exclusive flock on RUN_DIR/.lock, holding the pid.

`run ... --resume`, `eval RUN_DIR` and a new run all take it before they touch a run's files, so
two of them can never write one journal at once. The kernel drops the lock when its holder dies,
even by kill -9, so a stale file never blocks a resume. The file is opened without following a
symlink (a run folder may have been handed over by someone else).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from benchwright.errors import RunInUse, UserInputError, disk_error
from benchwright.files.atomic import remove_torn_writes
from benchwright.files.nofollow import remove_tree
from benchwright.runs.layout import MANIFEST

LOCK = ".lock"
PROC_LOCKS = Path("/proc/locks")


@contextlib.contextmanager
def run_lock(run_dir: Path, then: str | None = None) -> Iterator[None]:
    """Hold the run folder's lock for the block; a held lock is an error naming its holder. A
    full or read-only disk in the block is one `DiskError` naming the path (else the run
    folder), with `then` (the command that goes on) in its hint."""
    fd = _open(run_dir / LOCK)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunInUse("another benchwright process is using this run folder "
                           f"(pid {_holder(fd)})", path=run_dir,
                           hint="wait for it to finish, or stop it first") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        remove_torn_writes(run_dir)  # a predecessor killed while rewriting manifest.json, say
        yield
    except OSError as exc:  # what finished is journaled: the run goes on from there
        full = disk_error(exc, run_dir, then=then, others=_also_written())
        if full is None:
            raise
        raise full from None
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked_run_folder(run_dir: Path, then: str | None = None) -> Iterator[None]:
    """The run folder, created if missing, locked for the block. A folder this call created is
    removed again if the block fails before a manifest is written: a refused run leaves nothing.
    A full or read-only disk is one `DiskError` naming the path, with `then` (the command
    that continues the run) in its hint."""
    made = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with run_lock(run_dir, then):
            yield
    except BaseException:
        if made and not (run_dir / MANIFEST).exists():
            remove_tree(run_dir, ignore_errors=True)
        raise


def _open(path: Path) -> int:
    """The lock file, opened without blocking on a FIFO or a device put in its place."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     0o644)
    except OSError as exc:
        raise UserInputError(f"cannot lock the run folder: {exc.strerror}", path=path,
                             hint="the run folder must be a folder you can write") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UserInputError("the run folder's lock file is not a regular file", path=path,
                             hint="remove it (benchwright makes a new one)")
    return fd


def _holder(fd: int) -> str:
    """The pid the holder wrote (it writes it right after locking, so it may be empty briefly)."""
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return text if text.isdigit() else "unknown"


def held_locks() -> dict[tuple[int, int, int], int]:
    """Every flock held on the machine: (device major, minor, inode) -> the holder's pid, read
    from /proc/locks (empty where there is none). Reading it takes no lock, so a viewer can
    tell a running run without ever getting in its way."""
    try:
        lines = PROC_LOCKS.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return {}
    held = {}
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[4].isdigit():
            major, minor, inode = [*fields[5].split(":"), "", "", ""][:3]
            try:
                held[(int(major, 16), int(minor, 16), int(inode))] = int(fields[4])
            except ValueError:
                continue
    return held


def lock_holder(run_dir: Path, held: dict[tuple[int, int, int], int] | None = None) -> int | None:
    """The pid of the process working on the run (holding its lock), or None when none is;
    `held` is a `held_locks()` read once for many runs."""
    try:
        info = os.lstat(run_dir / LOCK)
    except OSError:
        return None
    table = held_locks() if held is None else held
    return table.get((os.major(info.st_dev), os.minor(info.st_dev), info.st_ino))


def _also_written() -> list[Path]:
    """Where a run writes besides its folder: the cache (environments, grading scratch) and the
    temporary folder."""
    import tempfile

    from benchwright.sandbox.caches import cache_base

    return [cache_base(), Path(tempfile.gettempdir())]
