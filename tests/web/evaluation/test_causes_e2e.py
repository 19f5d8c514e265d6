"""Web failure causes and the evaluator's identity, end to end through the CLI on a local-suite
run made with the fake trial runner: a trial made to end at the step limit (what a real
browser-use run at its step limit leaves: UNKNOWN_ERROR, trial status step_limit) shows as
"step limit" in report.md, report --json and the frames, never as UNKNOWN_ERROR alone; a correct
NOT_FOUND answer is a pass; `web eval --run` names the same data hash as the run's report and
writes where --out says, by default outside the run folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

FAKE = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}


def _step_limited(trial: Path) -> None:
    (trial / "agent_response.json").write_text(json.dumps(
        {"task_type": "RETRIEVE", "status": "UNKNOWN_ERROR", "retrieved_data": None,
         "error_details": "stopped at the step limit"}))
    metrics = json.loads((trial / "metrics.json").read_text())
    metrics.update(trial_status="step_limit", response_status="UNKNOWN_ERROR")
    (trial / "metrics.json").write_text(json.dumps(metrics))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("causes") / "run"
    done = run_cli("run", "web", "--suite", "local", "--task-ids", "9001,9005", "--out",
                   str(out), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    _step_limited(out / "tasks" / "9001" / "trial_1")
    rescored = run_cli("eval", str(out), env=FAKE)
    assert rescored.returncode == 0, rescored.stderr[-3000:]
    return out


def _report(run: Path) -> dict[str, Any]:
    done = run_cli("report", str(run), "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_step_limit_is_the_cause_everywhere(run: Path) -> None:
    report = _report(run)
    causes = report["failure_modes"]["cause"]
    assert causes == {"passed": 1, "wrong answer": 0, "step limit": 1, "agent error": 0,
                      "evaluator error": 0, "infrastructure": 0}
    [failing] = report["failing"]
    assert (failing["task_id"], failing["cause"]) == (9001, "step limit")
    text = (run / "report.md").read_text()
    assert "| cause | step limit | 1 |" in text and "| cause | passed | 1 |" in text
    assert "- task 9001 trial 1: step limit (failure, agent UNKNOWN_ERROR)" in text
    pytest.importorskip("pandas")
    import benchwright

    frame = benchwright.trials_frame([run]).set_index("task_id")
    assert frame.loc[9001, "cause"] == "step limit"
    # 9005 cannot be done: the fake agent answers NOT_FOUND_ERROR, which is right: a pass
    assert frame.loc[9005, "cause"] == "passed"


def test_web_eval_of_a_run_names_its_data_hash_and_writes_outside_it(run: Path,
                                                                      tmp_path: Path) -> None:
    data = json.loads((run / "manifest.json").read_text())["data_checksum"][:12]
    assert f"data {data}" in (run / "report.md").read_text()
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    out = tmp_path / "rescored"
    done = run_cli("web", "eval", str(run / "tasks"), "--run", str(run), "--out", str(out),
                   env=FAKE)
    assert done.returncode == 0, done.stderr
    assert f"data {data}" in done.stdout
    assert (out / "eval_summary.json").is_file() and (out / "eval_report.md").is_file()
    assert (out / "9001" / "trial_1" / "eval_result.json").is_file()
    default = run_cli("web", "eval", str(run / "tasks"), "--run", str(run), env=FAKE,
                      cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    [made] = (tmp_path / "benchwright-out" / "web-eval").iterdir()
    assert made.name.startswith("run-") and (made / "eval_summary.json").is_file()
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before  # nothing written
