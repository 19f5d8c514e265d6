"""The external tools behind the metrics, found or reported missing with the install command."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from benchwright.errors import missing_extra


def radon_modules() -> tuple[Any, Any, Any]:
    """radon's raw, metrics and complexity modules."""
    try:
        import radon.complexity
        import radon.metrics
        import radon.raw
    except ImportError:
        raise missing_extra("radon is not installed (needed for code metrics)", "metrics") from None
    return radon.raw, radon.metrics, radon.complexity


@functools.cache
def executable(name: str, *aliases: str) -> str:
    """A tool installed beside this Python (its scripts folder) or on PATH."""
    folders = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    for candidate in (name, *aliases):
        for folder in folders:
            path = Path(folder) / candidate
            if path.is_file():
                return str(path)
        found = shutil.which(candidate)
        if found:
            return found
    raise missing_extra(f"{name} is not installed (needed for code metrics)", "metrics")


@functools.cache
def versions() -> dict[str, str]:
    """The versions of the tools, recorded with every result; raises if one is missing."""
    radon_modules()
    import radon

    return {"radon": radon.__version__,
            "ruff": _first_line([executable("ruff"), "--version"]),
            "ast-grep": _first_line([executable("ast-grep", "sg"), "--version"])}


def _first_line(argv: list[str]) -> str:
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else ""
