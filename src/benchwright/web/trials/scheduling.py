"""Site workers: parallel across sites; within a site, read-only trials side by side (up to the
run's concurrency per site) and MUTATE trials alone, with resets after MUTATE trials.

Each task belongs to the worker of its first site; a worker starts its trials in order (all
trials of a task back to back), and the workers run side by side in threads. A trial holds every
site its task touches: shared for a read-only task (RETRIEVE, NAVIGATE: nothing changes),
exclusive for a MUTATE task, so a MUTATE trial never runs beside another trial of any of its
sites. A worker waits for its read-only trials in flight before it starts a MUTATE trial, and
starts nothing else until that trial is done. A MUTATE trial leaves its sites dirty; the next
trial touching a dirty site resets it first (exclusively, under every site the reset touches), so
the trials of a MUTATE task, and the tasks after it, each start from the initial state.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass

from benchwright.web.evaluation.tasks import TaskType
from benchwright.web.trials.models import PlannedTask
from benchwright.web.trials.site_locks import SiteLock

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
        self._locks: dict[str, SiteLock] = {}

    @contextlib.contextmanager
    def trial(self, task: PlannedTask) -> Iterator[frozenset[str]]:
        """Hold the task's sites (resetting dirty ones first); yields the sites reset.
        A read-only trial holds them shared, unless it has to reset one first: then it holds
        them exclusively, as a MUTATE trial does."""
        needed = frozenset(task.sites)
        mutates = task.task_type is TaskType.MUTATE
        while True:
            seen_dirty = self._dirty_among(needed)
            exclusive = mutates or bool(seen_dirty)
            held = needed | self._reach(seen_dirty)
            with self._holding(held, exclusive):
                dirty = self._dirty_among(needed)
                if (dirty and not exclusive) or not self._reach(dirty) <= held:
                    continue  # another worker dirtied a site meanwhile; lock the wider scope
                cleaned = self._clean(dirty)
                try:
                    yield cleaned
                finally:
                    if mutates:
                        self._mark_dirty(needed)
                return

    def _reach(self, dirty: frozenset[str]) -> frozenset[str]:
        """The sites a reset of `dirty` touches; none when nothing is dirty. (A suite that can
        only reset everything scopes any reset to every site: asked for an empty reset, it made
        every trial hold every site, and a MUTATE trial of one site shut out all the others.)"""
        return self._scope(dirty) if dirty else frozenset()

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
    def _holding(self, sites: frozenset[str], exclusive: bool) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for site in sorted(sites):  # one global order: no deadlock between workers
                stack.enter_context(self._lock(site).hold(exclusive))
            yield

    def _lock(self, site: str) -> SiteLock:
        with self._state:
            return self._locks.setdefault(site, SiteLock())


def run_workers(groups: dict[str, list[TrialJob]], work: Callable[[TrialJob], None],
                stop: threading.Event, concurrency: int = 1) -> None:
    """One thread per site worker; each runs its jobs in order until done or `stop` is set, up
    to `concurrency` read-only trials at a time. The first error stops every worker (after its
    current trials) and is raised."""
    if not groups:
        return
    with ThreadPoolExecutor(max_workers=len(groups), thread_name_prefix="site") as pool:
        futures = [pool.submit(_worker, jobs, work, stop, concurrency)
                   for jobs in groups.values()]
        try:
            for future in as_completed(futures):  # the first to fail, not the first submitted
                future.result()
        except BaseException:
            stop.set()
            raise


def _worker(jobs: list[TrialJob], work: Callable[[TrialJob], None], stop: threading.Event,
            concurrency: int) -> None:
    if concurrency <= 1:
        for job in jobs:
            if stop.is_set():
                return
            work(job)
        return
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="trial") as pool:
        running: set[Future[None]] = set()
        try:
            for job in jobs:
                if stop.is_set():
                    break
                if job.task.task_type is TaskType.MUTATE:
                    _settle(running, 0)  # a MUTATE trial starts after every trial before it
                    work(job)
                    continue
                _settle(running, concurrency - 1)
                running.add(pool.submit(work, job))
            _settle(running, 0)
        finally:
            wait(running)  # after an error too: no trial is left running behind the worker


def _settle(running: set[Future[None]], at_most: int) -> None:
    """Wait until at most `at_most` trials run; raise the first error among those finished."""
    while len(running) > at_most:
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        running -= finished
        for future in finished:
            error = future.exception()
            if error is not None:
                raise error
