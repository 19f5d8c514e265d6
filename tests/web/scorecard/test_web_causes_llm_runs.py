"""Issue 41, point 5 on the web track: causes that only a model-driven run leaves, on real runs
(Chromium, browser-use, the fake LLM server, `run web` through the CLI), nothing rewritten:

- the model's final response is invalid at every try (a status outside the six codes): no
  answer;
- the model endpoint fails every call (HTTP 500): environment error (not the agent's fault);
- the agent opens a host file (`file://localhost/...`, the browser's policy refuses it), then
  answers: refused action;
- the scripted agent waits past the run's `--trial-timeout`: timeout.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_real_web_cli as benchwright

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                       reason="needs browser-use: pip install 'benchwright[web]'"),
]

KEY = "sk-benchwright-web-causes-3d1b"
BAD = {"task_type": "RETRIEVE", "status": "NOT_THERE", "retrieved_data": None}


def _turn(action: dict[str, Any]) -> dict[str, Any]:
    output = {"thinking": "", "evaluation_previous_goal": "", "memory": "", "next_goal": "",
              "action": [action]}
    return {"text": json.dumps(output), "usage": {"input_tokens": 1000, "output_tokens": 50}}


def _cause(root: Path, name: str, script: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """Run task 9005 with this model script; its cause and detail in the report, its metrics."""
    from benchwright.testing import FakeLLMServer, Script

    out = root / name
    with FakeLLMServer(Script.model_validate(script)) as server:
        os.environ["BW_TEST_WEB_KEY"] = KEY
        try:
            done = benchwright("run", "web", "--agent", "browser-use", "--model", "gpt-4.1-mini",
                               "--base-url", f"{server.base_url}/v1", "--api-key-env",
                               "BW_TEST_WEB_KEY", "--task-ids", "9005", "--step-limit", "6",
                               "--out", str(out))
        finally:
            del os.environ["BW_TEST_WEB_KEY"]
    assert done.returncode == 0, done.stderr[-3000:]
    report = benchwright("report", str(out), "--json")
    assert report.returncode == 0, report.stderr[-3000:]
    [unit] = json.loads(report.stdout)["failure_causes"]["units"]
    metrics = json.loads((out / "tasks" / "9005" / "trial_1" / "metrics.json").read_text())
    return unit["cause"], unit["detail"] or "", metrics


def test_an_invalid_final_response_is_no_answer(tmp_path: Path) -> None:
    cause, detail, metrics = _cause(tmp_path, "bad", {"turns": [
        _turn({"done": {"success": False, "data": BAD}})] * 6})
    assert metrics["trial_status"] == "agent_error"
    assert (cause, detail.startswith("invalid final response")) == ("no answer", True), detail


def test_a_failing_model_endpoint_is_an_environment_error(tmp_path: Path) -> None:
    cause, _, metrics = _cause(tmp_path, "down", {"turns": [], "fault_all": "http_500"})
    assert metrics["trial_status"] == "model_error"
    assert cause == "environment error"


def test_a_host_file_asked_for_is_a_refused_action(tmp_path: Path) -> None:
    cause, detail, metrics = _cause(tmp_path, "file", {"turns": [
        _turn({"navigate": {"url": "file://localhost/etc/passwd", "new_tab": False}}),
        _turn({"done": {"text": "no order found", "success": False}})]})
    assert metrics["refused_requests"] == ["file://localhost/etc/passwd"]
    assert cause == "refused action" and "file://localhost/etc/passwd" in detail


def test_a_trial_past_its_wall_clock_is_a_timeout(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    steps = [{"navigate": {"url": "__SHOPPING__"}}, *[{"wait": {"seconds": 1}}] * 30,
             {"done": {"text": "never reached", "success": True}}]
    (scripts / "9005.yaml").write_text(json.dumps({"task_id": 9005, "steps": steps}))
    out = tmp_path / "run"
    done = benchwright("run", "web", "--suite", "local", "--agent", "scripted", "--task-ids",
                       "9005", "--scripts", str(scripts), "--step-limit", "40",
                       "--trial-timeout", "6", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((out / "tasks" / "9005" / "trial_1" / "metrics.json").read_text())
    assert metrics["trial_status"] == "timeout"
    assert "ran out of its 6 s" in " ".join(metrics["errors"])
    report = benchwright("report", str(out), "--json")
    [unit] = json.loads(report.stdout)["failure_causes"]["units"]
    assert unit["cause"] == "timeout"
