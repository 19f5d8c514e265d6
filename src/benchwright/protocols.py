"""The core interfaces of benchwright, on one screen.

A `Runtime` runs a command somewhere (a bubblewrap sandbox, or the host when asked); a `Grader`
turns a workspace snapshot into a verdict for one checkpoint. Agents, executors and the web
track's evaluator join this module as they are built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from benchwright.sandbox import ExecResult, Limits, Mount


class Runtime(Protocol):
    """Runs one command with limits, and leaves no process behind."""

    name: str

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        mounts: Sequence[Mount],
        limits: Limits,
        network: bool = False,
        stdout: IO[bytes] | int | None = None,
        stderr: IO[bytes] | int | None = None,
    ) -> ExecResult:
        """Run `argv` in `cwd` with exactly `env`; `mounts` are all it may see of the host."""
        ...
