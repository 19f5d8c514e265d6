"""Which files of a snapshot the judge reads, and how they are grouped into requests.

The files are those with the entry file's suffix (SCBench's rule), found without following a
link and with caches, virtualenvs and graders' tests left out (SCBench's glob walks into a
`.venv`). Batches follow SCBench's sizes: a file over 500 lines is a batch of its own; the others
are packed in path order, up to 5 files or 1,000 lines a batch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.files.nofollow import read_regular
from benchwright.metrics.static import files_with_suffixes

LARGE_FILE_LINES = 500
MAX_BATCH_LINES = 1000
MAX_BATCH_FILES = 5
MAX_FILE_BYTES = 2**20


class SnapshotTooLarge(UserInputError):
    """A snapshot past the judge's size limits (that checkpoint is a judge error)."""


@dataclass(frozen=True)
class SourceFile:
    """One file as the judge sees it."""

    path: str
    """Relative to the snapshot, `/`-separated."""
    text: str
    """Its content (UTF-8, undecodable bytes replaced)."""
    lines: int
    """Its number of lines."""


@dataclass(frozen=True)
class SizeLimits:
    """Caps on what one checkpoint may send (an agent could write thousands of files)."""

    max_files: int = 200
    """Files judged per checkpoint."""
    max_lines: int = 50_000
    """Lines judged per checkpoint."""


def judged_files(snapshot: Path, suffix: str,
                 limits: SizeLimits = SizeLimits()) -> list[SourceFile]:
    """The snapshot's files with `suffix`, read without following links; over the limits (or
    a file over 1 MiB) raises SnapshotTooLarge."""
    names = files_with_suffixes(snapshot, {suffix})
    if len(names) > limits.max_files:
        raise SnapshotTooLarge(f"{len(names)} {suffix} files, over the judge's limit of "
                               f"{limits.max_files}")
    files = [f for f in (_read(snapshot, rel) for rel in names) if f is not None]
    total = sum(f.lines for f in files)
    if total > limits.max_lines:
        raise SnapshotTooLarge(f"{total} lines of {suffix} files, over the judge's limit of "
                               f"{limits.max_lines}")
    return files


def _read(snapshot: Path, rel: str) -> SourceFile | None:
    data = read_regular(snapshot, rel, limit=MAX_FILE_BYTES + 1)
    if data is None:  # replaced by a link or a special file since the walk
        return None
    if len(data) > MAX_FILE_BYTES:
        raise SnapshotTooLarge(f"{rel} is over {MAX_FILE_BYTES // 2**20} MiB")
    text = data.decode("utf-8", errors="replace")
    return SourceFile(path=rel, text=text, lines=len(text.splitlines()))


def batch_files(files: list[SourceFile], max_lines: int = MAX_BATCH_LINES,
                max_files: int = MAX_BATCH_FILES,
                large: int = LARGE_FILE_LINES) -> list[list[SourceFile]]:
    """SCBench's batches: each large file alone first, then the others packed in order."""
    batches = [[f] for f in files if f.lines > large]
    current: list[SourceFile] = []
    for file in (f for f in files if f.lines <= large):
        if current and (sum(f.lines for f in current) + file.lines > max_lines
                        or len(current) >= max_files):
            batches.append(current)
            current = []
        current.append(file)
    return [*batches, current] if current else batches


def files_sha256(files: list[SourceFile]) -> str:
    """One hash over the judged files' paths and contents (what a verdict is about)."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.path.encode() + b"\0" + file.text.encode() + b"\0")
    return digest.hexdigest()
