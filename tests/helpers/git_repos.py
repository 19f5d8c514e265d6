"""Git checkouts written by hand (no git run): a `.git` folder with HEAD, refs, config and,
when asked, an index, as a clone would leave them."""

from __future__ import annotations

import struct
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "89abcdef0123456789abcdef0123456789abcdef"
ORIGIN = "https://example.org/set.git"


def fake_repo(root: Path, head_text: str = "ref: refs/heads/main\n",
              files: dict[str, str] | None = None) -> Path:
    """A working tree at `root` (with an empty `problem/` folder) whose `.git` holds HEAD on
    `refs/heads/main` at COMMIT and an origin, overridden or completed by `files`."""
    git = root / ".git"
    written = {"HEAD": head_text, "refs/heads/main": COMMIT + "\n",
               "config": f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {ORIGIN}\n',
               **(files or {})}
    for rel, text in written.items():
        (git / rel).parent.mkdir(parents=True, exist_ok=True)
        (git / rel).write_text(text)
    (root / "problem").mkdir(exist_ok=True)
    return root


def index_entry(name: bytes, mode: int = 0o100644) -> bytes:
    """One version-2 index entry: stat fields, object id, flags, the path, NUL padding."""
    fixed = struct.pack(">10I", 0, 0, 0, 0, 0, 0, mode, 0, 0, 0) + b"\x11" * 20
    body = fixed + struct.pack(">H", min(len(name), 0xFFF)) + name
    return body + b"\0" * (8 - len(body) % 8)


def index_file(entries: list[bytes], version: int = 2, count: int | None = None,
               tail: bytes = b"") -> bytes:
    """An index holding these entries (then `tail`: extensions), with a zero checksum."""
    header = b"DIRC" + struct.pack(">II", version, len(entries) if count is None else count)
    return header + b"".join(entries) + tail + b"\0" * 20


def write_index(root: Path, paths: list[str]) -> None:
    """`root/.git/index` listing these files."""
    (root / ".git" / "index").write_bytes(index_file([index_entry(p.encode()) for p in paths]))
