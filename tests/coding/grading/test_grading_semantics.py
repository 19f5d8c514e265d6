"""Skipped tests are counted as the problem set's own grading counts them (issue 37).

SCBench's runner counts a skipped or xfailed test as not passed (the older problems' table in
docs/scbench-parity.md rests on it: metric_transform_lang/3's 52/98); SCBench's v1.0 grading,
through its Harbor conversion, leaves them out (mocked_http/3's Core 2/2 with a test skipped for
want of `rabbitmq-server`). A set holding the conversion's `conversion.toml` at its root is graded
the second way. The sandbox tests grade a small problem of our own in both kinds of set; a skip the
problem's tests did not place (the submission's doing) stays a failure in both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.coding.grading import expected as ex
from benchwright.coding.grading import pytest_report as pr
from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.evaluation import TestCase as Case
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.grading.policies import PassPolicy
from benchwright.coding.problems.config import Group
from benchwright.coding.problems.loader import load_problem
from benchwright.coding.problems.semantics import GradingSemantics, grading_semantics
from benchwright.coding.problems.source import problem_source
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers.problems import CONFTEST, write_problem

HARBOR, RUNNER = GradingSemantics.SCBENCH_HARBOR, GradingSemantics.SCBENCH_RUNNER
FILE = ".evaluation_tests/test_checkpoint_1.py"


def _set(root: Path, marker: str | None) -> Path:
    """A problem set folder holding one problem folder, `p`; with `marker` 'file', 'link' or
    'dir', a `conversion.toml` of that kind at its root."""
    problem = root / "p"
    problem.mkdir(parents=True)
    if marker == "file":
        (root / "conversion.toml").write_text("[mocked_http]\nverifier_timeout_sec = 1800\n")
    elif marker == "link":
        (root / "elsewhere.toml").write_text("")
        (root / "conversion.toml").symlink_to("elsewhere.toml")
    elif marker == "dir":
        (root / "conversion.toml").mkdir()
    return problem


@pytest.mark.parametrize("marker, semantics", [
    ("file", HARBOR), (None, RUNNER), ("link", RUNNER), ("dir", RUNNER)])
def test_the_set_root_names_its_grading(tmp_path: Path, marker: str | None,
                                        semantics: GradingSemantics) -> None:
    assert grading_semantics(_set(tmp_path, marker)) is semantics


def test_the_source_record_says_which_grading_the_set_follows(tmp_path: Path) -> None:
    assert problem_source(_set(tmp_path / "v1", "file")).grading is HARBOR
    assert problem_source(_set(tmp_path / "old", None)).grading is RUNNER


def _cases(*outcomes: str) -> list[Case]:
    report = {"tests": [{"nodeid": f"{FILE}::t{i}", "outcome": o, "keywords": []}
                        for i, o in enumerate(outcomes)]}
    return pr.test_cases(report, "checkpoint_1", {})


def test_the_runner_counts_skipped_and_xfailed_as_not_passed() -> None:
    cases = pr.left_out(_cases("passed", "skipped", "xfailed", "xpassed"), RUNNER)
    assert pr.count_groups(cases)[Group.CORE].model_dump() == {"passed": 2, "total": 4}
    assert [c.failing for c in cases] == [False, True, True, False]


def test_harbor_leaves_skipped_and_xfailed_out_and_xpassed_passes() -> None:
    cases = pr.left_out(_cases("passed", "skipped", "xfailed", "xpassed", "failed"), HARBOR)
    assert pr.count_groups(cases)[Group.CORE].model_dump() == {"passed": 2, "total": 3}
    assert [c.failing for c in cases] == [False, False, False, False, True]


def test_a_group_whose_tests_all_skipped_is_not_counted_under_harbor() -> None:
    assert pr.count_groups(pr.left_out(_cases("skipped"), HARBOR)) == {}


def test_a_skip_placed_outside_the_problems_tests_stays_counted_under_harbor() -> None:
    root = Path("/grade/workspace")
    entry = {"nodeid": f"{FILE}::t0", "outcome": "skipped", "keywords": [],
             "setup": {"outcome": "skipped", "longrepr": repr((str(root / "main.py"), 1, "x"))}}
    done = ex.reconcile(ex.Expected(items=[ex.ExpectedItem(nodeid=f"{FILE}::t0")]),
                        {"tests": [entry]}, "checkpoint_1", {}, root / ".evaluation_tests", root)
    [case] = pr.left_out(done.cases, HARBOR)
    assert (case.outcome, case.counted, case.failing) == ("failed", True, True)


_TESTS = '''
import subprocess
import pytest

def _out(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout

def test_hello(entrypoint_argv):
    assert _out(entrypoint_argv) == "hello\\n"

def test_needs_a_server(entrypoint_argv):
    pytest.skip("no such server here")

@pytest.mark.functionality
@pytest.mark.xfail(reason="not asked for yet", strict=False)
def test_later(entrypoint_argv):
    assert _out(entrypoint_argv) == "later\\n"
'''


def _grade(root: Path, marker: str | None) -> CheckpointEvaluation:
    folder = _set(root, marker)
    write_problem(folder, """\
        name: p
        description: one test passes, one skips, one is expected to fail
        entry_file: main
        checkpoints:
          checkpoint_1: {version: 1, order: 1, timeout: 60}
        """, {"checkpoint_1.md": "Print hello.\n", "tests/conftest.py": CONFTEST,
              "tests/test_checkpoint_1.py": _TESTS})
    problem = load_problem(folder)
    snapshot = root / "snapshot"
    snapshot.mkdir()
    (snapshot / "main.py").write_text('print("hello")\n')
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=root / "scratch")
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], snapshot,
                            options).evaluation


@pytest.mark.sandbox
def test_a_v1_set_is_graded_as_scbench_v1_grades_it(tmp_path: Path) -> None:
    evaluation = _grade(tmp_path, "file")
    assert evaluation.semantics is HARBOR
    assert {g: (c.passed, c.total) for g, c in evaluation.counts.items()} == {Group.CORE: (1, 1)}
    assert evaluation.verdicts[PassPolicy.ALL_CASES] is True
    assert evaluation.to_scbench()["tests"] == {"checkpoint_1-Core": {"passed": ["test_hello"],
                                                                      "failed": []}}


@pytest.mark.sandbox
def test_an_older_set_is_graded_as_scbench_runner_grades_it(tmp_path: Path) -> None:
    evaluation = _grade(tmp_path, None)
    assert evaluation.semantics is RUNNER
    assert {g: (c.passed, c.total) for g, c in evaluation.counts.items()} == {
        Group.CORE: (1, 2), Group.FUNCTIONALITY: (0, 1)}
    assert evaluation.verdicts[PassPolicy.ALL_CASES] is False
