"""A problem folder as a versioned source: where it came from (its git checkout's origin and
commit, when it is one), a hash of what it holds, and the data files it lacks.

A clone made without Git LFS leaves pointer files where the data should be; a partial copy
leaves out files the tests open. Such a problem cannot be graded fairly (every failure would be
the missing file's, not the agent's), so `run coding` refuses it and `problems validate` names
the files. Detected: Git LFS pointer files anywhere in the folder, static assets
(`config.yaml`'s `static_assets`) that are not there, and, in a git checkout, files the index
lists that are absent on disk. Not detected: files that neither git nor config.yaml names (a
test opening a file nobody committed), and a checkout whose index cannot be read (then only the
first two are checked; `missing_files` says so in `notes`).

Whether a checkout's working tree differs from its commit cannot be told without running git
(which a hostile repository's config could turn into running its programs), so the content
hash is always recorded beside the commit.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from benchwright.coding.problems.config import ProblemConfig
from benchwright.coding.problems.git_checkout import (
    Checkout,
    GitReadError,
    config_values,
    find_checkout,
    head,
    index_paths,
)
from benchwright.coding.problems.loader import CONFIG_NAME
from benchwright.coding.problems.semantics import GradingSemantics, grading_semantics
from benchwright.errors import ProblemConfigError
from benchwright.files.nofollow import Entry, TreeWalk, open_regular, sha256_fd, shown
from benchwright.files.redaction import redact_url

LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
MAX_POINTER_BYTES = 1024
"""Git LFS pointer files are smaller than this (the spec's bound)."""
MAX_HASH_FILES = 200_000
MAX_HASH_BYTES = 8 << 30
"""Past either bound a folder's content is not hashed (the note says so)."""
_NOT_HASHED = "__pycache__"
_SHOWN_FILES = 10


class ProblemSource(BaseModel):
    """Where a problem folder came from and which version of it a run used."""

    origin: str | None = None
    """The URL of the git remote `origin` of the checkout holding the folder, credentials
    redacted; None when the folder is not in a git checkout or it has no origin."""
    commit: str | None = None
    """The commit the checkout's HEAD names; None when there is no checkout (or it could not
    be read: see `note`). The working tree may differ from it: see `content_sha256`."""
    ref: str | None = None
    """The branch HEAD names (`refs/heads/main`); None when HEAD is detached."""
    folder: str | None = None
    """The problem's folder inside the checkout (`cfgpipe`); None without a checkout."""
    content_sha256: str | None = None
    """SHA-256 over the folder's files as the loader reads them (names, bytes, links as
    links; `.git` and `__pycache__` left out); None past the size bounds."""
    note: str | None = None
    """What could not be read, and why (a `.git` that is a link, an unreadable ref, a
    folder too large to hash)."""
    grading: GradingSemantics = GradingSemantics.SCBENCH_RUNNER
    """Whose rules the set's counts follow: SCBench's v1.0 grading when the set's root holds
    its Harbor conversion's `conversion.toml` (`benchwright.coding.problems.semantics`)."""


@dataclass
class FolderScan:
    """One walk of a problem folder: what is there, its LFS pointers, its content hash."""

    present: set[str] = field(default_factory=set)
    """Every entry's path (files, links, folders), relative to the folder."""
    pointers: list[str] = field(default_factory=list)
    """Files that are Git LFS pointers."""
    sha256: str | None = None
    """The content hash (when asked for and within the bounds)."""
    note: str | None = None
    """Why the content was not hashed."""


def scan_folder(folder: Path, hash_content: bool) -> FolderScan:
    """Walk `folder` (never following a link), noting entries and LFS pointers and, with
    `hash_content`, hashing names and bytes."""
    scan = FolderScan()
    digest = hashlib.sha256() if hash_content else None
    files = size = 0
    for entry in TreeWalk(folder, prune=lambda rel: rel.rsplit("/", 1)[-1] == ".git"):
        scan.present.add(entry.rel)
        length = _file_size(entry)
        if length is not None and length < MAX_POINTER_BYTES and _is_pointer(entry):
            scan.pointers.append(entry.rel)
        files, size = files + 1, size + (length or 0)
        if digest is not None and (files > MAX_HASH_FILES or size > MAX_HASH_BYTES):
            digest, scan.note = None, (f"more than {MAX_HASH_FILES} entries or "
                                       f"{MAX_HASH_BYTES >> 30} GiB: content not hashed")
        if digest is not None and _NOT_HASHED not in entry.rel.split("/"):
            digest.update(_entry_digest(entry))
    scan.sha256 = digest.hexdigest() if digest is not None else None
    return scan


def _file_size(entry: Entry) -> int | None:
    if entry.kind != "file":
        return None
    try:
        return os.stat(entry.name, dir_fd=entry.dir_fd, follow_symlinks=False).st_size
    except FileNotFoundError:  # removed while we walk: as if never there
        return None


def _is_pointer(entry: Entry) -> bool:
    fd = open_regular(entry)
    if fd is None:
        return False
    try:
        return os.pread(fd, len(LFS_POINTER), 0) == LFS_POINTER
    finally:
        os.close(fd)


def _entry_digest(entry: Entry) -> bytes:
    """What an entry adds to the content hash: its kind, name and (file) content's hash or
    (link) target; a file swapped for something else mid-walk counts as such."""
    name = entry.rel.encode("utf-8")
    if entry.kind == "link":
        return b"L\0" + name + b"\0" + os.fsencode(os.readlink(entry.name, dir_fd=entry.dir_fd))
    if entry.kind == "dir":
        return b"D\0" + name + b"\0"
    fd = open_regular(entry)
    if fd is None:
        return b"?\0" + name + b"\0"
    try:
        return b"F\0" + name + b"\0" + sha256_fd(fd).encode() + b"\n"
    finally:
        os.close(fd)


def problem_source(folder: Path) -> ProblemSource:
    """The folder's origin, commit and content hash. A folder inside a checkout that does not
    track it (a problem set copied into some other repository's tree) gets no commit: the
    commit would not be the problems'."""
    folder = folder.resolve()
    scan = scan_folder(folder, hash_content=True)
    source = ProblemSource(content_sha256=scan.sha256, note=scan.note,
                           grading=grading_semantics(folder))
    try:
        checkout = find_checkout(folder)
        if checkout is None:
            return source
        commit, ref = head(checkout)
        origin = config_values(checkout).get(("remote", "origin", "url"))
    except GitReadError as exc:
        return source.model_copy(update={"note": _joined(source.note, f"git: {exc}")})
    inside = folder.relative_to(checkout.worktree).as_posix()
    if _tracked(checkout, inside) is False:
        return source.model_copy(update={"note": _joined(
            source.note, f"in the git checkout {checkout.worktree}, which does not track it")})
    return source.model_copy(update={
        "origin": redact_url(origin, "ORIGIN") if origin else None, "commit": commit,
        "ref": ref, "folder": inside})


def _tracked(checkout: Checkout, inside: str) -> bool | None:
    """Whether the index lists the folder's config.yaml; None when the index cannot be read."""
    config = CONFIG_NAME if inside == "." else f"{inside}/{CONFIG_NAME}"
    try:
        return config in index_paths(checkout, _hash_length(checkout))
    except GitReadError:
        return None


def _joined(first: str | None, second: str) -> str:
    return f"{first}; {second}" if first else second


@dataclass
class MissingData:
    """The data files a problem folder lacks."""

    files: list[str] = field(default_factory=list)
    """Each as `path (why)`, relative to the problem folder."""
    notes: list[str] = field(default_factory=list)
    """What could not be checked, and why (an unreadable git index)."""


def missing_files(problem: ProblemConfig) -> MissingData:
    """LFS pointers, absent static assets, and (in a git checkout) absent files the index
    lists, under the problem's folder."""
    folder = problem.path.resolve()
    scan = scan_folder(folder, hash_content=False)
    found = MissingData(files=[f"{shown(p)} (a Git LFS pointer: its content was never fetched)"
                               for p in scan.pointers])
    found.files += [f"{shown(a.path)} (static asset {key!r}: not there)"
                    for key, a in problem.static_assets.items()
                    if not os.path.lexists(folder / a.path)]
    try:
        found.files += [f"{shown(p)} (listed by git, not on disk)"
                        for p in _absent_from_index(folder, scan.present)]
    except GitReadError as exc:
        found.notes.append(f"files git lists not checked: {exc}")
    return found


def _absent_from_index(folder: Path, present: set[str]) -> list[str]:
    checkout = find_checkout(folder)
    if checkout is None:
        return []
    prefix = folder.relative_to(checkout.worktree).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    listed = index_paths(checkout, _hash_length(checkout))
    inside = [p.removeprefix(prefix) for p in listed if p.startswith(prefix)]
    return [p for p in inside if p.rstrip("/") not in present]


def _hash_length(checkout: Checkout) -> int:
    """Object ids' length in the index: 32 bytes in a SHA-256 repository, else 20."""
    fmt = config_values(checkout).get(("extensions", None, "objectformat"), "sha1")
    return 32 if fmt.lower() == "sha256" else 20


def require_data(problems: list[ProblemConfig]) -> None:
    """Refuse problems whose data files are missing: one error naming every such problem, its
    files and how to fetch them."""
    lacking = [(p, found) for p in problems if (found := missing_files(p).files)]
    if not lacking:
        return
    lines = "; ".join(f"{p.name}: {_listed(found)}" for p, found in lacking)
    names = ", ".join(p.name for p, _found in lacking)
    what = (f"problem {names} lacks data files" if len(lacking) == 1
            else f"{len(lacking)} problems lack data files ({names})")
    raise ProblemConfigError(
        f"{what}: their tests would fail for want of them, not for the agent's code. "
        f"Missing: {lines}",
        path=lacking[0][0].path if len(lacking) == 1 else lacking[0][0].path.parent,
        hint="fetch them (`git lfs pull` in the checkout for Git LFS pointers; `git checkout "
        "-- .` or a complete copy for files git lists), or run without them (--problem NAME "
        "runs only the problems named)")


def _listed(files: list[str]) -> str:
    more = len(files) - _SHOWN_FILES
    return ", ".join(files[:_SHOWN_FILES]) + (f", and {more} more" if more > 0 else "")
