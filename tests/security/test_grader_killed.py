"""Who killed the grader: a grading sandbox killed from outside (SIGKILL of its bubblewrap, as
the OOM killer or an operator would) is an infrastructure error, left out of scores and redone by
`--resume`; it was scored as the agent's tampering, the attempt stopped and resume did not redo
it. Code inside the sandbox that kills pytest stays tampering (tests/security/test_verdicts.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import benchwright
from tests.helpers import FIXTURES
from tests.helpers.processes import Process, ProcessTree, wait_for

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]

SOURCE_ROOT = str(Path(benchwright.__file__).resolve().parents[1])
SLOW_TEST = "\n\ndef test_slow_enough_to_be_killed():\n    import time\n    time.sleep(4)\n"


def _problem(root: Path) -> Path:
    """The four-checkpoint `quick` problem; checkpoint 2's tests take a few seconds."""
    problems = root / "problems"
    shutil.copytree(FIXTURES / "runs" / "quick", problems / "quick")
    with (problems / "quick" / "tests" / "test_checkpoint_2.py").open("a") as tests:
        tests.write(SLOW_TEST)
    return problems


def _grading_bwrap(tree: ProcessTree, checkpoint: str) -> list[Process]:
    """The outer bubblewrap process grading `checkpoint` (its parent is not a bwrap)."""
    found = tree.find(lambda argv: bool(argv) and argv[0].endswith("bwrap")
                      and f"--checkpoint={checkpoint}" in argv)
    pids = {p.pid for p in found}
    return [p for p in found if _parent(p.pid) not in pids]


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _run(argv: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.Popen([sys.executable, "-m", "benchwright", *argv], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _records(run: Path) -> list[dict[str, object]]:
    journal = run / "quick" / "trial_1" / "journal.jsonl"
    return [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]


def test_a_grader_killed_from_outside_is_redone_not_scored_as_tampering(tmp_path: Path) -> None:
    problems, run = _problem(tmp_path), tmp_path / "run"
    proc = _run(["run", "coding", "--problems-dir", str(problems), "--no-metrics",
                 "--out", str(run)])
    tree = ProcessTree(proc.pid)
    with tree.watch():
        wait_for(lambda: bool(_grading_bwrap(tree, "checkpoint_2")) or proc.poll() is not None,
                 what="checkpoint 2's grading sandbox")
        for victim in _grading_bwrap(tree, "checkpoint_2"):
            os.kill(victim.pid, signal.SIGKILL)  # the operator, or the kernel's OOM killer
        _out, err = proc.communicate(timeout=600)
    records = _records(run)
    assert [r["checkpoint"] for r in records] == ["checkpoint_1"], err  # not journaled
    infra = json.loads((run / "quick" / "trial_1" / "infra_error.json").read_text())
    assert infra["checkpoint"] == "checkpoint_2" and "killed from outside" in infra["grader_error"]
    assert "SIGKILL" in infra["grader_error"]

    resumed = _run(["run", "coding", "--resume", str(run), "--no-metrics"])
    _out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err[-3000:]
    records = _records(run)
    assert [r["checkpoint"] for r in records] == [f"checkpoint_{i}" for i in range(1, 5)]
    assert all(r["passed"] and r["grade_status"] == "completed" for r in records), records
    assert not (run / "quick" / "trial_1" / "infra_error.json").exists()
