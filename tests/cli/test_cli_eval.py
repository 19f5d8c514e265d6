"""`benchwright eval checkpoint` end to end, through the CLI as a user runs it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import CONFTEST, run_cli, write_problem


def _assert_one_line_error(stderr: str, *needles: str) -> None:
    assert "Traceback" not in stderr
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error:")
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("problem", "checkpoints"),
    [("kv_server", ["checkpoint_1", "checkpoint_2", "checkpoint_3"]),
     ("ledger_cli", ["checkpoint_1", "checkpoint_2", "checkpoint_3"])],
)
def test_reference_solutions_pass_every_test(
    problem: str, checkpoints: list[str], tmp_path: Path
) -> None:
    for checkpoint in checkpoints:
        out = tmp_path / checkpoint
        proc = run_cli("eval", "checkpoint", "--problem", problem, "--checkpoint", checkpoint,
                       "--out", str(out), "--json")
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)
        assert result["status"] == "completed"
        assert all(result["verdicts"].values()), result["counts"]
        scbench = json.loads((out / "evaluation.json").read_text())
        assert scbench["pass_counts"] == scbench["total_counts"]
        assert set(scbench) >= {"tests", "pass_counts", "total_counts", "pytest_exit_code",
                                "pytest_collected", "infrastructure_failure", "duration"}
        assert (out / "evaluation" / "report.json").is_file()
        assert (out / "evaluation" / "stdout.txt").read_text().strip()


@pytest.mark.sandbox
def test_an_earlier_solution_fails_the_later_checkpoint_and_the_table_shows_it(
    kv_server: Path, tmp_path: Path
) -> None:
    proc = run_cli("eval", "checkpoint", "--problem", "kv_server", "--checkpoint", "checkpoint_2",
                   "--workspace", str(kv_server / "solutions" / "checkpoint_1"),
                   "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "Regression" in proc.stdout and "core-cases: fail" in proc.stdout
    grading = json.loads((tmp_path / "out" / "grading.json").read_text())
    assert grading["format"] == "benchwright.grading/1"
    assert grading["counts"]["Regression"]["passed"] == grading["counts"]["Regression"]["total"]
    assert grading["counts"]["Core"]["passed"] < grading["counts"]["Core"]["total"]


MINI = """
name: mini
entry_file: tool
timeout: 10
checkpoints:
  checkpoint_1: {version: 1, order: 1}
"""
MINI_TEST = """
import subprocess
import pytest

def test_runs(entrypoint_argv):
    assert subprocess.run(entrypoint_argv, capture_output=True, text=True).stdout == "ok\\n"
"""


def _mini(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    files = {"tests/conftest.py": CONFTEST, "tests/test_checkpoint_1.py": MINI_TEST,
             "checkpoint_1.md": "Print ok.", "solutions/checkpoint_1/tool.py": "print('ok')\n"}
    return write_problem(tmp_path / "mini", MINI, {**files, **(extra or {})})


@pytest.mark.parametrize(
    ("mutate", "needles"),
    [
        (lambda p: (p / "config.yaml").unlink(), ["no config.yaml here"]),
        (lambda p: (p / "config.yaml").write_text("name: [broken\n"),
         ["config.yaml", "not valid YAML at line"]),
        (lambda p: (p / "config.yaml").write_text(MINI.replace("order: 1", "order: 1, x: 2")),
         ["checkpoints.checkpoint_1.x: unknown key", "checkpoint keys are"]),
        (lambda p: (p / "tests" / "test_checkpoint_1.py").unlink(),
         ["test_checkpoint_1.py", "no test file for checkpoint_1"]),
    ],
)
def test_bad_problem_input_is_one_line_and_exit_2(tmp_path: Path, mutate, needles) -> None:  # type: ignore[no-untyped-def]
    problem = _mini(tmp_path)
    mutate(problem)
    proc = run_cli("eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
                   problem.name, "--checkpoint", "checkpoint_1",
                   "--workspace", str(problem / "solutions" / "checkpoint_1"),
                   "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    _assert_one_line_error(proc.stderr, *needles)


def test_unknown_checkpoint_missing_workspace_and_entry_file(tmp_path: Path) -> None:
    problem = _mini(tmp_path)
    base = ["eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
            problem.name, "--out", str(tmp_path / "o")]
    proc = run_cli(*base, "--checkpoint", "checkpoint_7")
    assert proc.returncode == 2
    _assert_one_line_error(proc.stderr, "unknown checkpoint 'checkpoint_7'", "checkpoint_1")
    proc = run_cli(*base, "--checkpoint", "checkpoint_1", "--workspace", str(tmp_path / "none"))
    assert proc.returncode == 2
    _assert_one_line_error(proc.stderr, "workspace snapshot not found", str(tmp_path / "none"))
    proc = run_cli("eval", "checkpoint", "--checkpoint", "checkpoint_1")
    assert proc.returncode == 2
    _assert_one_line_error(proc.stderr, "--problem")


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("test_file", "needles"),
    [
        ("def test_broken(:\n    pass\n", ["tests failed to collect", "test_checkpoint_1.py",
                                            "SyntaxError"]),
        ("import json, pathlib\nCASES = json.loads((pathlib.Path(__file__).parent / 'data' / "
         "'cases.json').read_text())\n\ndef test_x():\n    assert CASES\n",
         ["tests failed to collect", "FileNotFoundError", "data/cases.json"]),
    ],
)
def test_tests_that_fail_to_collect_are_an_infrastructure_failure_named_by_file(
    tmp_path: Path, test_file: str, needles: list[str]
) -> None:
    problem = _mini(tmp_path, {"tests/test_checkpoint_1.py": test_file})
    out = tmp_path / "out"
    proc = run_cli("eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
                   problem.name, "--checkpoint", "checkpoint_1", "--out", str(out))
    assert proc.returncode == 3  # grading broke: an infrastructure error (errors.py)
    _assert_one_line_error(proc.stderr, *needles)
    saved = json.loads((out / "evaluation.json").read_text())
    assert saved["infrastructure_failure"] is True
    assert (out / "evaluation" / "stdout.txt").is_file()


def test_missing_bwrap_refuses_unless_unsafe(tmp_path: Path) -> None:
    problem = _mini(tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    env = {**os.environ, "PATH": str(bindir)}
    args = ["eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
            problem.name, "--checkpoint", "checkpoint_1", "--out", str(tmp_path / "out")]
    proc = run_cli(*args, env=env)
    assert proc.returncode == 2
    _assert_one_line_error(proc.stderr, "bubblewrap (bwrap) is not installed",
                           "apt-get install -y bubblewrap", "--unsafe-no-sandbox")
    proc = run_cli(*args, "--unsafe-no-sandbox", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["grader"]["runtime"] == "unsafe-local"
    assert result["verdicts"]["all-cases"] is True


@pytest.mark.sandbox
def test_an_empty_workspace_is_graded_with_a_warning_as_scbench_does(tmp_path: Path) -> None:
    problem = _mini(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    proc = run_cli("eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
                   problem.name, "--checkpoint", "checkpoint_1", "--workspace", str(empty),
                   "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "the workspace is empty" in proc.stderr
    saved = json.loads((out / "evaluation.json").read_text())
    assert saved["infrastructure_failure"] is False
    printed = json.loads(proc.stdout)
    assert printed["status"] == "completed" and printed["verdicts"]["core-cases"] is False
