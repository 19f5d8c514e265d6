"""The local paths requirement lines name in a submission's folder, and content digests of
them and of built environments, walked without following a link (`benchwright.files.nofollow`).

A requirement can name a path of the submission (`./pkg`, `.`, `-e .`, `pkg @ file:./pkg`,
`file:///.../pkg`, `-r more.txt`, `--find-links ./wheels`): what gets installed is then that
path's content, not the line's text, so the environment cache keys on the content. Every word of
a line that is a path to a real folder or regular file inside the folder (no part of it a link)
counts: a word that only looks like one (`requests==2.0` where a folder `requests` exists) costs
a cache miss, never a wrong reuse. The build sees only these paths of the submission, so whatever
it can read is in the key.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from benchwright.files.nofollow import Entry, Prune, TreeWalk, open_regular, sha256_fd

WHOLE = "."
"""The submission's whole folder (`.`, `-e .`)."""
_WORDS = re.compile(r"[\s@=,;]+")
_URL_PREFIX = re.compile(r"^(file://(localhost)?|file:)", re.IGNORECASE)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# Written into an environment by running its python outside a sandbox (the web evaluator's):
# not what was built, and not a way in (grading mounts environments read-only).
_RUNTIME_CACHES = ("__pycache__",)


def named_paths(requirements: Sequence[str], source: Path) -> list[str]:
    """The paths (relative to `source`, `.` for all of it) the requirement lines name that are
    real folders or regular files in it; `.` alone when it is named (it holds the rest)."""
    found: set[str] = set()
    for line in requirements:
        for word in _WORDS.split(line):
            rel = _inside(word, source)
            if rel is not None and _real(source, rel):
                found.add(rel)
    return [WHOLE] if WHOLE in found else sorted(found)


def _inside(word: str, source: Path) -> str | None:
    """`word` as a path relative to `source`, or None when it is none or leads out of it."""
    word = _URL_PREFIX.sub("", word.strip()).split("#", 1)[0]
    word = re.sub(r"\[[^\]]*\]$", "", word)  # `./pkg[extra]`
    if not word or word.startswith("-"):
        return None
    path = PurePosixPath(word)
    if path.is_absolute():
        try:
            path = path.relative_to(source)
        except ValueError:
            return None  # outside the submission: the build does not see it
    parts = [p for p in path.parts if p not in ("", ".")]
    if ".." in parts:
        return None
    return "/".join(parts) or WHOLE


def _real(source: Path, rel: str) -> bool:
    """Whether `source/rel` is a folder or regular file reached through real folders only."""
    if rel == WHOLE:
        return True
    *folders, last = rel.split("/")
    try:
        fd = os.open(source, _DIR)
    except OSError:
        return False
    try:
        for name in folders:
            sub = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = sub
        mode = os.stat(last, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.ENAMETOOLONG,
                         errno.EACCES):
            return False
        raise
    finally:
        os.close(fd)
    return stat.S_ISDIR(mode) or stat.S_ISREG(mode)


def digest(source: Path, named: Sequence[str]) -> str:
    """The SHA-256 of the content of every named path (files' bytes, links as their text).
    Something the walk cannot read (a special file, a name that is not UTF-8) makes it a digest
    of its own: such an environment is never shared."""
    total = hashlib.sha256()
    for rel in named:
        path = source if rel == WHOLE else source / rel
        total.update(f"path {rel}\n".encode())
        if path.is_dir() and not path.is_symlink():
            if not _tree(path, total, content=True):
                total.update(secrets.token_bytes(16))
        else:
            total.update(_file_digest(path).encode())
    return total.hexdigest()


def fingerprint(root: Path, leave_out: str) -> str:
    """A digest of a built environment's entries (name, kind, mode, size, change time), fast
    enough to check before every reuse; `leave_out`: a top-level name not counted."""
    total = hashlib.sha256()
    _tree(root, total, content=False,
          prune=lambda rel: rel == leave_out or rel.rsplit("/", 1)[-1] in _RUNTIME_CACHES)
    return total.hexdigest()


def _tree(root: Path, total: Any, *, content: bool, prune: Prune = lambda _rel: False) -> bool:
    """Add every entry under `root` to `total`; False when some could not be taken in."""
    walk = TreeWalk(root, prune=prune)
    for entry in walk:
        info = os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False)
        total.update(f"{entry.kind} {entry.rel} {stat.S_IMODE(info.st_mode):o}".encode())
        if entry.kind == "link":
            total.update(os.readlink(entry.name, dir_fd=entry.dir_fd).encode(errors="replace"))
        elif entry.kind == "file" and content:
            total.update(_entry_digest(entry).encode())
        elif entry.kind == "file":
            total.update(f" {info.st_size} {info.st_mtime_ns} {info.st_ctime_ns}".encode())
        total.update(b"\0")
    return not walk.skipped


def _entry_digest(entry: Entry) -> str:
    fd = open_regular(entry)
    if fd is None:
        return "gone"
    try:
        return sha256_fd(fd)
    finally:
        os.close(fd)


def _file_digest(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return "unreadable"
    try:
        return sha256_fd(fd) if stat.S_ISREG(os.fstat(fd).st_mode) else "special"
    finally:
        os.close(fd)
