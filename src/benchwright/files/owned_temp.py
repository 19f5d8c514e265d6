"""Temporary folders named for the process that owns them and locked while in use, and the sweep
that removes the ones whose owner is gone: what a `kill -9` left is removed at the next start.

A folder is `<prefix><pid>-<start time>-<random>` and its owner holds an flock on it. A sweep
removes a folder only when both say its owner is gone: the name (no process with that pid and
start time) and the lock (nobody holds it). The lock speaks where the name cannot: a process of
another PID namespace sharing this /tmp (a second Ray node on the host, a container) sees the
owner's pid as dead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from benchwright.files import nofollow


def start_time(pid: int) -> int:
    """The process's start time in clock ticks since boot; -1 when there is no such process."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat_line.rsplit(")", 1)[-1].split()[19])


def owned_prefix(prefix: str) -> str:
    """`prefix` with this process's pid and start time."""
    return f"{prefix}{os.getpid()}-{start_time(os.getpid())}-"


def owner_alive(name: str, prefix: str, unnamed_alive: bool = True) -> bool:
    """Whether the process a folder is named for still runs. A name without pid and start time
    (an older version's) counts as alive unless `unnamed_alive` is False."""
    parts = name[len(prefix):].split("-")
    try:
        pid, started = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return unnamed_alive
    return start_time(pid) == started


def held(entry: Path) -> bool:
    """Whether a live process holds the folder's lock, in any PID namespace."""
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


def sweep_leftovers(root: Path, prefix: str, unnamed_alive: bool = True,
                    before: Callable[[Path], None] | None = None) -> list[Path]:
    """Remove the folders `prefix*` under `root` whose owner is gone (`before` called on each
    first: what its owner made elsewhere); returns them."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if entry.name.startswith(prefix) and not entry.is_symlink() and entry.is_dir() \
                    and not owner_alive(entry.name, prefix, unnamed_alive) and not held(entry):
                if before is not None:
                    before(entry)
                remove_tree(entry)
                removed.append(entry)
    return removed


def remove_tree(path: Path) -> None:
    """Remove a folder, at any depth, even where a sandboxed process took its own permissions
    away (`nofollow.remove_tree`: iterative, by descriptor, never following a link)."""
    nofollow.remove_tree(path)


class OwnedTemp:
    """A fresh folder under `root` (default: the temp folder) named for this process and locked
    until `close()` removes it; the owners gone of earlier folders of `prefix` are swept first
    (`before_sweep` called on each)."""

    def __init__(self, prefix: str, root: Path | None = None,
                 before_sweep: Callable[[Path], None] | None = None) -> None:
        base = root or Path(tempfile.gettempdir())
        sweep_leftovers(base, prefix, before=before_sweep)
        self.path = Path(tempfile.mkdtemp(prefix=owned_prefix(prefix), dir=base))
        self._fd: int | None = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def close(self) -> None:
        """Remove the folder and let go of it (twice is once)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            remove_tree(self.path)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
