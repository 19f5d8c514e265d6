"""What a git checkout says about itself (its commit, its origin, the files its index lists),
read without running git.

A problem folder is hostile input, and so is the checkout around it: running `git` there would
run what its config names (`core.fsmonitor`, hooks). So the few files needed are read here:
`.git` (a folder, or a file `gitdir: PATH` for worktrees and submodules), `HEAD`, the ref it
names (a loose ref file or `packed-refs`), `config` (`[remote "origin"] url`, the object format)
and `index` (format 2, 3 or 4). Every read is bounded, and below the git folder no link is
followed (`nofollow.read_regular`). A `.git` that is a link is refused; a `gitdir:` (or
`commondir`) path is followed where it leads, as git does: that is how worktrees and
submodules work. What cannot be read is a `GitReadError` naming why, never a guess.
"""

from __future__ import annotations

import os
import re
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from benchwright.files.nofollow import read_regular

MAX_SMALL = 4096
"""Bound on `.git` files, HEAD, commondir and loose refs (each a line)."""
MAX_CONFIG = 1 << 20
MAX_PACKED_REFS = 64 << 20
MAX_INDEX = 256 << 20
MAX_LEVELS = 64
"""Folders searched upward for `.git`."""
MAX_SYMREF = 5
"""Symbolic refs followed (git's own limit)."""
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|//|@\{|/\.|\.lock(/|$)")
_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_GITLINK, _FOLDER = 0o160000, 0o040000


class GitReadError(Exception):
    """A checkout's git files are there but cannot be read (safely): the message says why."""


@dataclass(frozen=True)
class GitFolder:
    """A folder of git files: `base/prefix` (prefix empty or ending in `/`); below `base`
    nothing is followed."""

    base: Path
    prefix: str = ""

    def read(self, rel: str, limit: int) -> bytes | None:
        """The file's bytes; None when it is missing, a link or not a regular file."""
        data = read_regular(self.base, self.prefix + rel, limit + 1)
        if data is not None and len(data) > limit:
            raise GitReadError(f"{rel} is larger than {limit} bytes")
        return data

    @property
    def path(self) -> Path:
        """The folder itself."""
        return self.base / self.prefix if self.prefix else self.base


@dataclass(frozen=True)
class Checkout:
    """A git working tree: where it is and where its git files are."""

    worktree: Path
    """The folder holding `.git`."""
    own: GitFolder
    """This working tree's files: HEAD, index."""
    common: GitFolder
    """The repository's shared files: refs, packed-refs, config (the same folder unless the
    working tree is a `git worktree`)."""


def find_checkout(folder: Path) -> Checkout | None:
    """The checkout holding `folder` (the nearest of it and its parents with a `.git`); None
    when there is none."""
    for candidate in (folder, *folder.parents)[:MAX_LEVELS]:
        try:
            mode = os.lstat(candidate / ".git").st_mode
        except OSError:
            continue
        return _checkout_at(candidate, mode)
    return None


def _checkout_at(worktree: Path, mode: int) -> Checkout:
    if stat.S_ISDIR(mode):
        own = GitFolder(worktree, ".git/")
    elif stat.S_ISREG(mode):
        own = GitFolder(_gitdir_target(worktree))
    else:
        what = "a link (not followed)" if stat.S_ISLNK(mode) else "not a folder or a file"
        raise GitReadError(f"{worktree / '.git'} is {what}")
    return Checkout(worktree, own, _common(own))


def _gitdir_target(worktree: Path) -> Path:
    """Where a `.git` file (`gitdir: PATH`) points; a relative path is from its folder."""
    text = _text(GitFolder(worktree).read(".git", MAX_SMALL), ".git")
    if not text.startswith("gitdir:"):
        raise GitReadError(".git is a file without a `gitdir:` line")
    target = text.removeprefix("gitdir:").strip()
    if not target:
        raise GitReadError(".git names no folder")
    return worktree / target


def _common(own: GitFolder) -> GitFolder:
    """The repository's shared folder: `commondir` (a linked worktree's) or the same."""
    data = own.read("commondir", MAX_SMALL)
    if data is None:
        return own
    rel = _text(data, "commondir").strip()
    if not rel:
        raise GitReadError("commondir is empty")
    return GitFolder(own.path / rel)


def _text(data: bytes | None, what: str) -> str:
    if data is None:
        raise GitReadError(f"{what} is missing or not a regular file")
    if b"\0" in data:
        raise GitReadError(f"{what} holds a NUL byte")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise GitReadError(f"{what} is not UTF-8") from None


def head(checkout: Checkout) -> tuple[str, str | None]:
    """(the commit HEAD names, the ref it names on the way: `refs/heads/main`, or None when
    HEAD is detached)."""
    value = _text(checkout.own.read("HEAD", MAX_SMALL), "HEAD").strip()
    first: str | None = None
    for _ in range(MAX_SYMREF + 1):
        if _COMMIT.fullmatch(value):
            return value, first
        if not value.startswith("ref:"):
            raise GitReadError("HEAD holds neither a commit id nor a ref")
        ref = value.removeprefix("ref:").strip()
        check_ref_name(ref)
        first = first or ref
        found = resolve_ref(checkout.common, ref)
        if found is None:
            raise GitReadError(f"{ref} names no commit (a branch without commits, or refs "
                               "stored as a reftable, which is not read)")
        value = found
    raise GitReadError("symbolic refs nested too deeply")


def check_ref_name(ref: str) -> None:
    """Refuse a ref name git would refuse, or one that would leave the refs folder."""
    if not ref.startswith("refs/") or ref.endswith(("/", ".")) or _BAD_REF.search(ref):
        raise GitReadError(f"{ref[:100]!r} is not a valid ref name")


def resolve_ref(common: GitFolder, ref: str) -> str | None:
    """A ref's value: its loose file's line, else its commit in packed-refs; None if neither."""
    loose = common.read(ref, MAX_SMALL)
    if loose is not None:
        return _text(loose, ref).strip()
    packed = common.read("packed-refs", MAX_PACKED_REFS)
    if packed is None:
        return None
    for line in packed.decode("utf-8", errors="replace").splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and _COMMIT.fullmatch(commit):
            return commit
    return None


def config_values(checkout: Checkout) -> dict[tuple[str, str | None, str], str]:
    """The repository's config as {(section, subsection, key): first value}; section and key
    lower-cased as git compares them. `include` directives are not followed."""
    data = checkout.common.read("config", MAX_CONFIG)
    if data is None:
        return {}
    values: dict[tuple[str, str | None, str], str] = {}
    section: tuple[str, str | None] = ("", None)
    for line in data.decode("utf-8", errors="replace").splitlines():
        header = _SECTION.match(line)
        if header:
            section = (header[1].lower(), header[2])
            continue
        key, sep, raw = line.partition("=")
        key = key.strip().lower()
        if sep and key and not key.startswith(("#", ";")):
            values.setdefault((*section, key), config_value(raw))
    return values


def config_value(raw: str) -> str:
    """A config value as git reads it: quotes removed, `\\"` `\\\\` `\\n` `\\t` unescaped, an
    unquoted `#` or `;` starts a comment."""
    out, quoted, chars = [], False, iter(raw.strip())
    for char in chars:
        if char == '"':
            quoted = not quoted
        elif char == "\\":
            escaped = next(chars, "")
            out.append({"n": "\n", "t": "\t"}.get(escaped, escaped))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()


def index_paths(checkout: Checkout, hash_len: int = 20) -> list[str]:
    """The paths the index lists (relative to the working tree; a sparse index's folders end
    in `/`; submodules left out). `hash_len` is 32 in a SHA-256 repository."""
    data = checkout.own.read("index", MAX_INDEX)
    if data is None:
        raise GitReadError("there is no index (a checkout never made)")
    if len(data) < 12 or data[:4] != b"DIRC":
        raise GitReadError("the index has no DIRC header")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise GitReadError(f"index version {version} is not read (2, 3 and 4 are)")
    if count > len(data) // (40 + hash_len + 2):
        raise GitReadError("the index lists more entries than it has room for")
    reader = _IndexReader(data, version, hash_len)
    paths = [path for _ in range(count) if (path := reader.entry()) is not None]
    reader.check_extensions()
    return paths


class _IndexReader:
    """Reads an index's entries one after the other (git's index-format.txt)."""

    def __init__(self, data: bytes, version: int, hash_len: int) -> None:
        self.data, self.version, self.hash_len = data, version, hash_len
        self.offset, self.previous = 12, b""

    def entry(self) -> str | None:
        start = self.offset
        fixed = start + 40 + self.hash_len
        if fixed + 2 > len(self.data):
            raise GitReadError("the index ends inside an entry")
        mode = struct.unpack(">I", self.data[start + 24:start + 28])[0]
        flags = struct.unpack(">H", self.data[fixed:fixed + 2])[0]
        name_at = fixed + 2 + (2 if flags & 0x4000 and self.version >= 3 else 0)
        name = self._name_v4(name_at) if self.version == 4 else self._name(start, name_at)
        if mode & 0o170000 == _GITLINK:
            return None
        text = name.decode("utf-8", errors="surrogateescape")
        return text + "/" if mode & 0o170000 == _FOLDER and not text.endswith("/") else text

    def _name(self, start: int, name_at: int) -> bytes:
        end = self.data.find(b"\0", name_at)
        if end < 0:
            raise GitReadError("the index ends inside a path")
        # entries are padded with 1 to 8 NULs to a multiple of 8 bytes
        self.offset = start + ((name_at - start + (end - name_at) + 8) & ~7)
        return self.data[name_at:end]

    def _name_v4(self, at: int) -> bytes:
        strip, at = self._varint(at)
        end = self.data.find(b"\0", at)
        if end < 0 or strip > len(self.previous):
            raise GitReadError("the index holds a malformed path")
        name = self.previous[:len(self.previous) - strip] + self.data[at:end]
        self.previous, self.offset = name, end + 1
        return name

    def _varint(self, at: int) -> tuple[int, int]:
        """Git's offset encoding: 7 bits a byte, each continuation adding one."""
        value = -1
        for _ in range(10):
            if at >= len(self.data):
                break
            byte = self.data[at]
            value = byte & 0x7F if value < 0 else ((value + 1) << 7) | (byte & 0x7F)
            at += 1
            if not byte & 0x80:
                return value, at
        raise GitReadError("the index holds a malformed path length")

    def check_extensions(self) -> None:
        """Refuse a split index: its entries live in another file, not read here."""
        at, end = self.offset, len(self.data) - self.hash_len
        while at + 8 <= end:
            signature, size = self.data[at:at + 4], struct.unpack(">I", self.data[at + 4:at + 8])[0]
            if signature == b"link":
                raise GitReadError("the index is split (core.splitIndex): not read")
            at += 8 + size
