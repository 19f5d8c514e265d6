"""`benchwright run web` end to end through the CLI: real Chromium, browser-use, the local suite.

The reference scripts score 100%, `benchwright eval` re-scores the run identically offline, a wrong
script fails its task and only that task, and every trial's HAR holds what the browser sent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from benchwright.web.local_suite import SCRIPTS_DIR
from tests.helpers.cli import run_cli
from tests.helpers.cli import run_real_web_cli as benchwright

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                       reason="needs browser-use: pip install 'benchwright[web]'"),
]


def run_web(out: Path, *extra: str) -> dict[str, Any]:
    done = benchwright("run", "web", "--suite", "local", "--agent", "scripted", "--out", str(out),
                       "--json", *extra)
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def scores(run_dir: Path) -> dict[int, float]:
    found = {}
    for path in sorted((run_dir / "tasks").glob("*/trial_*/eval_result.json")):
        result = json.loads(path.read_text())
        found[result["task_id"]] = result["score"]
    return found


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("web") / "run"
    return out, run_web(out)


def test_reference_scripts_score_100_percent(reference_run: tuple[Path, dict[str, Any]]) -> None:
    out, summary = reference_run
    assert summary["n_trials"] == 12
    assert summary["n_passed"] == 12
    assert summary["pass_rate"] == 1.0
    assert set(scores(out).values()) == {1.0}


def _metrics(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(run_dir.glob("tasks/*/trial_*/metrics.json"))]


def test_every_trial_is_written_as_valid_atif(reference_run: tuple[Path, dict[str, Any]]) -> None:
    atif = pytest.importorskip("atif")
    out, summary = reference_run
    trials = sorted((out / "tasks").glob("*/trial_*"))
    assert len(trials) == summary["n_trials"]
    for trial in trials:
        doc = atif.Trajectory.model_validate_json((trial / "trajectory.atif.json").read_text())
        history = json.loads((trial / "history.json").read_text())["history"]
        agent = [s for s in doc.steps if s.source == "agent"]
        assert len(agent) == len(history) and doc.steps[0].source == "user", trial
        assert agent[-1].tool_calls[-1].function_name == "done", trial
        assert doc.final_metrics.total_steps == len(doc.steps)


def test_every_answer_came_from_the_schema(reference_run: tuple[Path, dict[str, Any]]) -> None:
    out, _ = reference_run
    assert [m["response_source"] for m in _metrics(out)] == ["schema"] * 12


def test_the_plain_prompt_passes_through_the_adapter(tmp_path: Path) -> None:
    summary = run_web(tmp_path / "plain", "--prompt", "plain")
    assert summary["n_passed"] == 12
    assert [m["response_source"] for m in _metrics(tmp_path / "plain")] == ["adapter"] * 12


def _interval(record: dict[str, Any]) -> tuple[float, float]:
    from datetime import datetime

    return (datetime.fromisoformat(record["started_at"]).timestamp(),
            datetime.fromisoformat(record["ended_at"]).timestamp())


def test_two_trials_per_site_keep_verdicts_hars_and_mutate_alone(
        reference_run: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    from benchwright.web.local_suite import load_local_dataset

    out = tmp_path / "c2"
    summary = run_web(out, "--concurrency-per-site", "2")
    assert summary["n_passed"] == 12 and scores(out) == scores(reference_run[0])
    tasks = load_local_dataset().tasks
    records = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    assert any(_overlap(a, b) for a in records for b in records  # the setting took effect
               if a is not b and tasks[a["task_id"]].task_type != "MUTATE"
               and set(tasks[a["task_id"]].sites) & set(tasks[b["task_id"]].sites))
    for record in records:  # a MUTATE trial never overlaps another trial of its sites
        if tasks[record["task_id"]].task_type != "MUTATE":
            continue
        sites = set(tasks[record["task_id"]].sites)
        for other in records:
            if other is record or not sites & set(tasks[other["task_id"]].sites):
                continue
            assert not _overlap(record, other), (record, other)
    for task_id in tasks:  # each HAR holds only its own trial's requests: those it made alone
        assert _requests(out, task_id) <= _requests(reference_run[0], task_id) | {
            ("GET", "/favicon.ico")}, task_id


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    (a_start, a_end), (b_start, b_end) = _interval(a), _interval(b)
    return a_start < b_end and b_start < a_end


def _requests(run_dir: Path, task_id: int) -> set[tuple[str, str]]:
    har = json.loads((run_dir / "tasks" / str(task_id) / "trial_1" / "network.har").read_text())
    return {(entry["request"]["method"], "/" + entry["request"]["url"].split("/", 3)[3])
            for entry in har["log"]["entries"]}


def test_eval_rescores_identically(reference_run: tuple[Path, dict[str, Any]]) -> None:
    out, _ = reference_run
    before = scores(out)
    done = benchwright("eval", str(out), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    rescored = json.loads(done.stdout)
    assert {t["task_id"]: t["score"] for t in rescored["tasks"]} == before
    assert rescored["totals"]["pass_rate"] == 1.0


def test_har_holds_posts_and_sec_fetch_headers(reference_run: tuple[Path, dict[str, Any]]) -> None:
    out, _ = reference_run
    posts = 0
    for har_path in sorted((out / "tasks").glob("*/trial_*/network.har")):
        log = json.loads(har_path.read_text())["log"]
        assert log["version"] == "1.2"
        http = [e for e in log["entries"] if e["request"]["url"].startswith("http://127.0.0.1")]
        assert http, har_path
        documents = [e for e in http if e["request"]["method"] == "GET"]
        for entry in documents:
            names = {h["name"].lower() for h in entry["request"]["headers"]}
            assert {"sec-fetch-mode", "sec-fetch-site", "sec-fetch-dest"} <= names, entry
        for entry in (e for e in http if e["request"]["method"] == "POST"):
            assert entry["request"]["postData"]["text"], entry
            posts += 1
    assert posts >= 3


def test_a_wrong_script_fails_its_task_only(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for path in SCRIPTS_DIR.glob("*.yaml"):
        if not path.name.endswith(".wrong.yaml"):
            shutil.copy(path, scripts / path.name)
    shutil.copy(SCRIPTS_DIR / "9003.wrong.yaml", scripts / "9003.yaml")
    out = tmp_path / "run"
    # 9003 between two tasks of its site that pass (the whole site: 5 trials, no more proof)
    summary = run_web(out, "--sites", "shopping", "--task-ids", "9002-9004", "--scripts",
                      str(scripts))
    found = scores(out)
    assert sorted(found) == [9002, 9003, 9004] and summary["n_trials"] == 3
    assert {task_id for task_id, score in found.items() if score != 1.0} == {9003}


def running_trial_har(out: Path) -> Path | None:
    """The HAR of a trial under way that has recorded traffic already."""
    for har in sorted((out / "tasks").glob("*/trial_*/network.har")):
        if not (har.parent / "agent_response.json").exists() and b'"request"' in har.read_bytes():
            return har
    return None


def test_a_killed_run_leaves_a_valid_har_and_resumes(tmp_path: Path) -> None:
    """kill -9 of the whole run (its session: Chromium, the sites), then --resume: the HAR is
    valid, the run completes, and nothing of either command stays in their temporary folder
    (the resume swept what the killed run left: owner gone)."""
    out = tmp_path / "run"
    temp = Path(tempfile.mkdtemp(prefix="bw-", dir="/tmp"))  # short: unix sockets live there
    env = {k: v for k, v in os.environ.items() if k != "BENCHWRIGHT_WEB_TRIAL_RUNNER"}
    env["TMPDIR"] = str(temp)
    run = subprocess.Popen([sys.executable, "-m", "benchwright", "run", "web", "--suite", "local",
                            "--agent", "scripted", "--task-ids", "9001-9003", "--out", str(out),
                            "--json"], env=env, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        har = None
        while har is None and run.poll() is None:
            time.sleep(0.05)
            har = running_trial_har(out) if (out / "tasks").is_dir() else None
        assert har is not None, "no trial was caught under way"
        os.killpg(run.pid, signal.SIGKILL)
    finally:
        run.wait()
    log = json.loads(har.read_text())["log"]
    assert log["version"] == "1.2" and log["entries"]
    assert any(p.name.startswith("benchwright-") for p in temp.iterdir())  # what the kill left
    done = run_cli("run", "web", "--suite", "local", "--agent", "scripted", "--out", str(out),
                   "--json", "--resume", str(out), env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["complete"] is True
    assert summary["n_trials"] == 3 and summary["pass_rate"] == 1.0
    assert [p.name for p in temp.iterdir() if p.name.startswith("benchwright-")] == []
    shutil.rmtree(temp, ignore_errors=True)


def test_browser_use_with_an_openai_compatible_model(tmp_path: Path) -> None:
    """The browser-use agent against benchwright's fake LLM server (OpenAI chat completions)."""
    from benchwright.testing import FakeLLMServer, Script

    def turn(action: dict[str, Any]) -> dict[str, Any]:
        output = {"thinking": "", "evaluation_previous_goal": "", "memory": "", "next_goal": "",
                  "action": [action]}
        return {"text": json.dumps(output), "usage": {"input_tokens": 1000, "output_tokens": 50}}

    key = "sk-benchwright-web-fake-5c1d7e"
    script = Script.model_validate({"turns": [
        turn({"scroll": {"down": True, "pages": 1}}),
        turn({"done": {"text": "NOT_FOUND_ERROR: there is no order #000000131", "success": False}}),
    ]})
    out = tmp_path / "run"
    with FakeLLMServer(script) as server:
        os.environ["BW_TEST_WEB_KEY"] = key
        try:
            done = benchwright("run", "web", "--agent", "browser-use", "--model", "gpt-4.1-mini",
                               "--base-url", f"{server.base_url}/v1", "--api-key-env",
                               "BW_TEST_WEB_KEY", "--task-ids", "9005", "--out", str(out), "--json")
        finally:
            del os.environ["BW_TEST_WEB_KEY"]
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(server.requests) == 2
    assert json.loads(done.stdout)["n_passed"] == 1
    metrics = json.loads(next((out / "tasks").glob("9005/trial_1/metrics.json")).read_text())
    assert metrics["input_tokens"] == 2000 and metrics["cost_usd"] > 0
    assert metrics["model_time_s"] > 0 and 0 < metrics["harness_s"] < metrics["duration_s"]
    leaked = subprocess.run(["grep", "-rl", key, str(out)], capture_output=True, text=True)
    assert leaked.stdout == ""
    _check_atif(out / "tasks" / "9005" / "trial_1")


def _check_atif(trial: Path) -> None:
    """The trial's steps in ATIF: valid, each action a tool call with its observation, each
    step's model call with its tokens and cost, the trial's totals in the final metrics."""
    atif = pytest.importorskip("atif")
    from benchwright.files.atif import schema_version

    doc = atif.Trajectory.model_validate_json((trial / "trajectory.atif.json").read_text())
    assert doc.schema_version == schema_version() and doc.session_id == "9005/trial_1"
    assert doc.agent.name == "browser-use" and doc.agent.model_name == "gpt-4.1-mini"
    user, *agent = doc.steps
    assert user.source == "user" and agent and all(s.source == "agent" for s in agent)
    # the first step is the harness's initial navigation: no model call, so no metrics
    assert [c.function_name for s in agent for c in s.tool_calls or []] == [
        "navigate", "scroll", "done"]
    assert (agent[0].llm_call_count, agent[0].metrics) == (0, None)
    agent = agent[1:]
    done = agent[-1].observation.results[-1]
    assert done.source_call_id == agent[-1].tool_calls[-1].tool_call_id
    assert "NOT_FOUND_ERROR" in done.content and done.extra["is_done"]
    assert all(s.extra["url"].startswith("http://127.0.0.1") for s in agent)
    assert [(s.llm_call_count, s.metrics.prompt_tokens, s.metrics.completion_tokens)
            for s in agent] == [(1, 1000, 50), (1, 1000, 50)]
    assert all(s.metrics.cost_usd > 0 for s in agent)
    final = doc.final_metrics
    assert (final.total_prompt_tokens, final.total_completion_tokens) == (2000, 100)
    assert final.total_cost_usd == pytest.approx(sum(s.metrics.cost_usd for s in agent))
