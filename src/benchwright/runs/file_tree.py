"""A folder as a value that travels between machines (an executor that shares no filesystem):
packed without following a link, unpacked only into a new folder.

What a remote job gets (problem files, the previous snapshot) and what it sends back (a finished
checkpoint's or trial's files) is a `FileTree`. Packing walks with `benchwright.files.nofollow`, so
a
link is kept as a link and special files are left out. Unpacking treats the tree as hostile: an
entry whose path is absolute, climbs out (`..`), is empty or repeats is refused, folders are made
before their contents, and every file is created new (O_EXCL, O_NOFOLLOW) in a folder made here,
so nothing outside the destination is ever written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.files.nofollow import Prune, TreeWalk, open_regular, read_fd, remove_tree

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeEntry(BaseModel):
    """One folder, regular file or symlink of a packed tree."""

    path: str
    """Relative to the tree's root, `/`-separated; folders come before their contents."""
    kind: Literal["dir", "file", "link"]
    """What it is."""
    mode: int = 0o644
    """Permission bits (no set-id bits are kept)."""
    data: bytes = b""
    """A file's contents; a link's target, as bytes."""


class FileTree(BaseModel):
    """A packed folder."""

    entries: list[TreeEntry] = Field(default_factory=list)
    """Its folders, files and links, in walk order."""
    skipped: list[str] = Field(default_factory=list)
    """Entries left out when packing (special files, undecodable names), each with why."""

    @property
    def size(self) -> int:
        """Bytes of file contents it carries."""
        return sum(len(e.data) for e in self.entries)


def pack_tree(root: Path, prune: Prune = lambda _rel: False) -> FileTree:
    """Every folder, regular file and link under `root` (an empty tree if it is missing)."""
    if not root.is_dir():
        return FileTree()
    walk = TreeWalk(root, prune)
    entries = []
    for entry in walk:
        mode = os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False).st_mode & 0o777
        if entry.kind == "link":
            target = os.fsencode(os.readlink(entry.name, dir_fd=entry.dir_fd))
            entries.append(TreeEntry(path=entry.rel, kind="link", data=target))
        elif entry.kind == "dir":
            entries.append(TreeEntry(path=entry.rel, kind="dir", mode=mode))
        elif (fd := open_regular(entry)) is not None:
            try:
                entries.append(TreeEntry(path=entry.rel, kind="file", mode=mode,
                                         data=read_fd(fd)))
            finally:
                os.close(fd)
    return FileTree(entries=entries, skipped=walk.skipped)


class UnsafeTree(ValueError):
    """A packed tree holds a path that would land outside its destination."""


def unpack_tree(tree: FileTree, dest: Path) -> None:
    """Write `tree` into `dest`, which must not exist; a refused entry leaves no `dest`."""
    dest.mkdir(mode=0o755, parents=False)
    try:
        folders: set[str] = set()
        written: set[str] = set()
        for entry in tree.entries:
            _check_path(entry.path, folders, written)
            _write(dest, entry)
            if entry.kind == "dir":
                folders.add(entry.path)
    except BaseException:
        remove_tree(dest, ignore_errors=True)
        raise


def replace_tree(tree: FileTree, dest: Path) -> None:
    """Make `dest` hold exactly `tree`: unpacked beside it, then swapped in."""
    staging = dest.with_name(f".{dest.name}.incoming")
    remove_tree(staging, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    unpack_tree(tree, staging)
    remove_tree(dest, ignore_errors=True)
    staging.rename(dest)


def _check_path(path: str, folders: set[str], written: set[str]) -> None:
    parts = path.split("/")
    if (not path or path.startswith("/") or "\0" in path or path in written
            or any(p in ("", ".", "..") for p in parts)):
        raise UnsafeTree(f"a packed tree holds the path {path!r}")
    parent = path.rpartition("/")[0]
    if parent and parent not in folders:
        raise UnsafeTree(f"a packed tree holds {path!r} outside a folder it made first")
    written.add(path)


def _write(dest: Path, entry: TreeEntry) -> None:
    # every folder on the way was made by this unpacking (checked above), so none is a link
    target = dest / entry.path
    if entry.kind == "dir":
        target.mkdir(mode=(entry.mode & 0o777) | 0o700)
        return
    if entry.kind == "link":
        target.symlink_to(os.fsdecode(entry.data))
        return
    fd = os.open(target, _NEW_FILE, entry.mode & 0o777)
    try:
        view = memoryview(entry.data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
