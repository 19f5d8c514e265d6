"""Atomic file writes: a reader (or a resumed run) never sees half a file."""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from benchwright.errors import needing


def write_text_atomic(path: Path, text: str, durable: bool = True) -> None:
    """Write `text` to `path` through a temporary file and a rename; fsync it if `durable`."""
    write_bytes_atomic(path, text.encode("utf-8"), durable)


def write_bytes_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """Write `data` to `path` through a temporary file and a rename (an existing file's mode
    is kept); fsync it if `durable`."""
    write_stream_atomic(path, lambda handle: handle.write(data), durable, size=len(data))


def write_stream_atomic(path: Path, fill: Callable[[BinaryIO], object],
                        durable: bool = True, size: int | None = None) -> None:
    """Like `write_bytes_atomic`, with the content written by `fill` into the open temporary
    file (a large file streamed, never whole in memory). `size`: the bytes it writes, when
    known, named by the error of a full disk (`DiskFull.needed`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.is_file() else _new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        full = needing(exc, size, path)
        if full is not exc:
            raise full from exc
        if exc.filename is None:  # a write or fsync failing names no file: name the one
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# What `write_bytes_atomic` names its temporary file: ".NAME." + mkstemp's 8 characters + ".tmp".
_TORN = re.compile(r"\..+\.[A-Za-z0-9_]{8}\.tmp")


def remove_torn_writes(folder: Path) -> list[str]:
    """Delete the temporary files that writers killed mid-write (kill -9) left in `folder` (not
    below it), and return their names. Only regular files named as ours are touched; the caller
    holds the folder's lock, so no live writer owns one."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    removed = []
    for entry in entries:
        if _TORN.fullmatch(entry.name) and stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
            Path(entry.path).unlink(missing_ok=True)
            removed.append(entry.name)
    return removed


def _new_file_mode() -> int:
    """What open() would give a new file: mkstemp's 0600 would hide results from other users.
    The umask is read from /proc: os.umask() would change it for every thread meanwhile."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
        umask = int(next(line.split()[1] for line in status.splitlines()
                         if line.startswith("Umask:")), 8)
    except (OSError, StopIteration, ValueError, IndexError):
        umask = 0o022
    return 0o666 & ~umask


def write_json_atomic(path: Path, data: Any, durable: bool = True) -> None:
    """Write `data` as indented JSON, atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", durable)
