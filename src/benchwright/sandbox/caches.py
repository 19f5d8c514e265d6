"""Every cache benchwright keeps on this machine, what each holds, and pruning with bounds.

Each kind is a folder of entries (one environment, one installed agent CLI, one grading scratch
folder, ...). An entry is in use while a live process holds a shared lock on its folder
(`hold`: every environment a process got from `ensure_env`, until it exits) or the exclusive
lock of an owned folder (`owned_temp`); pruning never removes an entry in use, tested by taking
the folder's lock without waiting. Last use is the newest modification time of the entry and of
its marker (`ensure_env` touches an environment's marker each time it hands it out). The runs
that used an entry are the run folders named in `<entry>.runs` beside it: `hold` adds the run
this process works for (`using_run`, set by the run lifecycle; its pool workers inherit it),
keeping the last `MAX_RUNS_NOTED`.

The environments are capped: after a build, when they take more than the cap (default 20 GiB,
`$BENCHWRIGHT_CACHE_MAX_GB`), the least recently used ones no process holds are removed until
they fit (docs/cli.md, `benchwright cache`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_text_atomic
from benchwright.files.nofollow import read_regular, remove_tree, usage
from benchwright.files.owned_temp import held
from benchwright.files.user_paths import check_user_path

DEFAULT_MAX_GB = 20.0
MAX_GB_VARIABLE = "BENCHWRIGHT_CACHE_MAX_GB"
ENV_MARKER = ".benchwright-env.json"
"""A finished environment's marker (`environments.MARKER`)."""
RUN_VARIABLE = "BENCHWRIGHT_RUN_FOLDER"
"""The run folder this process (and the workers it starts) works for (`using_run`)."""
RUNS_SUFFIX = ".runs"
NOTES_RUNS = ("envs",)
"""The kinds whose entries note the runs that used them (the others' runs are unknown)."""
MAX_RUNS_NOTED = 20
SIDE_FILES = (".lock", RUNS_SUFFIX, ".tmp")
"""Files beside the entries (`<entry>.lock`, `<entry>.runs` and its temporary file while it is
written): not entries themselves."""

# kind -> (what it holds, its folder under the cache base, or None: the temporary folder,
# the name prefix of its entries there)
KINDS: dict[str, tuple[str, str | None, str]] = {
    "envs": ("Python environments (tests, solutions, agents, the web evaluator)", "envs", ""),
    "tools": ("agent command-line tools installed for CLI agents", "tools", ""),
    "images": ("container image builds: their Debian packages and scratch roots", "images", ""),
    "collections": ("the tests each checkpoint has, as collected once per machine",
                    "collections", ""),
    "grading": ("grading scratch folders (a killed grader's are swept)", "grading", ""),
    "browser-profiles": ("Chromium profiles of web runs (a killed run's are swept)", None,
                         "benchwright-chromium-"),
}

_HELD: dict[Path, int] = {}
"""Folders this process holds (`hold`), with the descriptor whose lock says so."""


def cache_base() -> Path:
    """benchwright's cache folder: $BENCHWRIGHT_CACHE_DIR (checked as every path a user gives,
    and a folder or none yet), else ~/.cache/benchwright."""
    raw = os.environ.get("BENCHWRIGHT_CACHE_DIR")
    if not raw:
        return Path.home() / ".cache" / "benchwright"
    try:
        path = check_user_path(raw)
    except UserInputError as exc:
        raise UserInputError(f"BENCHWRIGHT_CACHE_DIR: {exc.message}",
                             hint="point it at a folder, or unset it") from None
    absolute = path.absolute()
    existing = next(p for p in (absolute, *absolute.parents) if p.exists())
    if not existing.is_dir():
        raise UserInputError(f"BENCHWRIGHT_CACHE_DIR: {existing} is a file, not a folder",
                             hint="point it at a folder, or unset it")
    return path


class CacheEntry(BaseModel):
    """One entry of a cache."""

    kind: str
    """Which cache (a key of `KINDS`)."""
    name: str
    """The entry's file or folder name."""
    path: Path
    """Where it is."""
    bytes: int
    """Disk space it takes (allocated blocks; links not followed)."""
    last_used: datetime
    """When it was last used or changed (UTC)."""
    in_use: bool
    """Whether a live process holds it: never pruned while so."""
    runs: list[str] = []
    """The run folders that used it, oldest first (the last `MAX_RUNS_NOTED`; empty for kinds
    no run holds, and for entries used before runs were noted)."""


class PruneResult(BaseModel):
    """What `prune` removed and kept."""

    removed: list[CacheEntry]
    """The entries removed (or, in a dry run, that would be)."""
    kept_in_use: list[CacheEntry]
    """Entries the bounds would have removed but a live process holds."""
    freed_bytes: int
    """The space the removed entries took."""


def kind_root(kind: str, base: Path) -> Path:
    """The folder a cache kind's entries live in."""
    _what, folder, _prefix = KINDS[kind]
    return base / folder if folder is not None else Path(tempfile.gettempdir())


def entries(base: Path, kinds: list[str] | None = None) -> list[CacheEntry]:
    """Every entry of the caches named (all by default), oldest use first."""
    found = [entry for kind in kinds or list(KINDS) for entry in _kind_entries(kind, base)]
    return sorted(found, key=lambda e: e.last_used)


def _kind_entries(kind: str, base: Path) -> Iterator[CacheEntry]:
    root, prefix = kind_root(kind, base), KINDS[kind][2]
    try:
        paths = sorted(root.iterdir())
    except OSError:
        return
    for path in paths:
        if path.name.startswith(prefix) and not path.name.endswith(SIDE_FILES):
            entry = _entry(kind, path)
            if entry is not None:
                yield entry


def _entry(kind: str, path: Path) -> CacheEntry | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return None  # not ours: the caches hold no links at their top
    newest = max(info.st_mtime, _mtime(path / ENV_MARKER))
    size = usage([path]).bytes if stat.S_ISDIR(info.st_mode) else info.st_blocks * 512
    return CacheEntry(kind=kind, name=path.name, path=path, bytes=size,
                      last_used=datetime.fromtimestamp(newest, UTC),
                      in_use=stat.S_ISDIR(info.st_mode) and held(path), runs=runs_of(path))


def runs_of(path: Path) -> list[str]:
    """The run folders noted beside an entry (`<entry>.runs`, read without following a link)."""
    data = read_regular(path.parent, path.name + RUNS_SUFFIX, 1 << 20)
    text = data.decode(errors="replace") if data is not None else ""
    return [line for line in text.splitlines() if line.strip()]


def _note_run(path: Path) -> None:
    """Add the run this process works for to the entry's runs (called under its build lock)."""
    run = os.environ.get(RUN_VARIABLE, "")
    if not run or "\n" in run:
        return
    earlier = [r for r in runs_of(path) if r != run]
    noted = [*earlier[-(MAX_RUNS_NOTED - 1):], run]
    with contextlib.suppress(OSError):  # a note that cannot be written loses only the note
        write_text_atomic(path.with_name(path.name + RUNS_SUFFIX), "\n".join(noted) + "\n",
                          durable=False)


@contextmanager
def using_run(run_dir: Path) -> Iterator[None]:
    """Within: the entries this process (and workers it starts) holds note `run_dir`."""
    before = os.environ.get(RUN_VARIABLE)
    os.environ[RUN_VARIABLE] = str(run_dir)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(RUN_VARIABLE, None)
        else:
            os.environ[RUN_VARIABLE] = before


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def prune(base: Path, *, older_than: timedelta | None = None, max_bytes: int | None = None,
          kinds: list[str] | None = None, dry_run: bool = False) -> PruneResult:
    """Remove entries last used before `older_than` ago, then the least recently used until
    what is left of the kinds named takes at most `max_bytes`; entries in use are kept."""
    found = entries(base, kinds)
    doomed = _over_bounds(found, older_than, max_bytes)
    removed, kept = [], []
    for entry in doomed:
        if entry.in_use or not (dry_run or _remove(entry)):
            kept.append(entry.model_copy(update={"in_use": True}))
        else:
            removed.append(entry)
    return PruneResult(removed=removed, kept_in_use=kept,
                       freed_bytes=sum(e.bytes for e in removed))


def _over_bounds(found: list[CacheEntry], older_than: timedelta | None,
                 max_bytes: int | None) -> list[CacheEntry]:
    """The entries the bounds remove, oldest use first (`found` is in that order)."""
    cutoff = datetime.now(UTC) - older_than if older_than is not None else None
    doomed = [e for e in found if cutoff is not None and e.last_used < cutoff]
    left = sum(e.bytes for e in found if e not in doomed)
    for entry in found:
        if max_bytes is None or left <= max_bytes:
            break
        if entry not in doomed and not entry.in_use:
            doomed.append(entry)
            left -= entry.bytes
    return doomed


def _remove(entry: CacheEntry) -> bool:
    """Remove an entry nobody holds, under its build lock when it has one; False when a
    process took it meanwhile."""
    with _build_lock(entry.path) as free:
        if not free:
            return False
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
        except NotADirectoryError:
            entry.path.unlink(missing_ok=True)
            return True
        except FileNotFoundError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a holder keeps it
        except OSError:
            os.close(fd)
            return False
        try:
            remove_tree(entry.path)
        finally:
            os.close(fd)
        entry.path.with_name(entry.path.name + RUNS_SUFFIX).unlink(missing_ok=True)
    return True


@contextmanager
def _build_lock(path: Path) -> Iterator[bool]:
    """The `<entry>.lock` file's lock, if there is one (environments, tools), without waiting:
    a build or a reuse check in progress holds it."""
    lock = path.with_name(path.name + ".lock")
    if not lock.is_file() or lock.is_symlink():
        yield True
        return
    fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        yield False
        return
    try:
        yield True
    finally:
        os.close(fd)


def hold(path: Path) -> None:
    """Mark a cache folder in use by this process until it exits (a shared lock on the folder:
    many processes may hold one environment; `prune` removes none that is held)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC)
    if path in _HELD:
        if os.fstat(_HELD[path]).st_ino == os.fstat(fd).st_ino:
            os.close(fd)
            _note_run(path)  # held for an earlier run of this process
            return
        os.close(_HELD.pop(path))  # rebuilt since: hold the folder there now
    fcntl.flock(fd, fcntl.LOCK_SH)
    _HELD[path] = fd
    _note_run(path)
    with contextlib.suppress(OSError):  # last use, for the cap's least-recently-used order
        os.utime(path / ENV_MARKER, follow_symlinks=False)


def release_all() -> None:
    """Let go of every folder this process holds (tests; a process exiting lets go anyway)."""
    for fd in _HELD.values():
        os.close(fd)
    _HELD.clear()


def max_env_bytes() -> int:
    """The environments' size cap: $BENCHWRIGHT_CACHE_MAX_GB (a number of GiB above 0), else
    the default."""
    raw = os.environ.get(MAX_GB_VARIABLE, "").strip()
    try:
        gib = float(raw) if raw else DEFAULT_MAX_GB
    except ValueError:
        gib = -1.0
    if not 0 < gib < float("inf"):
        raise UserInputError(f"{MAX_GB_VARIABLE}={raw!r} is not a size in GiB above 0",
                             hint="e.g. 20 or 0.5; unset it for the default")
    return int(gib * 2**30)


def enforce_env_cap(base: Path) -> PruneResult:
    """After a build: the least recently used environments no process holds, removed until the
    environments fit under the cap."""
    return prune(base, max_bytes=max_env_bytes(), kinds=["envs"])


def age(text: str) -> timedelta:
    """`30d`, `12h`, `90m` or `45s` as a duration."""
    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    number, unit = text.strip()[:-1], text.strip()[-1:].lower()
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if unit not in units or not 0 <= value < 1e9:
        raise UserInputError(f"{text!r} is not an age", hint="write e.g. 30d, 12h, 90m or 45s")
    return timedelta(seconds=value * units[unit])


def size(text: str) -> int:
    """`10G`, `500M`, `2.5GiB` or a number of bytes, as bytes."""
    units = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    raw = text.strip().lower().removesuffix("ib").removesuffix("b")
    number, unit = (raw[:-1], raw[-1]) if raw[-1:] in "kmgt" and raw else (raw, "")
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e15:
        raise UserInputError(f"{text!r} is not a size", hint="write e.g. 10G, 500M or 2.5GiB")
    return int(value * units[unit])
