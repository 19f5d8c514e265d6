"""The core interfaces of benchwright, on one screen.

- A `Runtime` runs a command somewhere (a bubblewrap sandbox, or the host when asked).
- An `Agent` works on one checkpoint in a workspace and reports what it spent.
- An `Executor` runs independent jobs (one problem x trial each) and reports as they finish.
- A `TrialRunner` drives one web trial (an agent in a browser, its network recorded).

Graders are plain functions (`benchwright.coding.grading.grade_checkpoint`): a snapshot in, a
verdict out. Implementations are registered by name in `benchwright.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from benchwright.coding.agents.base import AgentContext, AgentResult
    from benchwright.sandbox import ExecResult, Limits, Mount
    from benchwright.web.runs.models import TrialOutcome, TrialRequest

JobT = TypeVar("JobT")
ResultT = TypeVar("ResultT")


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
        stdin: bytes | None = None,
        stdout: IO[bytes] | int | None = None,
        stderr: IO[bytes] | int | None = None,
        pass_fds: Sequence[int] = (),
    ) -> ExecResult:
        """Run `argv` in `cwd` with exactly `env`; `mounts` are all it may see of the host;
        `pass_fds` are inherited by the command under the same numbers."""
        ...


class Agent(Protocol):
    """Something that changes a workspace to meet a checkpoint's spec."""

    name: str

    def act(self, ctx: AgentContext) -> AgentResult:
        """Work on one checkpoint in `ctx.workspace`; return status, usage and timing."""
        ...

    def cleanup(self) -> None:
        """Release whatever the agent holds (processes, temporary files)."""
        ...


class Executor(Protocol):
    """Runs independent jobs, possibly in parallel, yielding results as they finish."""

    def run(
        self, fn: Callable[[JobT], ResultT], jobs: Sequence[JobT]
    ) -> Iterator[ResultT]:
        """Apply `fn` to every job; `fn` and the jobs must be picklable."""
        ...


class TrialRunner(Protocol):
    """Runs web trials one at a time (one runner per site worker, so it may keep a browser)."""

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        """Attempt `request.task`; write network.har and history.json into `request.trial_dir`."""
        ...

    def close(self) -> None:
        """Release what the runner holds (a shared browser)."""
        ...
