"""Issue 41, point 5 on the web track: a run of the local suite (offline, the fake trial runner),
its trials then rewritten as an agent would have left them, re-scored by `eval`: every attempt
that did not pass gets its cause from the closed set, in report.md and `report --json`, and
against a baseline run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

FAKE = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}
FAILED = {"task_type": "RETRIEVE", "status": "UNKNOWN_ERROR", "retrieved_data": None,
          "error_details": None}
# task -> (its agent_response.json or None: kept, metrics.json's changes, the cause expected)
EDITS: dict[int, tuple[dict[str, Any] | None, dict[str, Any], str, str | None]] = {
    9001: ({"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": [1.0],
            "error_details": None}, {}, "wrong output", None),
    9002: (FAILED, {"trial_status": "step_limit"}, "step or cost limit", None),
    9003: (FAILED, {"trial_status": "timeout", "agent_error": "the trial ran out of time"},
           "timeout", None),
    9004: (FAILED, {"trial_status": "agent_error",
                    "agent_error": "invalid final response: not JSON"}, "no answer", None),
    9005: (FAILED, {"trial_status": "agent_error",
                    "agent_error": "step 3 failed:\nKeyError: 'href'"}, "crash", "KeyError"),
    9006: (FAILED, {"trial_status": "failed", "agent_error": "3 failed steps in a row"},
           "agent error", None),
    9007: (FAILED, {"trial_status": "crashed", "agent_error": "the browser closed"},
           "environment error", None),
}


def _rewrite(trial: Path, response: dict[str, Any] | None, metrics: dict[str, Any]) -> None:
    if response is not None:
        (trial / "agent_response.json").write_text(json.dumps(response))
    saved = json.loads((trial / "metrics.json").read_text())
    (trial / "metrics.json").write_text(json.dumps({**saved, **metrics}))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("web-causes")
    ids = ",".join(str(i) for i in sorted(EDITS))
    for name in ("base", "run"):
        done = run_cli("run", "web", "--suite", "local", "--task-ids", ids, "--out",
                       str(root / name), env=FAKE)
        assert done.returncode == 0, done.stderr[-3000:]
    for task, (response, metrics, _cause, _exc) in EDITS.items():
        _rewrite(root / "run" / "tasks" / str(task) / "trial_1", response, metrics)
    _rewrite(root / "base" / "tasks" / "9007" / "trial_1", *EDITS[9007][:2])
    for name in ("base", "run"):
        done = run_cli("eval", str(root / name), env=FAKE)
        assert done.returncode == 0, done.stderr[-3000:]
    return {"base": root / "base", "run": root / "run"}


def test_every_failed_attempt_has_its_cause(runs: dict[str, Path]) -> None:
    done = run_cli("report", str(runs["run"]), "--json", env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    table = json.loads(done.stdout)["failure_causes"]
    found = {int(u["unit"].split()[1]): (u["cause"], u["exception"]) for u in table["units"]}
    assert found == {task: (cause, exc) for task, (_r, _m, cause, exc) in EDITS.items()}
    crash = next(r for r in table["rows"] if r["cause"] == "crash")
    assert crash["exceptions"] == {"KeyError": 1}


def test_report_shows_causes_against_the_baseline(runs: dict[str, Path]) -> None:
    done = run_cli("report", str(runs["run"]), "--baseline", str(runs["base"]), "--json",
                   env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    table = json.loads(done.stdout)["failure_causes"]
    rows = {r["cause"]: (r["count"], r["baseline"]) for r in table["rows"]}
    assert rows["environment error"] == (1, 1)
    assert rows["wrong output"] == (1, 0)
    assert rows["refused action"] == (0, 0)
    md = (runs["run"] / "report.md").read_text()
    assert "## Failures by cause" in md
    assert "| crash (KeyError x1) | 1 | task 9005 trial 1: step 3 failed: KeyError: 'href' |" in md


def test_repeat_rescoring_measures_the_noise(runs: dict[str, Path]) -> None:
    done = run_cli("eval", str(runs["base"]), "--repeat", "2", "--json", env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    noise = json.loads(done.stdout)["grading_noise"]
    assert (noise["repeats"], noise["n_units"]) == (2, len(EDITS))
    assert noise["changed"] == [] and noise["flaky_tests"] == []  # the evaluator is steady
    assert len(noise["rates"]) == 3 and noise["rate_std"] == 0.0
    assert "## Grading noise" in (runs["base"] / "report.md").read_text()
    done = run_cli("report", str(runs["base"]), "--json", env=FAKE)
    assert json.loads(done.stdout)["grading_noise"]["repeats"] == 2


def test_repeat_refuses_a_folder_of_agent_logs(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "9001"
    logs.mkdir(parents=True)
    (logs / "agent_response.json").write_text("{}")
    done = run_cli("eval", str(tmp_path / "logs"), "--repeat", "2")
    assert done.returncode == 2
    assert "--repeat needs a run folder" in done.stderr and "Traceback" not in done.stderr
