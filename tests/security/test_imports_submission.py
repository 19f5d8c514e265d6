"""Tests that run the submission inside pytest are caught when they do it (issue 36, point 6).

Written as an attacker would: the problem's tests reach the submission's files under names
computed at run time (`importlib.import_module`, `__import__`, `runpy.run_path`,
`exec(compile(...))`, `ctypes.CDLL`), so `problems validate`'s lint, which reads import
statements, sees nothing; the submission implements nothing and, once imported, patches
pytest so every report says passed. Graded, the checkpoint is never a pass: each file is
refused before it runs, the harness has the record first, and the checkpoint is the problem's
error (left out of scores), with the rule `imported_submission`. Needs bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus, GradingRule
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.coding.validation.checks import static_findings
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers import FIXTURES

pytestmark = pytest.mark.sandbox
PROBLEM = FIXTURES / "computed_import"


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> CheckpointEvaluation:
    tmp = tmp_path_factory.mktemp("computed")
    problem = load_problem(PROBLEM)
    snapshot = tmp / "snapshot"
    shutil.copytree(PROBLEM / "solutions" / "checkpoint_1", snapshot)
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], snapshot,
                            options).evaluation


def test_the_lint_does_not_see_computed_imports() -> None:
    # The early warning stays one: it is run-time detection that catches this problem.
    problem = load_problem(PROBLEM)
    assert not static_findings(problem, problem.checkpoints["checkpoint_1"])


def test_the_forging_submission_never_passes(graded: CheckpointEvaluation) -> None:
    assert not any(graded.verdicts.values()), graded.verdicts
    assert graded.status is GradeStatus.INFRASTRUCTURE_FAILURE
    assert graded.to_scbench()["infrastructure_failure"] is True
    # The forgery never ran: the tests that imported it fail, so does the one it would have
    # turned (the entry point prints 0).
    outcomes = {case.id: case.outcome for case in graded.tests}
    assert outcomes["test_entrypoint"] == "failed", outcomes
    assert outcomes["test_import_module"] == "failed", outcomes


def test_the_rule_names_the_file(graded: CheckpointEvaluation) -> None:
    fired = [rule for rule in graded.rules_fired if rule.rule is GradingRule.IMPORTED_SUBMISSION]
    assert len(fired) == 1, graded.rules_fired
    assert sorted(Path(item).name for item in fired[0].items) == ["libmain.so", "main.py"]
    assert "main.py" in (graded.infrastructure_reason or "")


@pytest.mark.parametrize("test_id", ["test_import_module", "test_dunder_import",
                                     "test_run_path", "test_exec_compiled", "test_dlopen"])
def test_every_way_in_is_refused(graded: CheckpointEvaluation, test_id: str) -> None:
    case = next(case for case in graded.tests if case.id == test_id)
    assert case.outcome == "failed"
    assert "SubmissionCodeRefused" in (case.message or ""), case.message
