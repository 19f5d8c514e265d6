"""Cross-harness parity (issue 39, point 5): a bundled problem run natively (`run coding`) and
as its exported Harbor task (`run harbor`), with the oracle and with a broken submission (the
first checkpoint's reference kept for every checkpoint): the per-checkpoint verdicts are the
same, and both stop where the first checkpoint fails."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.coding.problems.examples import example_problem_dir
from benchwright.harbor.export import export_problem

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.sandbox]
PROBLEM = "ledger_cli"


def cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "benchwright", *args], capture_output=True,
                          text=True, timeout=3600, check=False)
    assert done.returncode in (0, 1), done.stderr[-3000:]


def stale_submission() -> str:
    """A command that writes checkpoint_1's reference into the working folder, whatever the
    checkpoint asks."""
    code = (example_problem_dir(PROBLEM) / "solutions" / "checkpoint_1" / "ledger.py").read_text()
    return f"printf %s {shlex.quote(code)} > ledger.py"


def native(out: Path, agent: list[str]) -> list[bool]:
    # verdicts only: the code-quality metrics (a sixth of the native run's time) decide none
    cli("run", "coding", "--problem", PROBLEM, "--out", str(out), "--no-metrics", *agent)
    journal = out / PROBLEM / "trial_1" / "journal.jsonl"
    return [json.loads(line)["passed"] for line in journal.read_text().splitlines()]


def harbor(task: Path, out: Path, agent: list[str]) -> list[bool]:
    cli("run", "harbor", "--tasks", str(task), "--out", str(out), *agent)
    [record] = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    return [step["rewards"]["reward"] == 1.0 for step in record["steps"]]


@pytest.mark.parametrize("agent", [["--agent", "oracle"],
                                   ["--agent", "command", "--agent-command", "STALE"]],
                         ids=["oracle", "stale"])
def test_verdicts_per_checkpoint_are_the_same_both_ways(tmp_path: Path, agent: list[str],
                                                       image: str) -> None:
    agent = [stale_submission() if a == "STALE" else a for a in agent]
    task = export_problem(example_problem_dir(PROBLEM), tmp_path / "tasks",
                          image).task_dir
    ours = native(tmp_path / "native", agent)
    theirs = harbor(task, tmp_path / "harbor", agent)
    assert ours == theirs
    assert ours == ([True, True, True] if agent[1] == "oracle" else [True, False])
