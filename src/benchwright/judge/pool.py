"""The threads that send a judging's requests, `--concurrency` at a time, across checkpoints.

Each batch's first request is submitted alone; the batch's others are submitted when it is
answered, so they find the shared prefix in the provider's prompt cache. Everything is submitted
up front, so the threads stay busy whatever order the results are collected in.
"""

from __future__ import annotations

import functools
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from benchwright.judge.requests import Outcome, Request, Requester
from benchwright.judge.snapshot import SnapshotPlan


class RequestPool:
    """A thread pool over one `Requester`; a context manager."""

    def __init__(self, requester: Requester, concurrency: int) -> None:
        self.requester = requester
        self.executor = ThreadPoolExecutor(max_workers=concurrency,
                                           thread_name_prefix="judge")

    def submit(self, plan: SnapshotPlan) -> list[Future[Outcome]]:
        """Futures of the plan's outcomes, in the plan's order."""
        futures: list[Future[Outcome]] = []
        for group in plan.groups:
            leader = self.executor.submit(self.requester.run, group[0])
            rest: list[tuple[Request, Future[Outcome]]] = [(r, Future()) for r in group[1:]]
            leader.add_done_callback(functools.partial(self._release, rest))
            futures += [leader, *(f for _r, f in rest)]
        return futures

    def _release(self, rest: list[tuple[Request, Future[Outcome]]],
                 _leader: Future[Outcome]) -> None:
        for request, placeholder in rest:
            try:
                real = self.executor.submit(self.requester.run, request)
            except RuntimeError as exc:  # shutting down (interrupted)
                placeholder.set_exception(exc)
                continue
            real.add_done_callback(functools.partial(_copy, placeholder))

    def __enter__(self) -> RequestPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # interrupted: drop what has not started; requests in flight finish (and are cached)
        self.executor.shutdown(wait=exc is None, cancel_futures=exc is not None)


def _copy(placeholder: Future[Outcome], done: Future[Outcome]) -> None:
    if done.cancelled():
        placeholder.cancel()
        return
    error = done.exception()
    if error is not None:
        placeholder.set_exception(error)
    else:
        placeholder.set_result(done.result())
