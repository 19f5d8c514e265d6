"""What `problems validate` concludes from failure messages (no grading: evaluations written
here): a missing program is not a missing data file, and a package fetcher means the network;
and from the specs: a placeholder left in, but not a template syntax the spec shows as code."""

from __future__ import annotations

from pathlib import Path

from benchwright.coding.grading.evaluation import (
    CheckpointEvaluation,
    EnvInfo,
    GraderInfo,
    GradeStatus,
)
from benchwright.coding.grading.evaluation import (
    TestCase as Case,
)
from benchwright.coding.problems.config import Group
from benchwright.coding.problems.loader import load_problem
from benchwright.coding.validation.checks import run_findings, static_findings
from benchwright.sandbox.bwrap import Limits
from tests.helpers import write_problem

MESSAGES = {
    "test_rust": "FileNotFoundError: [Errno 2] No such file or directory: 'cargo'",
    "test_cpp": "FileNotFoundError: [Errno 2] No such file or directory: 'g++'",
    "test_cases": "FileNotFoundError: [Errno 2] No such file or directory: "
                  "'/tmp/pytest-0/data/checkpoint_4_cases.json'",
    "test_local": "FileNotFoundError: [Errno 2] No such file or directory: 'cases.json'",
    "test_expected": "FileNotFoundError: [Errno 2] No such file or directory: '/root/.cache/"
                     "benchwright/grading/grade-10667-655618-vp9qlbtp/workspace/.evaluation_tests/"
                     "cases/checkpoint_4/bane_invent/materials.csv'",
}


def _evaluation() -> CheckpointEvaluation:
    env = EnvInfo(key="k", python_version="3.12", packages=[], reused=True)
    tests = [Case(id=name, file="tests/test_checkpoint_1.py", checkpoint="checkpoint_1",
                      group=Group.CORE, outcome="failed", message=message)
             for name, message in MESSAGES.items()]
    return CheckpointEvaluation(
        problem="p", problem_version=1, checkpoint="checkpoint_1", checkpoint_version=1,
        status=GradeStatus.COMPLETED, pytest_exit_code=1, pytest_collected=len(tests),
        counts={}, verdicts={}, tests=tests, duration_s=1.0, total_duration_s=1.0,
        grader=GraderInfo(benchwright_version="0", runtime="bwrap", limits=Limits(),
                          entrypoint="python p.py", pytest_args=[], test_env=env,
                          solution_env=env))


def test_missing_programs_data_files_and_a_fetchers_network_need(tmp_path: Path) -> None:
    problem = load_problem(write_problem(tmp_path / "p", """
        name: p
        entry_file: p
        checkpoints: {checkpoint_1: {version: 1}}
    """, {}))
    checkpoint = problem.checkpoints["checkpoint_1"]
    found = {(f.kind, f.test, f.detail) for f in run_findings(
        problem, checkpoint, [("as graded", _evaluation())]) if f.kind != "reference_fails"}
    rust, cpp = "test_checkpoint_1.py::test_rust", "test_checkpoint_1.py::test_cpp"
    assert found == {
        ("missing_program", rust, "`cargo` is not installed in the sandbox"),
        ("missing_program", cpp, "`g++` is not installed in the sandbox"),
        ("network", rust, "runs `cargo`, which fetches what a build needs from crates.io "
                          "(the sandbox has no network)"),
        ("missing_data", "test_checkpoint_1.py::test_cases",
         "/tmp/pytest-0/data/checkpoint_4_cases.json is missing"),
        ("missing_data", "test_checkpoint_1.py::test_local", "cases.json is missing"),
        ("missing_data", "test_checkpoint_1.py::test_expected",  # the same in every run
         ".evaluation_tests/cases/checkpoint_4/bane_invent/materials.csv is missing"),
    }


def test_template_syntax_shown_as_code_is_not_a_placeholder(tmp_path: Path) -> None:
    spec = ("# one\nA value equal to `{{fragment:<name>}}` is replaced; nested `{{fragment:...}}`"
            " too:\n\n```yaml\nlogging: \"{{fragment:json_logger}}\"\n```\n\n"
            "Run it as {{ entry_command }}, or `%%%ENTRYPOINT:entry_commnd%%% --help`.\n")
    problem = load_problem(write_problem(tmp_path / "p", """
        name: p
        entry_file: p
        checkpoints: {checkpoint_1: {version: 1}}
    """, {"checkpoint_1.md": spec}))
    found = [f.detail for f in static_findings(problem, problem.checkpoints["checkpoint_1"])]
    # layered_config_synthesizer's fragments (in code) are its own syntax; the rest is unfilled
    assert found == ["checkpoint_1.md: %%%ENTRYPOINT:entry_commnd%%%",
                     "checkpoint_1.md: {{ entry_command }}"]
