"""Trial runners per site worker: one per trial running at the same time.

With a concurrency per site above 1 a worker runs several read-only trials at once; each takes a
runner of its own (for the browser runner: its own Chromium, so no cookie, storage or cache is
shared between concurrent trials), and gives it back when it is done.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from benchwright.web.trials.trial_runner import TrialRunner


class RunnerPool:
    """Idle runners per group; a new one is made when every runner of the group is busy."""

    def __init__(self, factory: Callable[[], TrialRunner]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._idle: dict[str, list[TrialRunner]] = {}
        self._all: list[TrialRunner] = []

    @contextlib.contextmanager
    def runner(self, group: str) -> Iterator[TrialRunner]:
        """A runner of `group` that no other trial uses until the block ends."""
        with self._lock:
            idle = self._idle.setdefault(group, [])
            taken = idle.pop() if idle else None
        if taken is None:
            taken = self._factory()
            with self._lock:
                self._all.append(taken)
        try:
            yield taken
        finally:
            with self._lock:
                self._idle[group].append(taken)

    def close(self) -> None:
        """Close every runner made."""
        with self._lock:
            runners, self._all, self._idle = self._all, [], {}
        for runner in runners:
            runner.close()
