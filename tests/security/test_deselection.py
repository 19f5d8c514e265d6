"""What the checkpoint has is what was graded (issue 36, point 2).

Written as an attacker would: a submission that implements only the easy case keeps pytest from
running the case it fails, through an option that deselects it (`-k 'not test_x'`), handed over
the harness's own knob (`GradeOptions.extra_env`: it stands for any channel that reaches pytest's
options) or a planted `.pytest.toml`. The case must still count, as failed, and the record must
say why. Needs bubblewrap.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradingRule
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.grading.policies import PassPolicy
from benchwright.coding.problems.config import Group
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers.problems import CONFTEST

pytestmark = pytest.mark.sandbox

_TESTS = '''
import subprocess
import pytest

def _run(argv, *args):
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=30).stdout

def test_hello(entrypoint_argv):
    assert _run(entrypoint_argv) == "hello\\n"

@pytest.mark.error
def test_x(entrypoint_argv):
    assert _run(entrypoint_argv, "x") == "world\\n"
'''


def _problem(root: Path) -> Path:
    problem = root / "deselect"
    (problem / "tests").mkdir(parents=True)
    (problem / "config.yaml").write_text(textwrap.dedent("""\
        name: deselect
        description: one easy case and one the submission fails
        entry_file: main
        checkpoints:
          checkpoint_1: {version: 1, order: 1, timeout: 60}
        """))
    (problem / "checkpoint_1.md").write_text("Print hello; with `x`, print world.\n")
    (problem / "tests" / "conftest.py").write_text(CONFTEST)
    (problem / "tests" / "test_checkpoint_1.py").write_text(_TESTS)
    return problem


def _grade(tmp: Path, extra_env: dict[str, str], planted: dict[str, str]) -> CheckpointEvaluation:
    problem = load_problem(_problem(tmp))
    snapshot = tmp / "snapshot"
    snapshot.mkdir()
    (snapshot / "main.py").write_text('print("hello")\n')  # test_x fails
    for name, text in planted.items():
        (snapshot / name).write_text(text)
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch", extra_env=extra_env)
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], snapshot,
                            options).evaluation


def _assert_counted_as_failed(evaluation: CheckpointEvaluation) -> None:
    x = [case for case in evaluation.tests if case.id == "test_x"]
    assert [(c.outcome, c.group) for c in x] == [("failed", Group.ERROR)], evaluation.tests
    assert evaluation.counts[Group.ERROR].passed == 0
    assert evaluation.counts[Group.ERROR].total == 1
    assert evaluation.verdicts[PassPolicy.ALL_CASES] is False


@pytest.mark.parametrize("extra_env, planted", [
    ({"PYTEST_ADDOPTS": "-k 'not test_x'"}, {}),
    ({}, {".pytest.toml": '[pytest]\naddopts = ["-k", "not test_x"]\n'}),
], ids=["addopts", "planted-pytest-toml"])
def test_a_deselected_failing_case_counts_as_failed(
        tmp_path: Path, extra_env: dict[str, str], planted: dict[str, str]) -> None:
    evaluation = _grade(tmp_path, extra_env, planted)
    _assert_counted_as_failed(evaluation)


def test_the_record_says_the_case_did_not_run(tmp_path: Path) -> None:
    evaluation = _grade(tmp_path, {"PYTEST_ADDOPTS": "-k 'not test_x'"}, {})
    fired = [r for r in evaluation.rules_fired if r.rule is GradingRule.NOT_RUN]
    assert len(fired) == 1, evaluation.rules_fired
    assert fired[0].items == [".evaluation_tests/test_checkpoint_1.py::test_x"]
    assert "not run" in (next(c for c in evaluation.tests if c.id == "test_x").message or "")


def test_nothing_fires_when_every_case_runs(tmp_path: Path) -> None:
    evaluation = _grade(tmp_path, {}, {})
    _assert_counted_as_failed(evaluation)
    assert evaluation.rules_fired == []
    assert [c.id for c in evaluation.tests] == ["test_hello", "test_x"]
