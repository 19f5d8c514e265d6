"""Site workers: order within a site, parallelism across sites, resets, trials and their files."""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.web.evaluation.scoring import TaskMetrics
from benchwright.web.evaluation.tasks import TaskType
from benchwright.web.trials.fake_runner import FakeTrialRunner
from benchwright.web.trials.layout import WebRunLayout
from benchwright.web.trials.models import (
    AgentName,
    AgentSpec,
    PlannedTask,
    TrialMetrics,
    TrialOutcome,
    TrialRecord,
    TrialRequest,
    WebRunConfig,
)
from benchwright.web.trials.runner import RunHooks, create_web_run, execute_web_run, planned
from benchwright.web.trials.scheduling import SiteGuard, TrialJob, plan, run_workers
from benchwright.web.trials.suites import Suite, SuiteSession, open_suite
from tests.helpers.web_suites import SITE_URLS, write_suite


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    tasks, env = write_suite(tmp_path / "suite")
    return open_suite(str(tasks), env)


def _planned(suite: Suite) -> list[PlannedTask]:
    return [planned(t) for _, t in sorted(suite.dataset.tasks.items())]


def test_plan_groups_by_first_site_with_trials_back_to_back(suite: Suite) -> None:
    groups = plan(_planned(suite), 2, done={(7001, 2)})
    assert sorted(groups) == ["reddit", "shopping", "wikipedia"]
    assert [j.key for j in groups["shopping"]] == [(7001, 1), (7002, 1), (7002, 2), (7003, 1),
                                                   (7003, 2)]
    assert [j.key for j in groups["reddit"]] == [(7004, 1), (7004, 2), (7005, 1), (7005, 2),
                                                 (7007, 1), (7007, 2)]


def test_sequential_within_a_site_parallel_across_sites(suite: Suite) -> None:
    tasks = {t.task_id: t for t in _planned(suite)}
    groups = plan(list(tasks.values()), 2, done=set())
    barrier = threading.Barrier(len(groups), timeout=30)  # passes only if all groups run at once
    guard = SiteGuard(lambda s: s, lambda s: s)
    counter, lock = itertools.count(), threading.Lock()
    events: list[tuple[int, str, TrialJob]] = []

    def work(job: TrialJob) -> None:
        with guard.trial(job.task):
            with lock:
                events.append((next(counter), "start", job))
            if job.trial == 1 and job is groups[job.task.group][0]:
                barrier.wait()
            with lock:
                events.append((next(counter), "end", job))

    run_workers(groups, work, threading.Event())
    assert len(events) == 2 * sum(len(jobs) for jobs in groups.values())
    for group, jobs in groups.items():
        started = [job.key for _, kind, job in events
                   if kind == "start" and job.task.group == group]
        assert started == [job.key for job in jobs]
    for site in ("shopping", "reddit", "wikipedia"):
        running = 0
        for _, kind, job in events:
            if site in job.task.sites:
                running += 1 if kind == "start" else -1
                assert running <= 1, f"two trials on {site} at once"


def test_resets_after_mutate_trials_only(suite: Suite) -> None:
    resets: list[frozenset[str]] = []
    guard = SiteGuard(lambda s: resets.append(s) or s, lambda s: s)
    seen: list[tuple[tuple[int, int], frozenset[str]]] = []
    for job in plan(_planned(suite), 2, done=set())["shopping"]:
        with guard.trial(job.task) as cleaned:
            seen.append((job.key, cleaned))
    assert [(key, sorted(c)) for key, c in seen] == [
        ((7001, 1), []), ((7001, 2), []), ((7002, 1), []), ((7002, 2), ["shopping"]),
        ((7003, 1), ["shopping"]), ((7003, 2), [])]
    assert guard.dirty == frozenset()


def test_a_reset_of_everything_holds_every_site(suite: Suite) -> None:
    """A suite that can only reset all sites at once (the local suite) resets them all."""
    everything = frozenset(SITE_URLS)
    guard = SiteGuard(lambda s: everything, lambda s: everything,
                      dirty=frozenset({"reddit"}))
    reddit_task = next(t for t in _planned(suite) if t.task_id == 7004)
    with guard.trial(reddit_task) as cleaned:
        assert cleaned == everything
        for site in everything:  # every site's lock is held during this trial
            assert guard._lock(site).held_exclusively()
    assert guard.dirty == frozenset()


def test_with_nothing_dirty_a_mutate_trial_holds_only_its_sites(suite: Suite) -> None:
    """The same suite with nothing to reset: a MUTATE trial shuts out its own site, not every
    site (asked the scope of an empty reset, it held them all, and a MUTATE trial on one site
    kept the read-only trials of the others waiting)."""
    everything = frozenset(SITE_URLS)
    guard = SiteGuard(lambda s: everything, lambda s: everything)
    mutate = next(t for t in _planned(suite) if t.task_type is TaskType.MUTATE)
    with guard.trial(mutate) as cleaned:
        assert cleaned == frozenset()
        for site in everything:
            assert guard._lock(site).held_exclusively() == (site in mutate.sites), site
    assert guard.dirty == frozenset(mutate.sites)


class _RecordingSession:
    def __init__(self) -> None:
        self.site_urls = dict(SITE_URLS)
        self.resets: list[frozenset[str]] = []

    def reset_scope(self, sites: frozenset[str]) -> frozenset[str]:
        return sites

    def reset(self, sites: frozenset[str]) -> frozenset[str]:
        self.resets.append(sites)
        return sites


def _with_session(suite: Suite, session: _RecordingSession) -> Suite:
    @contextlib.contextmanager
    def opener() -> Iterator[SuiteSession]:
        yield session
    suite.opener = opener
    return suite


def _config(suite: Suite, trials: int, runner: str = "fake") -> WebRunConfig:
    return WebRunConfig(suite=suite.name, task_ids=sorted(suite.dataset.tasks),
                        agent=AgentSpec(name=AgentName.SCRIPTED), trials=trials, runner=runner)


def test_a_run_writes_every_trial_with_metrics_and_resets(tmp_path: Path, suite: Suite) -> None:
    session = _RecordingSession()
    run_dir = tmp_path / "run"
    create_web_run(_config(suite, trials=2), run_dir, suite)
    records: list[TrialRecord] = []
    result = execute_web_run(run_dir, suite=_with_session(suite, session),
                             runner_factory=FakeTrialRunner)
    assert (result.n_trials, result.n_passed, result.complete) == (14, 14, True)
    layout = WebRunLayout(run_dir)
    records = [TrialRecord.model_validate_json(line)
               for line in layout.journal.read_text().splitlines()]
    assert sorted((r.task_id, r.trial) for r in records) == sorted(
        (t, n) for t in suite.dataset.tasks for n in (1, 2))
    for record in records:
        folder = layout.trial_dir(record.task_id, record.trial)
        raw = (folder / "metrics.json").read_bytes()
        TaskMetrics.model_validate_json(raw)
        metrics = TrialMetrics.model_validate_json(raw)
        assert (metrics.steps, metrics.tokens) == (record.steps, 110)
        assert {p.name for p in folder.iterdir()} >= {
            "agent_response.json", "network.har", "metrics.json", "history.json",
            "eval_result.json"}
    assert [r.reset_before for r in _by_start(records)] == _expected_resets(suite, records)
    resets = [r for r in records if r.reset_before]
    assert resets and len(session.resets) == len(resets)
    assert layout.report_md.read_text().startswith("# benchwright report: web run")
    assert json.loads(layout.result_json.read_text())["format"] == "benchwright.web-run-result/2"


def _by_start(records: list[TrialRecord]) -> list[TrialRecord]:
    return sorted(records, key=lambda r: r.started_at or "")


def _expected_resets(suite: Suite, records: list[TrialRecord]) -> list[list[str]]:
    """Replays the trials in the order they started (each under its sites' locks): a trial
    resets the dirty sites it touches, and a MUTATE trial leaves its own sites dirty. Which
    trial takes a reset depends on the order the workers ran them in (it varies on a busy
    machine); that it follows this rule does not."""
    tasks = {t.task_id: t for t in _planned(suite)}
    dirty: set[str] = set()
    expected: list[list[str]] = []
    for record in _by_start(records):
        task = tasks[record.task_id]
        expected.append(sorted(dirty & set(task.sites)))
        dirty -= set(task.sites)
        if task.task_type is TaskType.MUTATE:
            dirty |= set(task.sites)
    return expected


class _BrokenHarness:
    """A runner whose harness breaks on two tasks: the HAR writer hits a full disk (7004) and a
    module the trial needs is missing on this node (7002)."""

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        if request.task.task_id == 7004:
            raise OSError(errno.ENOSPC, "No space left on device", "network.har")
        if request.task.task_id == 7002:
            raise ModuleNotFoundError("No module named 'browser_use'", name="browser_use")
        return FakeTrialRunner().run_trial(request)

    def close(self) -> None:
        pass


def test_a_harness_failure_in_a_trial_is_an_infrastructure_error_not_the_agents(
        tmp_path: Path, suite: Suite) -> None:
    """Issue 26 point 4: left out of every figure (never the agent's UNKNOWN_ERROR), named in
    result.json, and redone by a resume."""
    run_dir = tmp_path / "run"
    create_web_run(_config(suite, trials=1), run_dir, suite)
    result = execute_web_run(run_dir, suite=_with_session(suite, _RecordingSession()),
                             runner_factory=_BrokenHarness)
    assert (result.n_trials, result.n_passed, result.n_errors) == (5, 5, 0)
    assert not result.complete and result.pass_rate == 1.0
    failed = dict(e.split(": ", 1) for e in result.infra_errors)
    assert sorted(failed) == ["task 7002 trial 1", "task 7004 trial 1"]
    assert "No space left on device" in failed["task 7004 trial 1"]
    assert "browser_use" in failed["task 7002 trial 1"]
    layout = WebRunLayout(run_dir)
    folder = layout.trial_dir(7004, 1)
    assert not (folder / "agent_response.json").exists()
    assert "No space left" in (folder / "infra_error.json").read_text()
    assert not (folder / "trajectory.atif.json").exists()  # no step ran: no trajectory
    statuses = {json.loads(line)["task_id"]: json.loads(line)["status"]
                for line in layout.journal.read_text().splitlines()}
    assert statuses[7004] == statuses[7002] == "infra_error"
    assert "UNKNOWN_ERROR" not in (layout.root / "tasks" / "eval_summary.json").read_text()
    # the harness fixed: a resume redoes exactly the two, and the run is whole
    again = execute_web_run(run_dir, suite=_with_session(suite, _RecordingSession()),
                            runner_factory=FakeTrialRunner)
    assert (again.n_trials, again.n_passed, again.complete) == (7, 7, True)
    assert again.infra_errors == []


def test_resume_resets_the_sites_of_an_unfinished_mutate_trial(tmp_path: Path,
                                                               suite: Suite) -> None:
    run_dir = tmp_path / "run"
    create_web_run(_config(suite, trials=1), run_dir, suite)
    mutate = next(t for _, t in sorted(suite.dataset.tasks.items())
                  if t.task_type is TaskType.MUTATE)
    WebRunLayout(run_dir).trial_dir(mutate.task_id, 1).mkdir(parents=True)  # killed mid-trial
    session, started = _RecordingSession(), []
    hooks = RunHooks(on_start=lambda total, done: started.append((total, done)))
    execute_web_run(run_dir, hooks, suite=_with_session(suite, session),
                    runner_factory=FakeTrialRunner)
    assert started == [(len(suite.dataset.tasks), 0)]
    assert any(set(mutate.sites) <= reset for reset in session.resets)
