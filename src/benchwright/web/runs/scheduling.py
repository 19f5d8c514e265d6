"""Site workers: sequential within a site, parallel across sites, resets after MUTATE trials.

Each task belongs to the worker of its first site; a worker runs its trials one after another (all
trials of a task back to back), and the workers run side by side in threads. A trial holds a lock
on every site its task touches, so a task spanning two sites never runs beside another trial on
either of them. A MUTATE trial leaves its sites dirty; the next trial touching a dirty site resets
it first (under the locks of every site the reset touches), so the trials of a MUTATE task, and
the tasks after it, each start from the initial state.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from benchwright.web.runs.models import PlannedTask
from benchwright.web.tasks import TaskType

ResetFn = Callable[[frozenset[str]], frozenset[str]]
ScopeFn = Callable[[frozenset[str]], frozenset[str]]


@dataclass(frozen=True)
class TrialJob:
    """One trial of one task, on its site worker."""

    task: PlannedTask
    trial: int

    @property
    def key(self) -> tuple[int, int]:
        return self.task.task_id, self.trial


def group_of(sites: Sequence[str]) -> str:
    """The site worker of a task: its first site."""
    return sites[0] if sites else "none"


def plan(tasks: Sequence[PlannedTask], trials: int,
         done: set[tuple[int, int]]) -> dict[str, list[TrialJob]]:
    """The trials still to run, per site worker, in schedule order."""
    groups: dict[str, list[TrialJob]] = {}
    for task in tasks:
        for trial in range(1, trials + 1):
            if (task.task_id, trial) not in done:
                groups.setdefault(task.group, []).append(TrialJob(task=task, trial=trial))
    return groups


class SiteGuard:
    """Per-site locks, the set of dirty sites, and the reset that cleans them."""

    def __init__(self, reset: ResetFn, scope: ScopeFn, dirty: frozenset[str] = frozenset()):
        self._reset = reset
        self._scope = scope
        self._dirty = set(dirty)
        self._state = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @contextlib.contextmanager
    def trial(self, task: PlannedTask) -> Iterator[frozenset[str]]:
        """Hold the task's sites (resetting dirty ones first); yields the sites reset."""
        needed = frozenset(task.sites)
        while True:
            held = needed | self._scope(self._dirty_among(needed))
            with self._holding(held):
                dirty = self._dirty_among(needed)
                if not self._scope(dirty) <= held:
                    continue  # another worker dirtied a site meanwhile; lock the wider scope
                cleaned = self._clean(dirty)
                try:
                    yield cleaned
                finally:
                    if task.task_type is TaskType.MUTATE:
                        self._mark_dirty(needed)
                return

    @property
    def dirty(self) -> frozenset[str]:
        with self._state:
            return frozenset(self._dirty)

    def _dirty_among(self, sites: frozenset[str]) -> frozenset[str]:
        with self._state:
            return frozenset(self._dirty & sites)

    def _mark_dirty(self, sites: frozenset[str]) -> None:
        with self._state:
            self._dirty |= sites

    def _clean(self, dirty: frozenset[str]) -> frozenset[str]:
        if not dirty:
            return frozenset()
        cleaned = self._reset(dirty)
        with self._state:
            self._dirty -= cleaned
        return cleaned

    @contextlib.contextmanager
    def _holding(self, sites: frozenset[str]) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for site in sorted(sites):  # one global order: no deadlock between workers
                stack.enter_context(self._lock(site))
            yield

    def _lock(self, site: str) -> threading.Lock:
        with self._state:
            return self._locks.setdefault(site, threading.Lock())


def run_workers(groups: dict[str, list[TrialJob]], work: Callable[[TrialJob], None],
                stop: threading.Event) -> None:
    """One thread per site worker; each runs its jobs in order until done or `stop` is set.
    The first error stops every worker (after its current trial) and is raised."""
    if not groups:
        return
    with ThreadPoolExecutor(max_workers=len(groups), thread_name_prefix="site") as pool:
        futures = [pool.submit(_worker, jobs, work, stop) for jobs in groups.values()]
        try:
            for future in as_completed(futures):  # the first to fail, not the first submitted
                future.result()
        except BaseException:
            stop.set()
            raise


def _worker(jobs: list[TrialJob], work: Callable[[TrialJob], None], stop: threading.Event) -> None:
    for job in jobs:
        if stop.is_set():
            return
        work(job)
