"""Find Python interpreters already on this machine; benchwright never downloads one."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from benchwright.errors import BenchwrightError, PrerequisiteError
from benchwright.sandbox.caches import cache_base

DEFAULT_PYTHON = "3.12"
_PROBE = (
    "import json, sys; "
    "print(json.dumps([sys.version.split()[0], sys.executable, sys.base_prefix]))"
)


class Interpreter(BaseModel):
    """A Python interpreter found on this machine."""

    version: str
    """Its full version, e.g. `3.12.1`."""
    executable: Path
    """The interpreter binary (resolved, never a pyenv shim)."""
    prefix: Path
    """Its installation prefix (`sys.base_prefix`): the sandbox binds this read-only."""

    @property
    def minor(self) -> str:
        """`3.12` for 3.12.1."""
        return ".".join(self.version.split(".")[:2])


def resolve_python(request: str | None) -> Interpreter:
    """The interpreter for a request such as `3.12` or a path; None means 3.12, else this one."""
    if request is None:
        return _find(DEFAULT_PYTHON) or _probe(Path(sys.executable)) or _missing(DEFAULT_PYTHON)
    if "/" in request:
        return _probe(Path(request)) or _missing(request)
    return _find(request) or _missing(request)


@functools.cache
def _find(version: str) -> Interpreter | None:
    for candidate in _candidates(version):
        found = _probe(candidate)
        if found is not None and (found.version + ".").startswith(version + "."):
            return found
    return None


def _candidates(version: str) -> list[Path]:
    on_path = shutil.which(f"python{version}")
    found = [Path(on_path)] if on_path and "/shims/" not in on_path else []
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    pattern = f"{version}*/bin/python{version.split('.')[0]}"
    found += sorted(pyenv_root.glob(f"versions/{pattern}"), reverse=True)
    found += [Path(d) / f"python{version}" for d in ("/usr/local/bin", "/usr/bin")]
    if sys.version.startswith(version + "."):
        found.append(Path(sys.executable))
    return [p for p in found if p.exists()]


@functools.cache
def _probe(executable: Path) -> Interpreter | None:
    key = _identity(executable)
    known = _memo().get(key) if key is not None else None
    if known is not None:
        return known
    found = _run_probe(executable)
    if found is not None and key is not None:
        _remember(key, found)
    return found


def _identity(executable: Path) -> str | None:
    """The binary behind `executable` as the file system knows it: a reinstalled or replaced
    interpreter (new inode, size or times) or a link pointing elsewhere gets a new identity."""
    try:
        real = executable.resolve()
        st = real.stat()
    except OSError:
        return None
    return "|".join(map(str, (executable, real, st.st_dev, st.st_ino, st.st_size,
                              st.st_mtime_ns, st.st_ctime_ns)))


@functools.cache
def _memo() -> dict[str, Interpreter]:
    """What earlier processes' probes found (asking an interpreter costs a process start on
    every command). A file that is unreadable or malformed counts as empty."""
    from benchwright.files.untrusted import read_untrusted_json

    try:
        raw = read_untrusted_json(_memo_path(), what="the interpreter memo", max_bytes=1 << 20)
        return _Memo.model_validate(raw).interpreters
    except (BenchwrightError, ValueError, OSError):
        return {}


def _remember(key: str, found: Interpreter) -> None:
    from benchwright.files.atomic import write_json_atomic

    memo = _memo()
    memo[key] = found
    try:
        _memo_path().parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(_memo_path(), _Memo(interpreters=memo).model_dump(mode="json"),
                          durable=False)
    except (BenchwrightError, OSError):
        pass  # a read-only cache only costs the next command a probe


def _memo_path() -> Path:
    return cache_base() / "interpreters.json"


class _Memo(BaseModel):
    """The interpreter memo file."""

    format: Literal[1] = 1
    """Its version."""
    interpreters: dict[str, Interpreter]
    """By `_identity` of the executable probed."""


def _run_probe(executable: Path) -> Interpreter | None:
    try:
        out = subprocess.run(
            [str(executable), "-I", "-c", _PROBE], capture_output=True, text=True, timeout=30
        )
    except OSError:
        return None
    if out.returncode != 0:
        return None
    try:  # a program that exits 0 but is no Python (`/bin/true`) prints nothing of this
        version, exe, prefix = json.loads(out.stdout)
        return Interpreter(version=version, executable=Path(exe).resolve(), prefix=Path(prefix))
    except (ValueError, TypeError, OSError, RuntimeError):
        return None


def _missing(request: str) -> Interpreter:
    raise PrerequisiteError(
        f"no Python {request} interpreter found on this machine (benchwright never downloads one)",
        hint="install it (e.g. `sudo apt-get install -y python3`), or pass --python "
        "with a version or path that exists",
    )
