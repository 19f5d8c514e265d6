"""browser-use against the fake LLM server with the structured prompt (the default): a valid
structured `done` is written as it is, a free-text `done` still goes through the response
adapter, and a status outside the six codes is an agent error named in the report."""

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

KEY = "sk-benchwright-web-structured-91aa"


def _turn(action: dict[str, Any]) -> dict[str, Any]:
    output = {"thinking": "", "evaluation_previous_goal": "", "memory": "", "next_goal": "",
              "action": [action]}
    return {"text": json.dumps(output), "usage": {"input_tokens": 1000, "output_tokens": 50}}


def _run(tmp_path: Path, turns: list[dict[str, Any]]) -> tuple[dict[str, Any], Path]:
    from benchwright.testing import FakeLLMServer, Script

    out = tmp_path / "run"
    with FakeLLMServer(Script.model_validate({"turns": turns})) as server:
        os.environ["BW_TEST_WEB_KEY"] = KEY
        try:
            done = benchwright("run", "web", "--agent", "browser-use", "--model", "gpt-4.1-mini",
                               "--base-url", f"{server.base_url}/v1", "--api-key-env",
                               "BW_TEST_WEB_KEY", "--task-ids", "9005", "--step-limit", "8",
                               "--out", str(out), "--json")
        finally:
            del os.environ["BW_TEST_WEB_KEY"]
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), out / "tasks" / "9005" / "trial_1"


def _file(trial: Path, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((trial / name).read_text())
    return loaded


def test_a_structured_done_is_the_agent_response(tmp_path: Path) -> None:
    response = {"task_type": "RETRIEVE", "status": "NOT_FOUND_ERROR", "retrieved_data": None,
                "error_details": "There is no order #000000131."}
    summary, trial = _run(tmp_path, [_turn({"scroll": {"down": True, "pages": 1}}),
                                     _turn({"done": {"success": False, "data": response}})])
    assert summary["n_passed"] == 1
    assert _file(trial, "agent_response.json") == response
    assert _file(trial, "metrics.json")["response_source"] == "schema"


def test_a_free_text_done_goes_through_the_adapter(tmp_path: Path) -> None:
    summary, trial = _run(tmp_path, [_turn({"done": {
        "text": "NOT_FOUND_ERROR: there is no order #000000131", "success": False}})])
    assert summary["n_passed"] == 1
    metrics = _file(trial, "metrics.json")
    assert metrics["response_source"] == "adapter"
    assert _file(trial, "agent_response.json")["status"] == "NOT_FOUND_ERROR"


@pytest.mark.parametrize("status", ["NOT_THERE"])
def test_an_invalid_status_is_an_agent_error_named_in_the_report(tmp_path: Path,
                                                                  status: str) -> None:
    bad = {"task_type": "RETRIEVE", "status": status, "retrieved_data": None}
    summary, trial = _run(tmp_path, [_turn({"done": {"success": False, "data": bad}})] * 8)
    assert summary["n_passed"] == 0
    metrics = _file(trial, "metrics.json")
    assert metrics["trial_status"] == "agent_error" and metrics["response_source"] == "adapter"
    assert f"status = '{status}'" in metrics["agent_error"]
    report = Path(summary["report"]).read_text()
    assert "agent error: invalid final response: status = 'NOT_THERE'" in report
