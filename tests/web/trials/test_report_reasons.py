"""A web run's report through the CLI: its identity, the failing tasks with the evaluator's
expected and got values, pass@k over trials, and result.json's rates and dates."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchwright.api.web import RUNNER_ENV
from tests.helpers import run_cli
from tests.helpers.web_suites import write_suite


def _answer(run_dir: Path, task_id: int, trial: int, **changes: object) -> None:
    path = run_dir / "tasks" / str(task_id) / f"trial_{trial}" / "agent_response.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_failing_tasks_header_pass_k_and_result(tmp_path: Path) -> None:
    tasks, env_file = write_suite(tmp_path / "suite")
    run_dir = tmp_path / "run"
    env = {**os.environ, RUNNER_ENV: "fake"}
    done = run_cli("run", "web", "--suite", str(tasks), "--config", str(env_file),
                   "--task-ids", "7001-7003", "--trials", "3", "--out", str(run_dir), "--json",
                   env=env)
    assert done.returncode == 0, done.stderr
    # per-trial outcomes: 7001 fails trials 1 and 2, 7002 fails trial 1, 7003 passes all
    _answer(run_dir, 7001, 1, retrieved_data=[40.0])
    _answer(run_dir, 7001, 2, retrieved_data=[40.0])
    _answer(run_dir, 7002, 1, status="UNKNOWN_ERROR")
    regraded = run_cli("eval", str(run_dir))
    assert regraded.returncode == 0, regraded.stderr
    assert "web run " in regraded.stdout and "/tasks" not in regraded.stdout  # as report.md

    report = run_cli("report", str(run_dir)).stdout
    assert report.startswith(f"# benchwright report: web run {run_dir}\n")
    assert "WebArena Verified:" not in report
    assert f"suite: `{tasks}`" in report and "agent: `scripted`" in report
    assert "prompt: `structured`" in report
    assert ("- task 7001 trial 1: wrong answer (failure, agent SUCCESS); AgentResponseEvaluator "
            "retrieved_data: expected `[42.5]`, got `[40.0]`") in report
    assert ("- task 7002 trial 1: wrong answer (failure, agent UNKNOWN_ERROR); "
            "AgentResponseEvaluator "
            'status: expected `"success"`, got `"unknown_error"`') in report

    data = json.loads(run_cli("report", str(run_dir), "--json").stdout)
    overall = {p["k"]: (p["pass_at_k"]["value"], p["pass_hat_k"]["value"])
               for p in data["pass_k"]["overall"]}
    # successes per task: 1, 2, 3 of 3
    assert overall[1] == pytest.approx((6 / 9, 6 / 9))
    assert overall[3] == pytest.approx((1.0, 1 / 3))
    assert overall[2] == pytest.approx(((2 / 3 + 1 + 1) / 3, (0 + 1 / 3 + 1) / 3))
    assert data["header"]["trials"] == 3 and data["header"]["problems"] == [
        "7001", "7002", "7003"]

    result = json.loads((run_dir / "result.json").read_text())
    assert result["format"] == "benchwright.web-run-result/2"
    assert result["pass_hat_k"]["3"] == pytest.approx(1 / 3)
    assert result["pass_rate_ci"]["n_clusters"] == 3 and result["created_at"]
    assert result["totals"]["steps"] > 0 and result["totals"]["grading_time_s"] > 0
