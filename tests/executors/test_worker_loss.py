"""kill -9 of a pool worker or of the resource tracker during `run coding --workers 2 --trials 2`
(issue 26 point 5): no traceback, the run goes on or stops with the resume command, `--resume`
finishes it with every checkpoint once. scripts/kill_resume.py does this (and kills the main
process) ten times each; this is one of each. Only processes this test started are looked at."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import FIXTURES

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _child(pid: int, word: str) -> int | None:
    for child in _children(pid):
        try:
            if word in Path(f"/proc/{child}/cmdline").read_text():
                return child
        except OSError:
            continue
    return None


def _journaled(run: Path) -> int:
    return sum(p.read_text().count("\n") for p in run.glob("*/trial_*/journal.jsonl"))


@pytest.mark.parametrize("victim", ["spawn_main", "resource_tracker"])
def test_a_killed_worker_or_tracker_is_no_traceback_and_resumes(tmp_path: Path,
                                                                victim: str) -> None:
    shutil.copytree(FIXTURES / "runs" / "quick", tmp_path / "problems" / "quick")
    run = tmp_path / "run"
    env = {**os.environ, "TMPDIR": str(tmp_path), "COLUMNS": "200"}
    argv = [sys.executable, "-m", "benchwright", "run", "coding", "--problems-dir",
            str(tmp_path / "problems"), "--no-metrics", "--workers", "2", "--trials", "2",
            "--out", str(run)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        target = _child(proc.pid, victim)
        if target is not None and _journaled(run) >= 1:
            os.kill(target, signal.SIGKILL)
            break
        time.sleep(0.05)
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in out + err, err[-3000:]
    assert proc.returncode in (0, 4), err[-3000:]
    if proc.returncode == 4:
        assert "lost" in err and f"--resume {run}" in err.splitlines()[-1]
    resumed = subprocess.run([sys.executable, "-m", "benchwright", "run", "coding", "--resume",
                              str(run)], env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr[-3000:]
    for trial in (1, 2):
        lines = (run / "quick" / f"trial_{trial}" / "journal.jsonl").read_text().splitlines()
        assert len(lines) == 4
    assert not list(tmp_path.glob("benchwright-job-*"))
