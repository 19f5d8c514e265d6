"""`benchwright problems new`: a scaffold that validates clean and that the oracle solves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.coding.problems.loader import load_problem
from tests.helpers import run_cli

pytestmark = pytest.mark.sandbox


@pytest.mark.parametrize("kind", ["cli", "http"])
def test_new_problem_validates_and_the_oracle_solves_it(tmp_path: Path, kind: str) -> None:
    problems = tmp_path / "problems"
    problems.mkdir()
    proc = run_cli("problems", "new", "demo", "--kind", kind, "--out", str(problems))
    assert proc.returncode == 0, proc.stderr
    problem = load_problem(problems / "demo")
    assert [c.name for c in problem.ordered_checkpoints()] == ["checkpoint_1", "checkpoint_2"]
    assert problem.render_spec("checkpoint_1").count("python demo.py") >= 1

    proc = run_cli("problems", "validate", str(problems), "--repeat", "2", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [report] = json.loads(proc.stdout)["problems"]
    assert all(r["all_passed"] for c in report["checkpoints"] for r in c["runs"])
    groups = {t["group"] for c in problem.ordered_checkpoints()
              for t in _graded_groups(problems / "demo", c.name)}
    assert groups == {"Core", "Functionality", "Error", "Regression"}

    out = tmp_path / "run"
    proc = run_cli("run", "coding", "--problems-dir", str(problems), "--agent", "oracle",
                   "--no-metrics", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2/2 checkpoints solved" in proc.stdout


def _graded_groups(problem: Path, checkpoint: str) -> list[dict[str, str]]:
    """Each test's group, from grading the reference with `eval checkpoint --json`."""
    proc = run_cli("eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
                   problem.name, "--checkpoint", checkpoint,
                   "--out", str(problem.parent.parent / f"eval-{checkpoint}"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tests: list[dict[str, str]] = json.loads(proc.stdout)["tests"]
    return tests


def test_an_existing_folder_or_a_bad_name_exits_2(tmp_path: Path) -> None:
    assert run_cli("problems", "new", "demo", "--out", str(tmp_path)).returncode == 0
    again = run_cli("problems", "new", "demo", "--out", str(tmp_path))
    assert again.returncode == 2 and "exists already" in again.stderr
    bad = run_cli("problems", "new", "../escape", "--out", str(tmp_path))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert not (tmp_path.parent / "escape").exists()


def test_without_out_the_problem_is_made_in_the_working_folder(tmp_path: Path) -> None:
    proc = run_cli("problems", "new", "demo", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert (tmp_path / "demo" / "config.yaml").is_file()
