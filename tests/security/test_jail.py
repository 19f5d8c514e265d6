"""The answers stay out of the submission's reach (issue 25, points 1 and 2).

Written as an attacker would: submissions that implement nothing and print the expected output
of the running test (found through $PYTEST_CURRENT_TEST and the tests folder, by any path they
can think of), report what they can see, or, imported into pytest at checkpoint 1, read
checkpoint 2's hidden data. Each scores 0 and sees nothing; the reference solution still passes,
so the tests keep reading what they need (an asset file handed as an argument, a working folder
of their own). Needs bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.coding.grading import workspace as ws
from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus, GradingRule
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.examples import example_problem_dir
from benchwright.coding.problems.loader import load_problem
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers import FIXTURES
from tests.helpers.runtimes import RUNTIME_PARAMS, runtime_for

pytestmark = pytest.mark.sandbox
CHEATERS = FIXTURES / "cheaters"
CASEFILES = FIXTURES / "casefiles"


@pytest.fixture(params=RUNTIME_PARAMS)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return runtime_for(request)


def _grade(problem_dir: Path, checkpoint: str, main: Path, tmp: Path,
           runtime: Runtime | None = None) -> CheckpointEvaluation:
    problem = load_problem(problem_dir)
    snapshot = tmp / "snapshot"
    snapshot.mkdir()
    shutil.copyfile(main, snapshot / f"{problem.entry_file}.py")
    options = GradeOptions(runtime=runtime or BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints[checkpoint], snapshot,
                            options).evaluation


def _passed(evaluation: CheckpointEvaluation) -> int:
    return sum(c.passed for c in evaluation.counts.values())


def _messages(evaluation: CheckpointEvaluation) -> str:
    return "\n".join(case.message or "" for case in evaluation.tests)


@pytest.mark.parametrize("checkpoint", ["checkpoint_1", "checkpoint_2"])
def test_the_reference_passes_in_the_jail(checkpoint: str, tmp_path: Path,
                                          runtime: Runtime) -> None:
    evaluation = _grade(CASEFILES, checkpoint,
                        CASEFILES / "solutions" / "checkpoint_2" / "main.py", tmp_path, runtime)
    assert evaluation.grader.jailed
    assert evaluation.pytest_exit_code == 0, _messages(evaluation)
    assert _passed(evaluation) == evaluation.pytest_collected > 0


@pytest.mark.parametrize("checkpoint", ["checkpoint_1", "checkpoint_2"])
def test_printing_the_expected_output_scores_nothing(checkpoint: str, tmp_path: Path,
                                                     runtime: Runtime) -> None:
    evaluation = _grade(CASEFILES, checkpoint, CHEATERS / "peek.py", tmp_path, runtime)
    assert evaluation.pytest_collected > 0
    assert _passed(evaluation) == 0, [c.id for c in evaluation.tests if c.passed]


@pytest.mark.parametrize("problem", ["kv_server", "ledger_cli"])
def test_printing_the_expected_output_scores_nothing_on_the_bundled_problems(
        problem: str, tmp_path: Path) -> None:
    evaluation = _grade(example_problem_dir(problem), "checkpoint_1", CHEATERS / "peek.py",
                        tmp_path)
    assert evaluation.pytest_collected > 0
    assert _passed(evaluation) == 0


def test_the_submission_sees_no_test_folder_no_pytest_variable_no_process(
        tmp_path: Path, runtime: Runtime) -> None:
    evaluation = _grade(CASEFILES, "checkpoint_1", CHEATERS / "snoop.py", tmp_path, runtime)
    messages = _messages(evaluation)
    assert "SNOOP env= tests=[] inside=- proc=False" in messages, messages


def test_checkpoint_1_never_sees_checkpoint_2_data(tmp_path: Path) -> None:
    # The tests import the submission into pytest's own process, where the jail cannot hold
    # it: the harness refuses the import before the code runs (tests/security/
    # test_imports_submission.py), and the checkpoint is the problem's error, never a pass.
    evaluation = _grade(FIXTURES / "inprocess", "checkpoint_1", CHEATERS / "later_data.py",
                        tmp_path)
    messages = _messages(evaluation)
    assert "LEAK:" not in messages
    assert "CHECKPOINT-2-HIDDEN" not in messages
    assert evaluation.status is GradeStatus.INFRASTRUCTURE_FAILURE
    assert [rule.rule for rule in evaluation.rules_fired] == [GradingRule.IMPORTED_SUBMISSION]


def test_only_earlier_checkpoints_data_is_copied(tmp_path: Path) -> None:
    problem = load_problem(CASEFILES)
    for name, absent in [("checkpoint_1", ["data/checkpoint_2", "test_checkpoint_2.py"]),
                         ("checkpoint_2", [])]:
        (tmp_path / name).mkdir()
        tests = ws.copy_tests(problem, problem.checkpoints[name], tmp_path / name)
        assert (tests / "data" / "checkpoint_1").is_dir()
        for rel in absent:
            assert not (tests / rel).exists()
        if name == "checkpoint_2":
            assert (tests / "data" / "checkpoint_2" / "core" / "secret_case").is_dir()


def test_validate_reports_tests_that_import_the_submission() -> None:
    from benchwright.coding.validation.checks import static_findings

    problem = load_problem(FIXTURES / "inprocess")
    findings = static_findings(problem, problem.checkpoints["checkpoint_1"])
    assert [f.kind for f in findings] == ["unjailed"]
    assert "imports main into pytest's own process" in findings[0].detail
    casefiles = load_problem(CASEFILES)
    assert not static_findings(casefiles, casefiles.checkpoints["checkpoint_1"])


def test_a_signal_reaches_the_jailed_program_and_wait_returns_once_it_is_gone(
        tmp_path: Path) -> None:
    # terminate() on a jailed Popen once killed bubblewrap's monitor: wait() returned while the
    # program was still being torn down (a server still on its port: trajectory_api), and a
    # program's SIGTERM handler never ran. Now the signal goes to the program itself.
    signals = FIXTURES / "signals"
    evaluation = _grade(signals, "checkpoint_1",
                        signals / "solutions" / "checkpoint_1" / "main.py", tmp_path)
    assert evaluation.grader.jailed
    assert evaluation.pytest_exit_code == 0, _messages(evaluation)
    assert _passed(evaluation) == evaluation.pytest_collected == 3
