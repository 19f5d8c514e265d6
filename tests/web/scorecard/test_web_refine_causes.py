"""Issue 41, point 5's LLM pass on the web track: `metrics causes` sends each failed attempt's
evidence (the rules' cause, the evaluator's verdict, the final response, the end of the history)
to a model (the fake LLM server here, recorded into a cassette); report.md and `report --json`
show its answer; replayed from the cassette on a copy of the run with the server stopped and
no key, it gives the same causes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers import run_cli

pytestmark = pytest.mark.e2e
FAKE = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}
KEY_ENV, KEY = "WEB_CAUSES_CREDENTIAL_VAR", "web-causes-secret-0c4e1d7a"
REASON = "the history shows the agent reading the wrong order"
SCRIPT = Script.model_validate({"rules": [{"match": ["Attempt: task 9001 trial 1"], "replies": [
    {"text": json.dumps({"cause": "no answer", "exception": None, "reason": REASON})}]}]})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tasks 9001 and 9002 run right, then 9001's answer made wrong and scored again."""
    out = tmp_path_factory.mktemp("web-refine") / "run"
    done = run_cli("run", "web", "--suite", "local", "--task-ids", "9001,9002", "--out",
                   str(out), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    response = out / "tasks" / "9001" / "trial_1" / "agent_response.json"
    response.write_text(json.dumps({**json.loads(response.read_text()),
                                    "retrieved_data": ["$1.00"]}))
    done = run_cli("eval", str(out), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _units(run: Path) -> list[tuple[str, str, bool]]:
    done = run_cli("report", str(run), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return [(u["unit"], u["cause"], u["refined"])
            for u in json.loads(done.stdout)["failure_causes"]["units"]]


def _causes(run: Path, *options: str, env: dict[str, str]) -> Any:
    done = run_cli("metrics", "causes", str(run), "--model", "fake-judge", "--json", *options,
                   env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_web_causes_refined_then_replayed_offline(run: Path, tmp_path: Path) -> None:
    first, again, cassette = tmp_path / "first", tmp_path / "again", tmp_path / "cassette"
    shutil.copytree(run, first, symlinks=True)
    shutil.copytree(run, again, symlinks=True)
    assert _units(first) == [("task 9001 trial 1", "wrong output", False)]
    with FakeLLMServer(SCRIPT) as server:
        base_url = server.base_url
        recorded = _causes(first, "--base-url", f"{base_url}/v1", "--api-key-env", KEY_ENV,
                           "--llm-record", str(cassette), env={**os.environ, KEY_ENV: KEY})
        [call] = server.model_calls
    assert recorded["errors"] == [] and "Attempt: task 9001 trial 1" in json.dumps(call.body)
    assert _units(first) == [("task 9001 trial 1", "no answer", True)]
    assert REASON in (first / "report.md").read_text()
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, "OPENAI_API_KEY")}
    replayed = _causes(again, "--base-url", f"{base_url}/v1", "--llm-replay", str(cassette),
                       env=env)
    assert replayed["answers"] == recorded["answers"]
    assert _units(again) == [("task 9001 trial 1", "no answer", True)]


def test_a_web_run_needs_a_model(run: Path) -> None:
    done = run_cli("metrics", "causes", str(run))
    assert done.returncode == 2 and "no model to sort the failures with" in done.stderr
