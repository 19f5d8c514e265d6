"""Crash safety: `benchwright run web` killed with SIGKILL at random moments, resumed, ends with
exactly the trials of an uninterrupted run; torn journals and half-written trials are redone."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchwright.web.trials.fake_runner import DELAY_ENV, FakeTrialRunner
from benchwright.web.trials.layout import WebRunLayout
from benchwright.web.trials.models import (
    AgentName,
    AgentSpec,
    TrialRecord,
    TrialStatus,
    WebRunConfig,
)
from benchwright.web.trials.runner import create_web_run, execute_web_run
from benchwright.web.trials.suites import open_suite
from tests.helpers.web_suites import write_suite

TRIALS = 3


def _env(delay: str) -> dict[str, str]:
    return {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake", DELAY_ENV: delay}


def _argv(suite_dir: Path, run_dir: Path, resume: bool) -> list[str]:
    argv = [sys.executable, "-m", "benchwright", "run", "web", "--suite",
            str(suite_dir / "tasks.json"), "--config", str(suite_dir / "env.yaml"),
            "--trials", str(TRIALS), "--json"]
    return [*argv, "--resume", str(run_dir)] if resume else [*argv, "--out", str(run_dir)]


def _run(argv: list[str], env: dict[str, str], kill_after: float | None) -> int | None:
    """Run the command; with kill_after, SIGKILL its whole process group then (None if killed)."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    if kill_after is None:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
        return proc.returncode
    try:
        proc.wait(timeout=kill_after)
        return proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def _run_until_journal(argv: list[str], env: dict[str, str], journal: Path,
                       lines: int) -> int | None:
    """Run the command and SIGKILL it once the journal holds `lines` records (None if killed).

    Killing on the journal's progress, not after a fixed delay, makes sure one kill lands
    mid-run however slow the machine is."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= lines:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None
        time.sleep(0.01)
    return proc.wait(timeout=1)


def _trials(run_dir: Path) -> dict[tuple[int, int], Any]:
    layout = WebRunLayout(run_dir)
    return {(int(p.parent.name), int(p.name.split("_")[1])):
            json.loads((p / "agent_response.json").read_text()) for p in layout.trial_dirs()}


def _journal_keys(run_dir: Path) -> list[tuple[int, int]]:
    lines = WebRunLayout(run_dir).journal.read_text().splitlines()
    return [(r.task_id, r.trial) for r in map(TrialRecord.model_validate_json, lines)]


def test_sigkill_at_random_moments_then_resume_gives_the_same_trials(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    write_suite(suite_dir)
    reference = tmp_path / "reference"
    _run(_argv(suite_dir, reference, resume=False), _env("0"), None)
    expected = _trials(reference)
    assert len(expected) == 7 * TRIALS

    rng = random.Random(20261122)
    run_dir = tmp_path / "killed"
    env = _env("0.15")
    journal = WebRunLayout(run_dir).journal
    assert _run_until_journal(_argv(suite_dir, run_dir, False), env, journal, 5) is None
    finished_at_kill = [len(journal.read_text().splitlines())]
    for _round in range(12):  # killed at a random moment until one attempt gets to the end
        if _run(_argv(suite_dir, run_dir, True), env, rng.uniform(0.3, 2.5)) is not None:
            break
        finished_at_kill.append(len(journal.read_text().splitlines()) if journal.exists() else 0)
    else:
        _run(_argv(suite_dir, run_dir, resume=True), env, None)

    assert any(0 < n < len(expected) for n in finished_at_kill), finished_at_kill
    keys = _journal_keys(run_dir)
    assert len(keys) == len(set(keys)) and set(keys) == set(expected)
    assert _trials(run_dir) == expected
    summary = json.loads((run_dir / "tasks" / "eval_summary.json").read_text())
    assert [(r["task_id"], r["trial"], r["score"]) for r in summary["tasks"]] == [
        (t, n, 1.0) for t, n in sorted(expected)]
    assert not list(run_dir.rglob("*.tmp"))


@pytest.fixture
def finished_run(tmp_path: Path) -> tuple[Path, Path]:
    tasks, env = write_suite(tmp_path / "suite")
    suite = open_suite(str(tasks), env)
    run_dir = tmp_path / "run"
    config = WebRunConfig(suite=suite.name, task_ids=sorted(suite.dataset.tasks),
                          agent=AgentSpec(name=AgentName.SCRIPTED), trials=2, runner="fake",
                          env_config=env)
    create_web_run(config, run_dir, suite)
    execute_web_run(run_dir, runner_factory=FakeTrialRunner)
    return run_dir, tasks


def test_torn_journal_and_half_written_trials_are_redone(finished_run: tuple[Path, Path]
                                                         ) -> None:
    run_dir, _tasks = finished_run
    layout = WebRunLayout(run_dir)
    before = _trials(run_dir)
    lines = layout.journal.read_text().splitlines(keepends=True)
    dropped = TrialRecord.model_validate_json(lines[-1])
    layout.journal.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    half = layout.trial_dir(dropped.task_id, dropped.trial)
    (half / "agent_response.json").unlink()
    (half / "network.har").write_text('{"log": {"entries": [')
    stray = layout.tasks_dir / "7001" / "trial_9"
    stray.mkdir()

    runner = FakeTrialRunner()
    result = execute_web_run(run_dir, runner_factory=lambda: runner)

    assert [(r.task.task_id, r.trial_dir.name) for r in runner.requests] == [
        (dropped.task_id, f"trial_{dropped.trial}")]
    assert not stray.exists()
    keys = _journal_keys(run_dir)
    assert len(keys) == len(set(keys)) == 14 and _trials(run_dir) == before
    assert (result.n_trials, result.n_passed, result.complete) == (14, 14, True)
    json.loads((half / "network.har").read_text())


def test_infrastructure_failures_are_redone_on_resume(finished_run: tuple[Path, Path]) -> None:
    run_dir, _tasks = finished_run
    layout = WebRunLayout(run_dir)
    lines = layout.journal.read_text().splitlines()
    first = TrialRecord.model_validate_json(lines[0])
    lines[0] = first.model_copy(update={"status": TrialStatus.INFRA_ERROR}).model_dump_json()
    layout.journal.write_text("\n".join(lines) + "\n")
    runner = FakeTrialRunner()
    execute_web_run(run_dir, runner_factory=lambda: runner)
    assert [(r.task.task_id, r.trial_dir.name) for r in runner.requests] == [
        (first.task_id, f"trial_{first.trial}")]
    assert sorted(_journal_keys(run_dir)) == sorted(_trials(run_dir))
