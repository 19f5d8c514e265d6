"""Checks on CLI option values made while the options are parsed: number bounds (the table in
docs/cli.md, "Bounds"), the one check every path a user gives passes (`user_path`, run on every
path option of every command by cli/entry.py), and paths that must name a folder to create or an
existing folder.

A failed check raises typer.BadParameter, which cli/entry.py prints as one line with exit 2."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import typer

from benchwright.errors import UserInputError
from benchwright.files.user_paths import check_user_path

MAX_TRIALS = 1000
MAX_WORKERS = 256
MAX_WEB_STEPS = 10_000
MAX_WALL_CLOCK_S = 7 * 86_400.0
MIN_MEMORY_MB, MAX_MEMORY_MB = 64, 4 * 2**20
MAX_PROCESSES = 4_194_304
"""The kernel's own ceiling on pids (pid_max)."""
MAX_HEALTH_TIMEOUT_S = 3600.0
MAX_START_TIMEOUT_S = 86_400.0
MAX_TEMPLATE_ID = 10**9
MAX_SNAPSHOT_MB = 2**20
"""1 TiB: a snapshot cap past this is no cap (and `inf` is not a number of MiB)."""
MAX_SNAPSHOT_FILES = 10_000_000
MAX_REPEAT = 1000
MAX_CONCURRENCY_PER_SITE = 64
MAX_COST_USD = 1_000_000.0
"""A spending cap past a million dollars is no cap (and 1e400 reads as infinity)."""
_PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))


def user_path(raw: str | os.PathLike[str]) -> None:
    """The check every path a user gives passes, whatever the option (`user_paths.py`), as a
    bad parameter: cli/entry.py runs it on every path parameter of every command."""
    try:
        check_user_path(raw)
    except UserInputError as exc:
        raise typer.BadParameter(exc.message) from None


def seconds(high: float) -> Callable[[float | None], float | None]:
    """A callback accepting a finite number of seconds in (0, high]."""
    def check(value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and 0 < value <= high):
            raise typer.BadParameter(f"{value} is out of bounds: give seconds above 0 and at "
                                     f"most {high:g} (docs/cli.md, Bounds)")
        return value
    return check


def _given(raw: str, what: str) -> Path:
    """The path, when one is given at all (an empty string is not `.`, the working folder)."""
    if not raw.strip():
        raise typer.BadParameter(f"an empty path: give {what}")
    return Path(raw)


def new_dir(raw: str | os.PathLike[str]) -> Path:
    """A parser for an option naming a folder to create or reuse (`--out`): not empty, not a
    file, not under a file, not in /proc, /sys or /dev, and somewhere we may write."""
    raw = os.fspath(raw)  # typer passes an option's default (`Path()`) through the parser too
    path = _given(raw, "the folder to write into")
    if path.exists() and not path.is_dir():
        raise typer.BadParameter(f"{raw} is a file, not a folder: pick another path")
    absolute = path.resolve()  # a symlink into /proc counts as /proc
    if any(absolute.is_relative_to(fs) for fs in _PSEUDO_FILESYSTEMS):
        raise typer.BadParameter(f"{raw} is on a kernel pseudo-filesystem: pick a real folder")
    existing = next(p for p in (absolute, *absolute.parents) if p.exists())
    if not existing.is_dir():
        raise typer.BadParameter(f"{raw} is under the file {existing}: pick another path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise typer.BadParameter(f"{existing} is not writable: pick another path")
    return path


def existing_dir(raw: str) -> Path:
    """A parser for an option naming a folder that must exist (an empty string is not `.`)."""
    path = _given(raw, "an existing folder")
    if not path.is_dir():
        what = "a file, not a folder" if path.exists() else "not found"
        raise typer.BadParameter(f"{raw} is {what}")
    return path


def existing_path(raw: str) -> Path:
    """A parser for an option naming a file or folder that must exist (an empty string is not
    `.`, which would name the working folder)."""
    path = _given(raw, "an existing file or folder")
    if not path.exists():
        raise typer.BadParameter(f"{raw}: no such file or folder")
    return path


def new_file(raw: str) -> Path:
    """A parser for an option naming a file to write: its folder must be one we may write."""
    path = _given(raw, "the file to write")
    if path.is_dir():
        raise typer.BadParameter(f"{raw} is a folder: give a file path")
    new_dir(str(path.parent))
    return path


def host_name(raw: str) -> str:
    """A parser for an address to listen on: an IP address or a host name (an empty one would
    listen on every interface)."""
    import ipaddress  # only for --host

    text = raw.strip()
    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    if not re.fullmatch(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9-]{1,63})*",
                        text):
        raise typer.BadParameter(f"{raw!r} is not an IP address or a host name (e.g. "
                                 "127.0.0.1, localhost)")
    return text


def base_url(raw: str) -> str:
    """A parser for a model endpoint's URL (`urls.check_base_url`), from its option or its
    environment variable alike (click names the variable a bad value came from)."""
    from benchwright.llm.urls import check_base_url  # urllib.request: not at start-up

    try:
        return check_base_url(raw)
    except ValueError as exc:
        raise typer.BadParameter(f"{raw!r}: {exc}") from None


def key_values(options: list[str], what: str, keys: list[str]) -> dict[str, str]:
    """Repeated `KEY=VALUE` options (`-A`, `-J`) as a dict, each key one of `keys` (the values
    are validated by the settings they go to)."""
    values = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or key.strip() not in keys:
            raise UserInputError(f"not a KEY=VALUE {what} option: {option!r}",
                                 hint=f"keys: {', '.join(keys)}")
        values[key.strip()] = value.strip()
    return values
