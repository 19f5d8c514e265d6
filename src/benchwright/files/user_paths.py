"""The one check every path a user gives passes (an option, an argument, an environment variable
such as BENCHWRIGHT_CACHE_DIR): not empty, no NUL, within the kernel's length limits, no symlink
loop, nothing on /proc, /sys or /dev, and, if it exists, a regular file or a folder (never a
pipe, a device or a socket). The CLI runs it on every path parameter (cli/entry.py)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from benchwright.errors import UserInputError

NAME_MAX = 255
"""Bytes in one path component (Linux's NAME_MAX)."""
PATH_MAX = 4096
"""Bytes in a whole path, made absolute (Linux's PATH_MAX)."""
PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
_SPECIAL = {stat.S_IFIFO: "a named pipe", stat.S_IFCHR: "a character device",
            stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def check_user_path(raw: str | os.PathLike[str]) -> Path:
    """`raw` as a Path, or a UserInputError saying what is wrong with it (in words that fit
    after the name of the option or variable that gave it)."""
    text = os.fspath(raw)
    if not text.strip():
        raise UserInputError("an empty path: give a file or folder")
    if "\0" in text:
        raise UserInputError("a path with a NUL character: give a file or folder")
    _within_limits(text)
    mode = _mode(text)
    absolute = Path(text).absolute()
    real = Path(os.path.realpath(absolute))  # a symlink into /proc counts as /proc
    if any(p.is_relative_to(fs) for p in (absolute, real) for fs in PSEUDO_FILESYSTEMS):
        raise UserInputError(f"{text} is on a kernel pseudo-filesystem (/proc, /sys, /dev): "
                             "give a real file or folder")
    if mode is not None and stat.S_IFMT(mode) in _SPECIAL:
        raise UserInputError(f"{text} is {_SPECIAL[stat.S_IFMT(mode)]}: give a regular file "
                             "or folder")
    return Path(text)


def _within_limits(text: str) -> None:
    encoded = os.fsencode(Path(text).absolute())
    longest = max(len(part) for part in encoded.split(b"/"))
    if longest > NAME_MAX:
        raise UserInputError(f"a name of {longest} bytes in {_short(text)}: a file or folder "
                             f"name may have at most {NAME_MAX}")
    if len(encoded) > PATH_MAX:
        raise UserInputError(f"a path of {len(encoded)} bytes ({_short(text)}): at most "
                             f"{PATH_MAX}")


def _short(text: str) -> str:
    return text if len(text) <= 80 else f"{text[:40]}...{text[-30:]}"


def _mode(text: str) -> int | None:
    """The file's mode (its link's target's), None if nothing is there."""
    try:
        return Path(text).stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserInputError(f"{text} is a symlink loop: give a real file or "
                                 "folder") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise UserInputError(f"{text}: {exc.strerror}") from None
