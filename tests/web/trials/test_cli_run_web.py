"""`benchwright run web`: --json, bad input, and `eval` / `report` on a web run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchwright.api.web import RUNNER_ENV
from benchwright.cli.main import app
from benchwright.errors import UserInputError
from tests.helpers import run_cli
from tests.helpers.web_suites import write_suite

runner = CliRunner()


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    write_suite(tmp_path / "suite")
    return tmp_path / "suite"


def _suite_args(suite_dir: Path) -> list[str]:
    return ["--suite", str(suite_dir / "tasks.json"), "--config", str(suite_dir / "env.yaml")]


def test_json_summary_then_eval_and_report(tmp_path: Path, suite_dir: Path) -> None:
    run_dir = tmp_path / "run"
    env = {**os.environ, RUNNER_ENV: "fake"}
    done = run_cli("run", "web", *_suite_args(suite_dir), "--task-ids", "7001-7004",
                   "--trials", "2", "--out", str(run_dir), "--json", env=env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["run_dir"] == str(run_dir)
    assert (summary["n_trials"], summary["n_passed"], summary["pass_rate"]) == (8, 8, 1.0)
    first = json.loads((run_dir / "tasks" / "eval_summary.json").read_text())

    rescored = run_cli("eval", str(run_dir), "--json")
    assert rescored.returncode == 0, rescored.stderr
    verdicts = json.loads(rescored.stdout)
    assert [(t["task_id"], t["trial"], t["score"]) for t in verdicts["tasks"]] == [
        (r["task_id"], r["trial"], r["score"]) for r in first["tasks"]]

    report = run_cli("report", str(run_dir))
    assert report.returncode == 0 and "| shopping | 3 | 100.0%" in report.stdout
    as_json = run_cli("report", str(run_dir), "--json")
    assert json.loads(as_json.stdout)["format"] == "benchwright.web-report/2"


def test_eval_rewrites_the_result_of_a_changed_run(tmp_path: Path, suite_dir: Path) -> None:
    run_dir = tmp_path / "run"
    env = {**os.environ, RUNNER_ENV: "fake"}
    done = run_cli("run", "web", *_suite_args(suite_dir), "--task-ids", "7001-7002",
                   "--out", str(run_dir), "--json", env=env)
    assert done.returncode == 0, done.stderr
    answer = run_dir / "tasks" / "7001" / "trial_1" / "agent_response.json"
    response = json.loads(answer.read_text())
    answer.write_text(json.dumps({**response, "status": "UNKNOWN_ERROR"}))

    rescored = run_cli("eval", str(run_dir))
    assert rescored.returncode == 0, rescored.stderr
    result = json.loads((run_dir / "result.json").read_text())
    assert (result["n_trials"], result["n_passed"], result["pass_rate"]) == (2, 1, 0.5)
    assert "| 50.0%" in (run_dir / "report.md").read_text()


def test_captured_cookies_reach_every_trial(tmp_path: Path, suite_dir: Path) -> None:
    cookies = tmp_path / "cookies.json"
    cookies.write_text(json.dumps({"schema": "benchwright.web-cookies/1", "site": "shopping",
                                   "url": "http://127.0.0.1:1", "cookies": [
                                       {"name": "PHPSESSID", "value": "abc", "domain": "127.0.0.1",
                                        "path": "/"}]}))
    env = {**os.environ, RUNNER_ENV: "fake"}
    done = run_cli("run", "web", *_suite_args(suite_dir), "--task-ids", "7001-7002",
                   "--cookies", str(cookies), "--out", str(tmp_path / "run"), "--json", env=env)
    assert done.returncode == 0, done.stderr
    histories = sorted((tmp_path / "run" / "tasks").glob("*/trial_1/history.json"))
    assert [json.loads(h.read_text())["cookies"] for h in histories] == [["PHPSESSID"]] * 2
    cookies.write_text("not json")
    bad = run_cli("run", "web", *_suite_args(suite_dir), "--cookies", str(cookies),
                  "--out", str(tmp_path / "run2"), env=env)
    assert bad.returncode == 2 and "not JSON" in bad.stderr and "Traceback" not in bad.stderr


def _invoke(args: list[str]) -> BaseException | None:
    result = runner.invoke(app, ["run", "web", *args], env={RUNNER_ENV: "fake"})
    return result.exception


BAD_INPUT = [
    (["--suite", "nope"], "unknown suite"),
    (["--task-ids", "9-3"], "runs backwards"),
    (["--task-ids", "1"], "no task 1 in suite"),
    (["--sites", "mars"], "unknown site"),
    (["--sites", "gitlab"], "no task matches"),
    (["--agent", "browser-use"], "needs a model"),
    (["--scripts", "/nonexistent/scripts"], "scripts folder not found"),
    (["--extract-model", "m"], "needs --base-url"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT, ids=[b[1] for b in BAD_INPUT])
def test_bad_input_is_one_line(tmp_path: Path, suite_dir: Path, args: list[str],
                               message: str) -> None:
    exc = _invoke([*_suite_args(suite_dir), "--out", str(tmp_path / "run"), *args])
    assert isinstance(exc, UserInputError), exc
    assert message in exc.one_line() and "\n" not in exc.one_line()


def test_existing_run_and_missing_run(tmp_path: Path, suite_dir: Path) -> None:
    exc = _invoke(["--resume", str(tmp_path / "nothing")])
    assert isinstance(exc, UserInputError) and "not a web run directory" in exc.one_line()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("{}")
    exc = _invoke([*_suite_args(suite_dir), "--out", str(tmp_path / "run")])
    assert isinstance(exc, UserInputError) and "already holds a run" in exc.one_line()


def test_scripted_agent_needs_a_script_per_task(tmp_path: Path, suite_dir: Path) -> None:
    (suite_dir / "scripts" / "7003.yaml").unlink()
    result = runner.invoke(app, ["run", "web", *_suite_args(suite_dir), "--out",
                                 str(tmp_path / "run")])
    assert isinstance(result.exception, UserInputError)
    assert "no action script for task(s) 7003" in result.exception.one_line()


def test_bad_input_exits_2_with_one_line_and_the_runner_switch_is_hidden() -> None:
    done = run_cli("run", "web", "--suite", "nope")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    shown = run_cli("run", "web", "--help", env={**os.environ, "COLUMNS": "200"})
    assert shown.returncode == 0 and "--trials" in shown.stdout
    assert RUNNER_ENV not in shown.stdout and "fake" not in shown.stdout
