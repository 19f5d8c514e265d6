"""Find Python interpreters already on this machine; benchwright never downloads one."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from benchwright.errors import PrerequisiteError

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
