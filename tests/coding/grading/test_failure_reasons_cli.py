"""Reasons on the terminal: `eval checkpoint` and `run coding` name the failing tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import CONFTEST, FIXTURES, run_cli, write_problem

pytestmark = pytest.mark.sandbox
QUICK = FIXTURES / "runs"
ADD_ONLY = """cat > calc.py <<'PY'
import sys
print(int(sys.argv[2]) + int(sys.argv[3]) if sys.argv[1] == "add" else sys.exit(1))
PY"""


def test_eval_checkpoint_names_the_failing_tests(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "calc.py").write_text("import sys\nprint(-1)\n")
    out = tmp_path / "out"
    proc = run_cli("eval", "checkpoint", "--problems-dir", str(QUICK), "--problem", "quick",
                   "--checkpoint", "checkpoint_1", "--workspace", str(broken), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "core-cases: fail" in proc.stdout
    assert "failing tests (2):" in proc.stdout
    assert "Core test_add (failed): " in proc.stdout
    assert "assert '-1' == '5'" in proc.stdout  # the first line of pytest's message
    assert "Error test_add_unknown_operation (failed)" in proc.stdout
    assert f"full output: {out}/evaluation/stdout.txt\n" in proc.stdout


def test_eval_checkpoint_lists_ten_failing_tests_then_a_count(tmp_path: Path) -> None:
    problem = write_problem(tmp_path / "many", """
        name: many
        entry_file: tool
        checkpoints: {checkpoint_1: {version: 1}}
    """, {"tests/conftest.py": CONFTEST, "checkpoint_1.md": "Print 1.\n",
          "tests/test_checkpoint_1.py": """
            import subprocess

            import pytest

            @pytest.mark.parametrize("n", range(13))
            def test_prints_one(entrypoint_argv, n):
                out = subprocess.run(entrypoint_argv, capture_output=True, text=True).stdout
                assert out.strip() == "1", f"case {n}: got {out.strip()!r}\\nsecond line"
            """, "solutions/checkpoint_1/tool.py": "print(1)\n"})
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "tool.py").write_text("print(2)\n")
    out = tmp_path / "out"
    proc = run_cli("eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
                   problem.name, "--checkpoint", "checkpoint_1", "--workspace", str(broken),
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    first = lines.index("failing tests (13):")
    listed = lines[first + 1:first + 11]
    assert [line.split(" (failed)")[0] for line in listed] == [
        f"  Core test_prints_one[{n}]" for n in range(10)]
    assert listed[0].endswith("(failed): AssertionError: case 0: got '2'")
    assert lines[first + 11:first + 13] == [
        "  ... and 3 more", f"full output: {out}/evaluation/stdout.txt"]
    assert "second line" not in proc.stdout


def test_run_coding_summary_and_report_name_the_failing_tests(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--agent", "command",
                   "--agent-command", ADD_ONLY, "--no-metrics", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    flat = proc.stdout.replace("\n", " ")
    assert "quick/trial_1 ended at checkpoint_2: tests" in flat
    assert "Core test_sub (failed)" in flat
    assert "1/4 checkpoints solved (2 reached), 0/1 attempts solved every checkpoint" in flat
    report = (out / "report.md").read_text()
    assert "### quick trial 1: ended at checkpoint_2 (tests)" in report
    assert "- Core `test_sub` (failed)" in report
    result = json.loads((out / "result.json").read_text())
    assert result["format"] == "benchwright.run-result/2"
    assert (result["n_checkpoints_planned"], result["checkpoint_solve_rate"]) == (4, 0.25)
    assert (result["n_attempts"], result["attempt_solve_rate"]) == (1, 0.0)
    assert result["created_at"] and result["finished_at"] >= result["created_at"]
    assert result["totals"]["grading_time_s"] > 0
