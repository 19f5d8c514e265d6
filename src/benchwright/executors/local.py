"""Run jobs on this machine: in-process for one worker, a process pool for more.

Workers die with the parent (PR_SET_PDEATHSIG), so a kill -9 of benchwright leaves no worker
writing into the run directory while a resumed run starts. Progress events travel from workers
to the parent through a queue; `emit` is how a job reports one.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import multiprocessing
import os
import platform
import queue
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from benchwright.errors import WorkersLost
from benchwright.protocols import ExecutorSetup

JobT = TypeVar("JobT")
ResultT = TypeVar("ResultT")
ItemT = TypeVar("ItemT")

_sink: Callable[[Any], None] | None = None


def emit(event: Any) -> None:
    """Report a progress event to the parent (a no-op outside an executor)."""
    if _sink is not None:
        _sink(event)


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (and restart it) with its stderr on /dev/null.
    A tracker killed and relaunched prints a KeyError traceback for every semaphore its
    predecessor knew, and a warning: noise under a run that goes on unharmed (each process
    still unlinks its own semaphores)."""
    from multiprocessing import resource_tracker

    tracker: Any = resource_tracker._resource_tracker
    if getattr(tracker, "benchwright_quiet", False):
        return
    original = tracker.ensure_running

    def ensure_running() -> None:
        alive = getattr(tracker, "_check_alive", None)
        if tracker._fd is not None and alive is not None and alive():
            return
        with _stderr_to_devnull(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            original()

    tracker.ensure_running = ensure_running
    tracker.benchwright_quiet = True


@contextlib.contextmanager
def _stderr_to_devnull() -> Iterator[None]:
    """File descriptor 2 on /dev/null (what a child started now inherits), then back."""
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _init_worker(events: Any) -> None:
    global _sink
    quiet_resource_tracker()
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        # the parent died while this worker was starting, before the signal was armed: a worker
        # orphaned now would take jobs and write journals beside the resumed run
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides how to stop
    signal.signal(signal.SIGTERM, _exit_now)
    sys.unraisablehook = _quiet_when_stopping
    _sink = events.put


_stopping = False


def _exit_now(signum: int, frame: Any) -> None:
    # unwinds the job, so the sandbox's own clean-up kills the agent's whole pid namespace
    # (a SIGKILLed worker leaves that to PR_SET_PDEATHSIG, which does not reach every process)
    global _stopping
    _stopping = True
    raise SystemExit(128 + signum)


def _quiet_when_stopping(unraisable: Any) -> None:
    # a stop that lands inside an at-fork handler (a sandbox starting) cannot propagate there;
    # Python would print it as a traceback under the parent's clean "interrupted" line
    if _stopping and issubclass(unraisable.exc_type, SystemExit):
        return
    sys.__unraisablehook__(unraisable)


def _run_job(fn: Callable[[JobT], ResultT], job: JobT, index: int = -1) -> ResultT:
    """A job in a worker; a worker told to stop takes no further job."""
    if _stopping:
        os._exit(143)
    emit(_Started(index, os.getpid()))
    try:
        return fn(job)
    finally:
        if _stopping:
            os._exit(143)


def _readied(jobs: Sequence[JobT]) -> Iterator[JobT]:
    for job in jobs:
        ready = job.ready() if hasattr(job, "ready") else job
        if ready is not None:
            yield ready


def _listed(fn: Callable[[JobT], Iterator[ItemT]], job: JobT) -> list[ItemT]:
    return list(fn(job))


class LocalExecutor:
    """`workers` jobs at a time on this machine."""

    shares_filesystem = True

    def __init__(self, workers: int = 1, on_event: Callable[[Any], None] | None = None) -> None:
        self.workers = max(1, workers)
        self.on_event = on_event

    @classmethod
    def from_setup(cls, setup: ExecutorSetup) -> LocalExecutor:
        """`setup.workers` at a time, events to `setup.on_event` (the rest is for clusters)."""
        return cls(setup.workers, on_event=setup.on_event)

    def stream(self, fn: Callable[[JobT], Iterator[ItemT]], jobs: Sequence[JobT]
               ) -> Iterator[ItemT]:
        """Each job's items: as they come in-process; from a pool, a job's all at its end.
        A job's `ready()` (if it has one) is what runs (None: nothing to do)."""
        if self.workers == 1 or len(jobs) <= 1:
            for items in self._in_process(fn, _readied(jobs)):
                yield from items
            return
        readied = list(_readied(jobs))
        for listed in self._in_pool(functools.partial(_listed, fn), readied):
            yield from listed

    def each_node(self, fn: Callable[[], ResultT]) -> dict[str, ResultT]:
        """`fn()` here: this machine is the only one."""
        return {platform.node(): fn()}

    def host(self, factory: Callable[..., object], *args: object) -> LocalHosted:
        """The object, made in this process."""
        return LocalHosted(factory(*args))

    def run(self, fn: Callable[[JobT], ResultT], jobs: Sequence[JobT]) -> Iterator[ResultT]:
        """Yield each job's result as it finishes."""
        if self.workers == 1 or len(jobs) <= 1:
            yield from self._in_process(fn, jobs)
        else:
            yield from self._in_pool(fn, jobs)

    def _in_process(self, fn: Callable[[JobT], ResultT], jobs: Iterable[JobT]
                    ) -> Iterator[ResultT]:
        global _sink
        previous, _sink = _sink, self.on_event
        try:
            for job in jobs:
                yield fn(job)
        finally:
            _sink = previous

    def _in_pool(self, fn: Callable[[JobT], ResultT], jobs: Sequence[JobT]) -> Iterator[ResultT]:
        """The jobs on a pool of spawned workers. A worker that dies (kill -9, out of memory)
        breaks the pool: the job it was running is lost (reported once every other job ran,
        as `WorkersLost`), and the others go on in a fresh pool."""
        quiet_resource_tracker()
        ctx = multiprocessing.get_context("spawn")
        events = ctx.Queue()
        started: dict[int, int] = {}
        stop = threading.Event()
        drain = threading.Thread(target=self._drain, args=(events, stop, started), daemon=True)
        drain.start()
        pending, lost = dict(enumerate(jobs)), []
        finished = False
        try:
            for _round in range(len(jobs) + 1):  # each round loses a job, or runs them all
                dead = yield from self._one_pool(ctx, events, fn, pending)
                if not dead:
                    break
                lost += _lost_jobs(pending, started, dead)
                started.clear()
            lost += [(job, "its worker kept dying") for job in pending.values()]
            finished = True
        finally:
            stop.set()
            # every event is delivered before `run` returns; a killed worker may
            # have torn its last message, which would block the drain: do not wait for it then
            drain.join(timeout=None if finished else 5.0)
        if lost:
            raise WorkersLost(f"{len(lost)} job(s) lost: a worker process died while running "
                              f"them ({lost[0][1]})", lost=lost)

    def _one_pool(self, ctx: Any, events: Any, fn: Callable[[JobT], ResultT],
                  pending: dict[int, JobT]) -> Generator[ResultT, None, dict[int, str]]:
        """Run `pending` on one pool, removing each job as its result is yielded; returns the
        workers that died (pid -> how), empty when the pool ran every job."""
        pool = ProcessPoolExecutor(max_workers=min(self.workers, len(pending)), mp_context=ctx,
                                   initializer=_init_worker, initargs=(events,))
        futures = {pool.submit(_run_job, fn, job, index): index
                   for index, job in pending.items()}
        workers = dict(getattr(pool, "_processes", None) or {})  # the pool forgets them
        try:
            for future in as_completed(futures):
                try:
                    result = future.result()
                except BrokenProcessPool:
                    return _dead_workers(workers)
                del pending[futures[future]]
                yield result
            return {}
        except BaseException:
            _kill_pool(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _drain(self, events: Any, stop: threading.Event, started: dict[int, int]) -> None:
        """Deliver events until told to stop and the queue is empty: `stop` is set after the
        workers have exited, so every event they sent is already in the queue's pipe. A job's
        start (which worker took it) is kept in `started`, not delivered."""
        while True:
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                if stop.is_set():
                    return
                continue
            except (EOFError, OSError, ValueError):  # a worker killed mid-message
                return
            if isinstance(event, _Started):
                started[event.index] = event.pid
            elif self.on_event is not None:
                self.on_event(event)


@dataclass(frozen=True)
class _Started:
    """A worker took a job (sent before the job runs)."""

    index: int
    pid: int


def _dead_workers(workers: dict[int, Any]) -> dict[int, str]:
    """The pool's workers that died on their own, and how (a broken pool stops the rest with
    SIGTERM, after the first one's death: they exit 143)."""
    dead = {}
    for pid, process in workers.items():
        code = process.exitcode
        if code not in (None, 0, 143, -signal.SIGTERM):
            dead[pid] = (f"killed by {signal.Signals(-code).name}" if code < 0
                         else f"exit code {code}")
    return dead or {-1: "a worker died"}


def _lost_jobs(pending: dict[int, Any], started: dict[int, int],
               dead: dict[int, str]) -> list[tuple[Any, str]]:
    """The pending jobs that a dead worker had taken (taken out of `pending`), with why."""
    time.sleep(0.2)  # let the drain read the last starts the workers sent
    lost = []
    for index, pid in list(started.items()):
        if pid in dead and index in pending:
            lost.append((pending.pop(index), f"worker {pid} {dead[pid]}"))
    return lost


class LocalHosted:
    """An object kept in this process (`Executor.host`)."""

    def __init__(self, target: object) -> None:
        self.target = target

    def call(self, method: str, *args: object) -> Any:
        """The method's result."""
        return getattr(self.target, method)(*args)

    def close(self) -> None:
        """The object's `close()`."""
        self.target.close()  # type: ignore[attr-defined]


def _kill_pool(pool: ProcessPoolExecutor, grace_s: float = 5.0) -> None:
    """Stop every worker: SIGTERM (each cleans up its sandbox), then SIGKILL the stragglers."""
    processes = list(getattr(pool, "_processes", {}).values())
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    deadline = time.monotonic() + grace_s
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
