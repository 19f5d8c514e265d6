"""`run web`: one process per run folder, resume options checked against the saved run, no key
in the manifest, and no folder left by a refused run (issue 14, point 3 b, d, f)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchwright.api.web import RUNNER_ENV
from benchwright.runs.lock import run_lock
from benchwright.web.trials.fake_runner import DELAY_ENV
from benchwright.web.trials.layout import WebRunLayout
from tests.helpers import run_cli
from tests.helpers.web_suites import write_suite

FAKE_KEY = "sk-benchwright-weblock-0d4f7a21c3"


@pytest.fixture(scope="module")
def web_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("weblock")
    write_suite(root / "suite")
    suite = ["--suite", str(root / "suite" / "tasks.json"),
             "--config", str(root / "suite" / "env.yaml")]
    done = run_cli("run", "web", *suite, "--task-ids", "7001-7002", "--out", str(root / "run"),
                   "--json", env={**os.environ, RUNNER_ENV: "fake"})
    assert done.returncode == 0, done.stderr
    return root / "run", suite


def _refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    stderr = proc.stderr
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr and stderr.count("error:") == 1, stderr
    for word in words:
        assert word in stderr, stderr


def test_a_locked_web_run_refuses_resume_and_eval(web_run: tuple[Path, list[str]]) -> None:
    run_dir, _suite = web_run
    env = {**os.environ, RUNNER_ENV: "fake"}
    with run_lock(run_dir):
        _refused(run_cli("run", "web", "--resume", str(run_dir), env=env),
                 f"pid {os.getpid()}")
        _refused(run_cli("eval", str(run_dir), env=env), f"pid {os.getpid()}")
    resumed = run_cli("run", "web", "--resume", str(run_dir), "--json", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["n_trials"] == 2


def test_web_resume_lists_conflicting_options(web_run: tuple[Path, list[str]]) -> None:
    run_dir, suite = web_run
    env = {**os.environ, RUNNER_ENV: "fake"}
    _refused(run_cli("run", "web", "--resume", str(run_dir), "--trials", "5",
                     "--step-limit", "3", env=env), "--trials", "--step-limit")
    same = run_cli("run", "web", *suite, "--task-ids", "7001-7002", "--out", str(run_dir),
                   "--resume", str(run_dir), "--json", env=env)
    assert same.returncode == 0, same.stderr


def test_a_web_option_holding_a_key_is_refused(web_run: tuple[Path, list[str]],
                                                tmp_path: Path) -> None:
    _run_dir, suite = web_run
    # (a base URL's credential is the one setting kept by reference: tests/security)
    proc = run_cli("run", "web", *suite, "--task-ids", "7001", "--agent", "browser-use",
                   "--model", f"m-{FAKE_KEY}", "--base-url", "http://127.0.0.1:9/v1",
                   "--out", str(tmp_path / "run"),
                   env={**os.environ, RUNNER_ENV: "fake", "OPENAI_API_KEY": FAKE_KEY})
    _refused(proc, "--model", "OPENAI_API_KEY")
    assert not (tmp_path / "run").exists()


def test_a_refused_web_run_leaves_no_folder(web_run: tuple[Path, list[str]],
                                            tmp_path: Path) -> None:
    _run_dir, suite = web_run
    proc = run_cli("run", "web", *suite, "--task-ids", "7001", "--agent", "browser-use",
                   "--out", str(tmp_path / "run"), env={**os.environ, RUNNER_ENV: "fake"})
    _refused(proc, "needs a model")
    assert not (tmp_path / "run").exists()


def test_sigterm_stops_a_web_run_cleanly_and_it_resumes(web_run: tuple[Path, list[str]],
                                                        tmp_path: Path) -> None:
    _run_dir, suite = web_run
    run_dir = tmp_path / "run"
    env = {**os.environ, RUNNER_ENV: "fake", DELAY_ENV: "0.3"}
    argv = [sys.executable, "-m", "benchwright", "run", "web", *suite, "--task-ids", "7001-7004",
            "--trials", "3", "--out", str(run_dir)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    journal = WebRunLayout(run_dir).journal
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (journal.exists() and journal.read_text()):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _out, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    resumed = run_cli("run", "web", "--resume", str(run_dir), "--json", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["n_trials"] == 12
