"""Snapshots of a workspace and the diff between two of them.

The workspace is the agent's: nothing in it is followed. A symlink is kept as a link (and shown
in diffs as its target, never as what it points to), FIFOs, sockets, devices and names that are
not UTF-8 are left out and listed, and a workspace past the snapshot limits is the agent's error.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.errors import SnapshotLimitError
from benchwright.files.nofollow import (
    CACHE_FOLDERS,
    CopyLimits,
    LimitExceeded,
    TreeWalk,
    check_limits,
    copy_tree,
    open_regular,
    read_regular,
    remove_tree,
    sha256_fd,
    shown,
)

SNAPSHOT_IGNORE = CACHE_FOLDERS
_MAX_PATCH_BYTES = 200_000
_MAX_TEXT_BYTES = 2_000_000
_LINK_PREFIX = "symlink -> "
DEFAULT_MAX_SNAPSHOT_MB = 1024
DEFAULT_MAX_SNAPSHOT_FILES = 100_000


@dataclass(frozen=True)
class SnapshotLimits:
    """Caps on one checkpoint's snapshot; None is no cap."""

    max_mb: float | None = DEFAULT_MAX_SNAPSHOT_MB
    """Apparent size of its regular files, in MiB (a sparse file counts at its full size)."""
    max_files: int | None = DEFAULT_MAX_SNAPSHOT_FILES
    """Regular files and symlinks."""


@dataclass
class Snapshot:
    """What a snapshot holds and what it left out."""

    files: int
    """Regular files and symlinks saved."""
    bytes: int
    """Apparent size of the regular files saved."""
    skipped: list[str] = field(default_factory=list)
    """Workspace entries left out (special files, names that are not UTF-8), each with why."""


def take_snapshot(workspace: Path, dest: Path, exclude: set[str],
                  limits: SnapshotLimits = SnapshotLimits()) -> Snapshot:
    """Copy the workspace to `dest` (through a temporary folder) without following links.

    `exclude` holds top-level paths (static assets placed for the agent) left out. Past a limit,
    raises SnapshotLimitError and leaves no `dest`."""
    tmp = dest.with_name(dest.name + ".tmp")
    remove_tree(tmp, ignore_errors=True)
    caps = CopyLimits(max_files=limits.max_files,
                      max_bytes=None if limits.max_mb is None else int(limits.max_mb * 2**20))
    try:
        check_limits(workspace, _pruner(exclude), caps)
        report = copy_tree(workspace, tmp, prune=_pruner(exclude), limits=caps)
    except LimitExceeded as exc:
        remove_tree(tmp, ignore_errors=True)
        remove_tree(dest, ignore_errors=True)
        raise SnapshotLimitError(f"the workspace holds {exc}, over the snapshot limit",
                                 hint="raise --max-snapshot-mb / --max-snapshot-files") from None
    remove_tree(dest, ignore_errors=True)
    tmp.rename(dest)
    return Snapshot(files=report.files, bytes=report.bytes, skipped=report.skipped)


def _pruner(exclude: set[str]) -> Any:
    ignored = set(SNAPSHOT_IGNORE)

    def prune(rel: str) -> bool:
        return rel in exclude or rel.rpartition("/")[2] in ignored

    return prune


def files_of(snapshot: Path | None) -> dict[str, str]:
    """Relative path -> SHA-256 of every regular file and symlink in a snapshot (a link is
    hashed by its target text, so retargeting it is a modification)."""
    if snapshot is None or not snapshot.is_dir():
        return {}
    found: dict[str, str] = {}
    for entry in TreeWalk(snapshot):
        if entry.kind == "link":
            target = os.fsencode(os.readlink(entry.name, dir_fd=entry.dir_fd))
            found[entry.rel] = hashlib.sha256(b"symlink\0" + target).hexdigest()
        elif entry.kind == "file" and (fd := open_regular(entry)) is not None:
            try:
                found[entry.rel] = sha256_fd(fd)
            finally:
                os.close(fd)
    return found


def diff_snapshots(before: Path | None, after: Path) -> dict[str, Any]:
    """Added, removed and modified files, line counts, and unified diffs of text files."""
    old, new = files_of(before), files_of(after)
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    modified = sorted(p for p in set(old) & set(new) if old[p] != new[p])
    patches: dict[str, str] = {}
    per_file: dict[str, dict[str, int]] = {}
    for rel in [*added, *removed, *modified]:
        a = text_lines(before, rel) if before is not None and rel in old else []
        b = text_lines(after, rel) if rel in new else []
        patch = list(difflib.unified_diff(a, b, f"a/{rel}", f"b/{rel}", lineterm=""))
        per_file[rel] = {
            "lines_added": sum(1 for ln in patch if ln.startswith("+") and ln[:3] != "+++"),
            "lines_removed": sum(1 for ln in patch if ln.startswith("-") and ln[:3] != "---")}
        if patch and sum(len(t) for t in patches.values()) < _MAX_PATCH_BYTES:
            patches[rel] = "\n".join(patch)
    return {"format": "benchwright.diff/1", "added": added, "removed": removed,
            "modified": modified,
            "lines_added": sum(c["lines_added"] for c in per_file.values()),
            "lines_removed": sum(c["lines_removed"] for c in per_file.values()),
            "file_diffs": dict(sorted(per_file.items())), "patches": patches}


def text_lines(root: Path, rel: str) -> list[str]:
    """A regular file's lines, or a link shown as its target; never what a link points to
    (empty for a binary file, one past the text bound, or one that is missing)."""
    path = root / rel
    if path.is_symlink():
        return [_LINK_PREFIX + shown(str(path.readlink()))]
    data = read_regular(root, rel, limit=_MAX_TEXT_BYTES + 1)
    if data is None or b"\0" in data[:4096] or len(data) > _MAX_TEXT_BYTES:
        return []  # not a regular file, binary, or too large to diff as text
    return data.decode("utf-8", errors="replace").splitlines()
