"""Where grading lays out its workspaces (hidden tests included), and the leftovers' cleanup.

Scratch folders live in a 0700 folder of ours: the run's `.work/.grading` when grading is part
of a run, else `grading/` in benchwright's cache folder, never a world-writable /tmp. Each is
named for the process that owns it (pid and start time) and locked while in use
(`benchwright.files.owned_temp`), so a later start removes the ones whose owner is gone, e.g. a
harness
killed with SIGKILL in the middle of grading.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from benchwright.errors import WorkspaceError
from benchwright.files import owned_temp
from benchwright.files.owned_temp import OwnedTemp
from benchwright.sandbox.caches import cache_base

_PREFIX = "grade-"
_HELD: dict[Path, OwnedTemp] = {}
"""The scratch folders of `new_scratch` in use, each holding its lock."""


def private_root() -> Path:
    """The scratch root used outside a run."""
    return cache_base() / "grading"


def new_scratch(root: Path | None) -> Path:
    """A fresh 0700 scratch folder under `root` (default: `private_root()`), as an absolute
    path: the sandbox's mounts and PYTHONPATH are made from it (`eval RUN_DIR` with a relative
    RUN_DIR gave a relative one, and pytest inside could not import the verdict plugin). It is
    locked until `remove_tree` removes it: the cache folder may be shared by processes of other
    PID namespaces (Ray nodes on one host), whose sweeps see our pid as dead."""
    base = _ensure_private((root or private_root()).absolute())
    sweep_leftovers(base)  # an older version's grading folders too
    owned = OwnedTemp(_PREFIX, base)
    _HELD[owned.path] = owned
    return owned.path


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
    """Remove the scratch folders under `root` whose owning process is gone; returns them (a
    grading folder named by an older version is ours to remove)."""
    return owned_temp.sweep_leftovers(root or private_root(), prefix,
                                      unnamed_alive=prefix != _PREFIX)


@contextlib.contextmanager
def owned_folder(root: Path, prefix: str) -> Iterator[Path]:
    """A fresh folder under `root` named for this process and locked (flock) while in use, then
    removed; a kill -9 leaves it to the next sweep."""
    with OwnedTemp(prefix, root) as folder:
        yield folder


def owned_prefix(prefix: str) -> str:
    """`prefix` with this process's pid and start time: a folder so named is swept by
    `sweep_leftovers(root, prefix)` once this process is gone (a kill -9 included)."""
    return owned_temp.owned_prefix(prefix)


def remove_tree(path: Path) -> None:
    """Remove a folder the sandbox wrote to (a scratch folder of `new_scratch`: and let go of
    its lock)."""
    owned = _HELD.pop(path, None)
    if owned is not None:
        owned.close()
    else:
        owned_temp.remove_tree(path)
