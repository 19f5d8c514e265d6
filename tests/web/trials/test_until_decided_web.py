"""`run web --baseline RUN --until-decided` through the CLI (issue 41, point 2 on the web
track): the local suite's twelve tasks (twelve intent templates, the clusters) run by the fake
trial runner, which answers every task right.

Against a baseline whose answers were made wrong (then scored again) the first look decides and
the run stops; against an equal baseline the run goes to its trial budget, across a kill -9 and
`--resume` that continue the same sequence; report.md says when and why it stopped.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchwright.web.trials.fake_runner import DELAY_ENV
from tests.helpers import run_cli

pytestmark = pytest.mark.e2e
FAKE = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run of every local task (all right), and a copy whose answers are all wrong."""
    root = tmp_path_factory.mktemp("web-decide")
    done = run_cli("run", "web", "--suite", "local", "--out", str(root / "good"), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    shutil.copytree(root / "good", root / "bad")
    for response in sorted((root / "bad" / "tasks").glob("*/trial_1/agent_response.json")):
        saved = json.loads(response.read_text())
        response.write_text(json.dumps({**saved, "status": "UNKNOWN_ERROR",
                                        "retrieved_data": None}))
    done = run_cli("eval", str(root / "bad"), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"good": root / "good", "bad": root / "bad"}


def _sequence(run: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((run / "sequence.json").read_text())
    return found


def _argv(base: Path, out: Path, rounds: int) -> list[str]:
    return ["run", "web", "--suite", "local", "--baseline", str(base), "--until-decided",
            "--max-rounds", str(rounds), "--out", str(out)]


def test_a_clear_difference_stops_at_the_first_look(baselines: dict[str, Path],
                                                    tmp_path: Path) -> None:
    run = tmp_path / "better"
    done = run_cli(*_argv(baselines["bad"], run, 4), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    seq = _sequence(run)
    assert seq["stopped"] == "difference" and len(seq["looks"]) == 1
    assert seq["settings"]["unit"] == "templates" and seq["settings"]["metric"] == "pass rate"
    [look] = seq["looks"]
    assert look["n_clusters"] == 12 and look["low"] > 0
    assert "over 12 templates: difference" in done.stderr
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"]["trials"] == 1  # no round was added after the decision
    report = (run / "report.md").read_text()
    assert "## Stopping when decided" in report and "templates as clusters" in report
    assert "Stopped after round 1" in report and "**difference**" in report


def test_no_difference_runs_to_the_budget_across_a_kill(baselines: dict[str, Path],
                                                        tmp_path: Path) -> None:
    run = tmp_path / "equal"
    first = _killed_in_round_two(_argv(baselines["good"], run, 2), run)
    resumed = run_cli("run", "web", "--resume", str(run), "--json", env=FAKE)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    seq = _sequence(run)
    assert [lk["round"] for lk in seq["looks"]] == [1, 2]
    assert seq["looks"][0] == first  # the look before the kill is kept as it was
    assert {lk["alpha_spent"] for lk in seq["looks"]} == {0.05 / 2}
    assert seq["stopped"] == "trial budget spent"
    assert json.loads(resumed.stdout)["sequence"]["stopped"] == "trial budget spent"
    assert json.loads(resumed.stdout)["n_trials"] == 24  # 12 tasks x 2 rounds, none redone twice
    report = (run / "report.md").read_text()
    assert "Stopped after round 2" in report and "**trial budget spent**" in report
    shown = run_cli("report", str(run))
    assert "## Stopping when decided" in shown.stdout


def _killed_in_round_two(args: list[str], run: Path) -> object:
    """Start the sequence with slow trials, kill -9 its process group once round 1's look is
    written (round 2 under way), and return that look."""
    env = {**FAKE, DELAY_ENV: "0.5"}
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", *args], env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and not _has_look(run):
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    seq = _sequence(run)
    assert len(seq["looks"]) == 1 and seq["stopped"] is None
    return seq["looks"][0]


def _has_look(run: Path) -> bool:
    try:
        return bool(_sequence(run)["looks"])
    except (OSError, ValueError):
        return False
