"""Read-only trials of a site side by side (up to the concurrency), MUTATE trials alone, and
resets still before the trial after a MUTATE one; each concurrent trial has a runner of its own."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from benchwright.web.evaluation.tasks import TaskType
from benchwright.web.trials.models import PlannedTask
from benchwright.web.trials.runner_pool import RunnerPool
from benchwright.web.trials.scheduling import SiteGuard, TrialJob, run_workers

R, N, M = TaskType.RETRIEVE, TaskType.NAVIGATE, TaskType.MUTATE


def _job(task_id: int, task_type: TaskType, sites: tuple[str, ...] = ("shop",),
         trial: int = 1) -> TrialJob:
    return TrialJob(task=PlannedTask(task_id=task_id, sites=list(sites), group=sites[0],
                                     task_type=task_type), trial=trial)


def _guard(resets: list[frozenset[str]] | None = None) -> SiteGuard:
    def reset(sites: frozenset[str]) -> frozenset[str]:
        (resets if resets is not None else []).append(sites)
        return sites
    return SiteGuard(reset, lambda sites: sites)


def test_read_only_trials_of_one_site_run_together() -> None:
    together = threading.Barrier(2, timeout=60)  # breaks unless both trials are inside at once
    guard = _guard()

    def work(job: TrialJob) -> None:
        with guard.trial(job.task):
            together.wait()

    run_workers({"shop": [_job(1, R), _job(2, N)]}, work, threading.Event(), concurrency=2)


def test_one_at_a_time_by_default() -> None:
    together = threading.Barrier(2, timeout=1)
    guard = _guard()

    def work(job: TrialJob) -> None:
        with guard.trial(job.task):
            together.wait()

    with pytest.raises(threading.BrokenBarrierError):
        run_workers({"shop": [_job(1, R), _job(2, N)]}, work, threading.Event())


def _recording(guard: SiteGuard, events: list[tuple[str, int]],
               resets_seen: dict[int, frozenset[str]]) -> Callable[[TrialJob], None]:
    lock = threading.Lock()

    def work(job: TrialJob) -> None:
        with guard.trial(job.task) as reset:
            with lock:
                events.append(("start", job.task.task_id))
                resets_seen[job.task.task_id] = reset
            time.sleep(0.02)  # gives the others a chance to overlap (nothing is timed)
            with lock:
                events.append(("end", job.task.task_id))
    return work


def _overlapping(events: list[tuple[str, int]], task_id: int) -> set[int]:
    start, end = events.index(("start", task_id)), events.index(("end", task_id))
    inside = {other for _, other in events[start + 1:end]}
    running_before = {t for kind, t in events[:start] if kind == "start"} - {
        t for kind, t in events[:start] if kind == "end"}
    return (inside | running_before) - {task_id}


def test_mutate_trials_never_overlap_and_reset_before_the_next() -> None:
    resets: list[frozenset[str]] = []
    guard = _guard(resets)
    events: list[tuple[str, int]] = []
    seen: dict[int, frozenset[str]] = {}
    jobs = {"shop": [_job(1, R), _job(2, R), _job(3, N), _job(4, M), _job(5, R), _job(6, R),
                     _job(7, M), _job(8, N)],
            "forum": [_job(11, R, ("forum",)), _job(12, M, ("forum",)),
                      _job(13, R, ("forum", "shop")), _job(14, R, ("forum",))]}
    run_workers(jobs, _recording(guard, events, seen), threading.Event(), concurrency=3)
    by_id = {j.task.task_id: j.task for group in jobs.values() for j in group}
    for task_id, task in by_id.items():
        if task.task_type is M:
            clashes = {o for o in _overlapping(events, task_id)
                       if set(by_id[o].sites) & set(task.sites)}
            assert clashes == set(), (task_id, events)
    for task_id, task in by_id.items():  # the next trial on a MUTATE's sites resets them first
        if task.task_type is not M:
            continue
        after = events[events.index(("end", task_id)):]
        following = next((t for kind, t in after if kind == "start"
                          and set(by_id[t].sites) & set(task.sites)), None)
        if following is not None:
            assert set(task.sites) & seen[following], (task_id, following, events)
    assert any("forum" in r for r in resets) and any("shop" in r for r in resets)
    order = [t for kind, t in events if kind == "start" and by_id[t].group == "shop"]
    assert order.index(4) > max(order.index(1), order.index(2), order.index(3))
    assert order.index(4) < min(order.index(5), order.index(6))


def test_an_error_stops_the_run_after_the_trials_in_flight() -> None:
    guard = _guard()
    finished: list[int] = []

    def work(job: TrialJob) -> None:
        with guard.trial(job.task):
            if job.task.task_id == 1:
                raise RuntimeError("broken infrastructure")
            finished.append(job.task.task_id)

    with pytest.raises(RuntimeError, match="broken"):
        run_workers({"shop": [_job(i, R) for i in range(1, 9)]}, work, threading.Event(),
                    concurrency=2)
    assert len(finished) < 7


class _Runner:
    made = 0

    def __init__(self) -> None:
        _Runner.made += 1
        self.closed = False

    def run_trial(self, request: object) -> object:
        raise NotImplementedError

    def close(self) -> None:
        self.closed = True


def test_each_concurrent_trial_gets_a_runner_of_its_own() -> None:
    _Runner.made = 0
    pool = RunnerPool(_Runner)  # type: ignore[arg-type]
    with pool.runner("shop") as first, pool.runner("shop") as second:
        assert first is not second
    with pool.runner("shop") as again:
        assert again in (first, second)
    with pool.runner("forum") as other:
        assert other not in (first, second)
    pool.close()
    assert _Runner.made == 3 and first.closed and other.closed  # type: ignore[attr-defined]
