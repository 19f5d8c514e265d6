"""Walk, read and copy trees an agent or a problem author wrote, never following a link.

Every open goes through the file descriptor of the folder above it with O_NOFOLLOW, so a
symlink (even one swapped in while we walk) is met as a link, never as what it points to.
FIFOs, sockets and devices are skipped and reported, as are names that are not UTF-8 (they
could not go into a JSON record). Regular files are copied hole for hole: a sparse file stays
sparse, and its apparent size is what counts against a limit.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchwright.errors import needing

_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW
# O_NONBLOCK: a FIFO swapped in after the type check must not hang the harness on open.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20
MAX_DEPTH = 128
Kind = Literal["dir", "file", "link"]
Prune = Callable[[str], bool]
# Never part of a snapshot nor measured: caches, virtualenvs, version-control folders.
CACHE_FOLDERS = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv",
                 "venv", ".git", "node_modules")


class LimitExceeded(Exception):
    """A copy went past its file-count or byte limit (the copy is left incomplete)."""


@dataclass(frozen=True)
class Entry:
    """A folder, regular file or symlink met by `TreeWalk`."""

    rel: str
    """Its path relative to the walk's root, with `/` separators."""
    name: str
    """Its name in its folder."""
    kind: Kind
    """dir, file or link (from the folder listing: nothing is followed)."""
    dir_fd: int
    """The open folder holding it; valid only until the walk moves on."""


@dataclass
class TreeWalk:
    """Every entry under `root`, sorted by name, folders before their contents.

    `prune(rel)` true leaves an entry (and a folder's contents) out silently; special files and
    undecodable names are left out and listed in `skipped`."""

    root: Path
    prune: Prune = lambda _rel: False
    skipped: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[Entry]:
        fd = os.open(self.root, _ROOT_FLAGS)  # the root is the caller's; only what is in it
        # is untrusted
        try:
            yield from self._folder(fd, "")
        finally:
            os.close(fd)

    def _folder(self, fd: int, prefix: str) -> Iterator[Entry]:
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for item in entries:
            rel = prefix + item.name
            if not _decodable(item.name):
                self.skipped.append(f"{shown(rel)}: the name is not UTF-8")
            elif not self.prune(rel):
                yield from self._entry(fd, item, rel)

    def _entry(self, fd: int, item: os.DirEntry[str], rel: str) -> Iterator[Entry]:
        if item.is_symlink():
            yield Entry(rel, item.name, "link", fd)
        elif item.is_dir(follow_symlinks=False):
            if rel.count("/") >= MAX_DEPTH:  # bounds the open folders and the recursion
                self.skipped.append(f"{shown(rel)}: folder nested deeper than {MAX_DEPTH}; skipped")
                return
            yield Entry(rel, item.name, "dir", fd)
            sub = os.open(item.name, _DIR_FLAGS, dir_fd=fd)
            try:
                yield from self._folder(sub, rel + "/")
            finally:
                os.close(sub)
        elif item.is_file(follow_symlinks=False):
            yield Entry(rel, item.name, "file", fd)
        else:
            self.skip(rel, os.stat(item.name, dir_fd=fd, follow_symlinks=False).st_mode)

    def skip(self, rel: str, mode: int) -> None:
        """List an entry left out because it is not a folder, regular file or link."""
        self.skipped.append(f"{shown(rel)}: {special_kind(mode)} skipped")


def shown(rel: str) -> str:
    """A path as text that any JSON or terminal takes (undecodable bytes as \\xNN)."""
    return os.fsencode(rel).decode("utf-8", errors="backslashreplace")


def special_kind(mode: int) -> str:
    """What a non-regular, non-folder, non-link file is, in words."""
    kinds = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "device"),
             (stat.S_ISBLK, "device"))
    return next((word for test, word in kinds if test(mode)), "special file")


def _decodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # surrogate-escaped bytes of a name that is not UTF-8
        return False
    return True


def open_regular(entry: Entry) -> int | None:
    """An fd to read `entry` if it is (still) a regular file, else None."""
    try:
        fd = os.open(entry.name, _FILE_FLAGS, dir_fd=entry.dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOENT, errno.ENXIO):  # a link or gone
            return None
        raise
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    os.close(fd)
    return None


def read_fd(fd: int, limit: int | None = None) -> bytes:
    """Up to `limit` bytes (all when None) from the start of an open file."""
    parts, total = [], 0
    while limit is None or total < limit:
        chunk = os.pread(fd, _CHUNK if limit is None else min(_CHUNK, limit - total), total)
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def sha256_fd(fd: int) -> str:
    """SHA-256 of an open file's contents."""
    digest, offset = hashlib.sha256(), 0
    while chunk := os.pread(fd, _CHUNK, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


def read_regular(root: Path, rel: str, limit: int | None = None,
                 last: bool = False) -> bytes | None:
    """The bytes of `root/rel` (at most `limit`: the first, or with `last` the last) when every
    part of the path is a real folder and the last a regular file; None when any part is a
    link, a special file, or missing."""
    parts = rel.split("/")
    try:
        fd = os.open(root, _ROOT_FLAGS)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            sub = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        entry = Entry(rel, parts[-1], "file", fd)
        file_fd = open_regular(entry)
    except OSError:
        return None
    finally:
        os.close(fd)
    if file_fd is None:
        return None
    try:
        if last and limit is not None:
            return os.pread(file_fd, limit, max(0, os.fstat(file_fd).st_size - limit))
        return read_fd(file_fd, limit)
    finally:
        os.close(file_fd)


@dataclass
class CopyReport:
    """What `copy_tree` copied and left out."""

    files: int = 0
    """Regular files and symlinks copied."""
    bytes: int = 0
    """Apparent size of the regular files copied."""
    skipped: list[str] = field(default_factory=list)
    """Entries left out (special files, names that are not UTF-8), each with why."""


@dataclass(frozen=True)
class CopyLimits:
    """Caps of one copy; None is no cap."""

    max_files: int | None = None
    """Regular files and symlinks."""
    max_bytes: int | None = None
    """Sum of the regular files' apparent sizes."""


def copy_tree(source: Path, dest: Path, prune: Prune = lambda _rel: False,
              limits: CopyLimits = CopyLimits()) -> CopyReport:
    """Copy `source` to the new folder `dest`: links as links, files hole for hole, modes
    without set-id bits. Raises LimitExceeded past a limit (then `dest` is incomplete)."""
    walk = TreeWalk(source, prune)
    report = CopyReport(skipped=walk.skipped)
    dest.mkdir(mode=0o755)
    try:
        for entry in walk:
            _copy_entry(entry, dest / entry.rel, report, limits)
    except OSError as exc:  # a full disk: the space the whole copy takes is what it needs
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise needing(exc, usage([source]).bytes) from exc
    return report


def _copy_entry(entry: Entry, target: Path, report: CopyReport, limits: CopyLimits) -> None:
    if entry.kind == "dir":
        mode = os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False).st_mode
        target.mkdir((mode & 0o777) | 0o700)
    elif entry.kind == "link":
        _count(report, limits, 0)
        target.symlink_to(os.readlink(entry.name, dir_fd=entry.dir_fd))
    elif not _copy_regular(entry, target, report, limits):
        report.skipped.append(f"{shown(entry.rel)}: no longer a regular file; skipped")


def check_limits(source: Path, prune: Prune, limits: CopyLimits) -> None:
    """Raise LimitExceeded when `source` holds more than `limits` allow, before a byte is
    copied (listing and lstat only, so a workspace of a million files fails fast)."""
    if limits.max_files is None and limits.max_bytes is None:
        return
    report = CopyReport()
    for entry in TreeWalk(source, prune):
        if entry.kind == "link":
            _count(report, limits, 0)
        elif entry.kind == "file":
            _count(report, limits, os.stat(entry.name, dir_fd=entry.dir_fd,
                                           follow_symlinks=False).st_size)


def _count(report: CopyReport, limits: CopyLimits, size: int) -> None:
    report.files += 1
    report.bytes += size
    if limits.max_files is not None and report.files > limits.max_files:
        raise LimitExceeded(f"more than {limits.max_files} files")
    if limits.max_bytes is not None and report.bytes > limits.max_bytes:
        raise LimitExceeded(f"more than {limits.max_bytes / 2**20:g} MB (apparent size)")


def _copy_regular(entry: Entry, target: Path, report: CopyReport, limits: CopyLimits) -> bool:
    src = open_regular(entry)
    if src is None:
        return False
    try:
        info = os.fstat(src)
        _count(report, limits, info.st_size)  # before any byte is written
        dst = os.open(target, _NEW_FILE, info.st_mode & 0o777)
        try:
            if info.st_size:
                _copy_data(src, dst, info.st_size)
            os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return True


def _copy_data(src: int, dst: int, size: int) -> None:
    """Copy only the data extents; the holes between them stay holes."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(src, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole from here on
                break
            if exc.errno != errno.EINVAL:
                raise
            start = offset  # a file system without SEEK_DATA: all data
        end = min(os.lseek(src, start, os.SEEK_HOLE), size)
        _copy_range(src, dst, start, end)
        offset = end
    os.ftruncate(dst, size)


def _copy_range(src: int, dst: int, start: int, end: int) -> None:
    while start < end:
        try:
            done = os.copy_file_range(src, dst, end - start, start, start)
        except OSError:  # across file systems on old kernels, or unsupported
            done = os.pwrite(dst, os.pread(src, min(_CHUNK, end - start), start), start)
        if done == 0:  # the file shrank while we copied
            return
        start += done


@dataclass
class _Level:
    """A folder on the way down of `remove_tree`: its name in the folder above, that folder's
    identity (to check the way back up), and its subfolders still to remove."""

    name: str
    above: tuple[int, int]
    pending: list[str]


def remove_tree(path: Path, ignore_errors: bool = False) -> None:
    """Remove `path` (a folder, a file or a link; nothing when it is missing) and everything in
    it, at any depth, any names, any number of files, never following a link. With
    `ignore_errors`, what cannot be removed stays, silently (as `shutil.rmtree`'s).

    Iterative, and one descriptor open at a time: a folder 3,000 levels deep neither recurses
    nor runs out of descriptors (it goes back up by `..`, checked against the folder it came
    from). A folder the sandbox made unreadable (mode 000) is given back to its owner first."""
    try:
        parent = os.open(path.parent, _ROOT_FLAGS)  # the caller's; only what is in it is
    except FileNotFoundError:  # untrusted
        return
    try:
        _remove_entry(parent, path.name)
    except FileNotFoundError:
        pass
    except OSError:
        if not ignore_errors:
            raise
    finally:
        os.close(parent)


def _remove_entry(parent: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=parent)
        return
    except IsADirectoryError:
        pass
    except PermissionError:  # a folder (EPERM on Linux for unlink), or the parent not writable
        _writable(parent)
        if not stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=parent)
            return
    _remove_folder(parent, name)


def _remove_folder(parent: int, name: str) -> None:
    """Empty and remove the folder `name` of `parent`, depth first, without recursion."""
    fd = _open_folder(parent, name)
    stack = [_Level(name, _identity(parent), _empty_files(fd))]
    while stack:
        level = stack[-1]
        if level.pending:
            child = level.pending.pop()
            sub = _open_folder(fd, child)
            stack.append(_Level(child, _identity(fd), _empty_files(sub)))
            os.close(fd)
            fd = sub
            continue
        stack.pop()
        up = parent if not stack else _up(fd, level.above)
        os.close(fd)
        _rmdir(up, level.name)
        if not stack:
            return
        fd = up


def _open_folder(parent: int, name: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except PermissionError:  # mode 000 or the like: chmod it through an O_PATH descriptor
        chmod_at(parent, name, 0o700)
        return os.open(name, _DIR_FLAGS, dir_fd=parent)


def _empty_files(fd: int) -> list[str]:
    """Unlink every non-folder in the open folder `fd`; returns its subfolders' names."""
    _writable(fd)
    folders = []
    with os.scandir(fd) as listing:
        for item in listing:
            if item.is_dir(follow_symlinks=False):
                folders.append(item.name)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(item.name, dir_fd=fd)
    return folders


def _writable(fd: int) -> None:
    """Let the owner list and change the open folder `fd` (the sandbox may have taken that)."""
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & 0o700 != 0o700:
        os.fchmod(fd, mode | 0o700)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _up(fd: int, expected: tuple[int, int]) -> int:
    """The folder above `fd`, when it is still the one we came down from."""
    up = os.open("..", _DIR_FLAGS, dir_fd=fd)
    if _identity(up) != expected:
        os.close(up)
        raise OSError(errno.ESTALE, "a folder was moved while it was being removed")
    return up


def _rmdir(parent: int, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(name, dir_fd=parent)



def deep_entries(root: Path) -> Iterator[tuple[int, str, os.stat_result]]:
    """Every entry under `root` at any depth, folders before their contents, as (the open folder
    that holds it, its name, its lstat); the descriptor is valid only during the yield. Links
    are met as links; like `remove_tree`, one descriptor at a time and no recursion. A folder
    its owner made unreadable is made readable to them (a folder of another user's that cannot
    be opened is left out)."""
    fd = os.open(root, _ROOT_FLAGS)  # the caller's; only what is in it is untrusted
    pending = [_names(fd)]
    above: list[tuple[int, int]] = []
    try:
        while pending:
            if not pending[-1]:
                pending.pop()
                if pending:
                    up = _up(fd, above.pop())
                    os.close(fd)
                    fd = up
                continue
            name = pending[-1].pop()
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            yield fd, name, info
            if stat.S_ISDIR(info.st_mode):
                try:  # a folder the sandbox made unreadable is given back to its owner first
                    sub = _open_folder(fd, name)
                except (PermissionError, FileNotFoundError):  # someone else's, or gone
                    continue
                above.append(_identity(fd))
                pending.append(_names(sub))
                os.close(fd)
                fd = sub
    finally:
        os.close(fd)


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as listing:
        return [item.name for item in listing]


def chmod_at(fd: int, name: str, mode: int) -> None:
    """chmod the folder or file `name` of the open folder `fd`, never through a link (Linux
    has no lchmod: through an O_PATH descriptor of the entry itself)."""
    handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    try:
        if not stat.S_ISLNK(os.fstat(handle).st_mode):
            Path(f"/proc/self/fd/{handle}").chmod(mode)
    finally:
        os.close(handle)


@dataclass
class Usage:
    """What a tree holds, as `usage` counted it."""

    entries: int = 0
    """Folders, files, links and special files under the root (the root not counted)."""
    bytes: int = 0
    """Disk space the regular files take (allocated blocks: a sparse file counts its data)."""

    def minus(self, other: Usage) -> Usage:
        """What this holds past `other` (never below 0)."""
        return Usage(max(0, self.entries - other.entries), max(0, self.bytes - other.bytes))


def usage(roots: list[Path], stop: Usage | None = None) -> Usage:
    """The entries and bytes under each of `roots` together, walked by descriptor at any depth;
    with `stop`, the count ends as soon as it exceeds either of its figures (a folder of a
    million files costs no more than the cap)."""
    total = Usage()
    for root in roots:
        for _fd, _name, info in deep_entries(root):
            total.entries += 1
            if stat.S_ISREG(info.st_mode):
                total.bytes += info.st_blocks * 512
            if stop is not None and (total.entries > stop.entries or total.bytes > stop.bytes):
                return total
    return total
