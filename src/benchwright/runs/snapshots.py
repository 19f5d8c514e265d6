"""Snapshots of a workspace and the diff between two of them."""

from __future__ import annotations

import difflib
import hashlib
import shutil
from pathlib import Path
from typing import Any

# Never part of a snapshot: caches, virtualenvs, version-control folders.
SNAPSHOT_IGNORE = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv",
                   "venv", ".git", "node_modules")
_MAX_PATCH_BYTES = 200_000


def take_snapshot(workspace: Path, dest: Path, exclude: set[str]) -> int:
    """Copy the workspace to `dest` (through a temporary folder); return the file count.

    `exclude` holds top-level paths (static assets placed for the agent) left out.
    """
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(workspace, tmp, symlinks=True, ignore=_ignore(workspace, exclude))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return sum(1 for p in dest.rglob("*") if p.is_file() or p.is_symlink())


def _ignore(root: Path, exclude: set[str]) -> Any:
    patterns = shutil.ignore_patterns(*SNAPSHOT_IGNORE)

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(patterns(folder, names))
        rel = Path(folder).relative_to(root)
        return skipped | {n for n in names if (rel / n).as_posix() in exclude}

    return ignore


def files_of(snapshot: Path | None) -> dict[str, str]:
    """Relative path -> SHA-256 of every file in a snapshot."""
    if snapshot is None or not snapshot.is_dir():
        return {}
    return {p.relative_to(snapshot).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(snapshot.rglob("*")) if p.is_file()}


def diff_snapshots(before: Path | None, after: Path) -> dict[str, Any]:
    """Added, removed and modified files, line counts, and unified diffs of text files."""
    old, new = files_of(before), files_of(after)
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    modified = sorted(p for p in set(old) & set(new) if old[p] != new[p])
    patches: dict[str, str] = {}
    lines_added = lines_removed = 0
    for rel in [*added, *removed, *modified]:
        a = _text(before / rel) if before is not None and rel in old else []
        b = _text(after / rel) if rel in new else []
        patch = list(difflib.unified_diff(a, b, f"a/{rel}", f"b/{rel}", lineterm=""))
        lines_added += sum(1 for ln in patch if ln.startswith("+") and not ln.startswith("+++"))
        lines_removed += sum(1 for ln in patch if ln.startswith("-") and not ln.startswith("---"))
        if patch and sum(len(t) for t in patches.values()) < _MAX_PATCH_BYTES:
            patches[rel] = "\n".join(patch)
    return {"format": "benchwright.diff/1", "added": added, "removed": removed,
            "modified": modified, "lines_added": lines_added, "lines_removed": lines_removed,
            "patches": patches}


def _text(path: Path) -> list[str]:
    data = path.read_bytes()
    if b"\0" in data[:4096]:
        return []
    return data.decode("utf-8", errors="replace").splitlines()
