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
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

from benchwright.protocols import ExecutorSetup

JobT = TypeVar("JobT")
ResultT = TypeVar("ResultT")
ItemT = TypeVar("ItemT")

_sink: Callable[[Any], None] | None = None


def emit(event: Any) -> None:
    """Report a progress event to the parent (a no-op outside an executor)."""
    if _sink is not None:
        _sink(event)


def _init_worker(events: Any) -> None:
    global _sink
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


def _run_job(fn: Callable[[JobT], ResultT], job: JobT) -> ResultT:
    """A job in a worker; a worker told to stop takes no further job."""
    if _stopping:
        os._exit(143)
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
        ctx = multiprocessing.get_context("spawn")
        events = ctx.Queue()
        stop = threading.Event()
        drain = threading.Thread(target=self._drain, args=(events, stop), daemon=True)
        drain.start()
        pool = ProcessPoolExecutor(max_workers=min(self.workers, len(jobs)), mp_context=ctx,
                                   initializer=_init_worker, initargs=(events,))
        futures: list[Future[ResultT]] = [pool.submit(_run_job, fn, job) for job in jobs]
        finished = False
        try:
            for future in as_completed(futures):
                yield future.result()
            finished = True
        except BaseException:
            _kill_pool(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            stop.set()
            # every event is delivered before `run` returns; a killed worker may
            # have torn its last message, which would block the drain: do not wait for it then
            drain.join(timeout=None if finished else 5.0)

    def _drain(self, events: Any, stop: threading.Event) -> None:
        """Deliver events until told to stop and the queue is empty: `stop` is set after the
        workers have exited, so every event they sent is already in the queue's pipe."""
        while True:
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                if stop.is_set():
                    return
                continue
            except (EOFError, OSError, ValueError):  # a worker killed mid-message
                return
            if self.on_event is not None:
                self.on_event(event)


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
