"""Whether a run is being worked on now: its lock is held (read from the kernel, which takes no
lock to tell), and the status the viewer shows for it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.runs.lock import held_locks, lock_holder


@dataclass(frozen=True)
class RunState:
    """A run's state at one moment."""

    pid: int | None
    """The process holding the run's lock, None when no process is working on it."""

    @property
    def running(self) -> bool:
        """Whether a process is working on the run."""
        return self.pid is not None

    def fields(self, complete: bool | None) -> dict[str, Any]:
        """The status shown: running, complete, incomplete (result written, attempts left), or
        not finished (no result yet and nothing running: stopped or killed). `complete` is the
        result's flag, None without a result."""
        if self.running:
            status = "running"
        elif complete is None:
            status = "not finished"
        else:
            status = "complete" if complete else "incomplete"
        return {"status": status, "running": self.running}


class LockTable:
    """/proc/locks read once for many runs."""

    def __init__(self) -> None:
        self.held = held_locks()

    def state(self, run_dir: Path) -> RunState:
        """The run's state."""
        return RunState(pid=lock_holder(run_dir, self.held))
