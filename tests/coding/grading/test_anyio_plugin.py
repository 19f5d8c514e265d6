"""anyio's pytest plugin loads only for a problem whose tests name anyio (`wants_anyio`,
`workspace.names_anyio`): every other grading passes `-p no:anyio`, in the argv that runs and in
the one recorded. A problem's tests folder is read as an attacker wrote it: links and FIFOs
are never followed, bytes that are not UTF-8 are fine, and past the read budget the plugin
loads as it always did."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchwright.coding.grading import workspace as ws
from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus
from benchwright.coding.grading.grader import (
    GradeOptions,
    grade_checkpoint,
    graded_pytest_args,
    wants_anyio,
)
from benchwright.coding.problems.config import ProblemConfig
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers import CONFTEST, write_problem

CONFIG = """
    name: {name}
    entry_file: tool
    checkpoints: {{checkpoint_1: {{version: 1}}}}
"""
# Not the word itself: the point of this problem is that its tests never name the plugin.
PLAIN_TEST = """
    import subprocess
    import sys

    NAME = "any" + "io"

    def test_pytest_ran_without_the_plugin(entrypoint_argv):
        at = sys.argv.index(f"no:{NAME}")
        assert sys.argv[at - 1] == "-p"
        assert f"{NAME}.pytest_plugin" not in sys.modules
        out = subprocess.run(entrypoint_argv, capture_output=True, text=True).stdout
        assert out.strip() == "1"
"""
ASYNC_CONFTEST = CONFTEST + '''
@pytest.fixture
def anyio_backend():
    return "asyncio"
'''
ASYNC_TEST = """
    import subprocess

    import pytest

    @pytest.mark.anyio
    async def test_prints_one(entrypoint_argv):
        out = subprocess.run(entrypoint_argv, capture_output=True, text=True).stdout
        assert out.strip() == "1"
"""


def _problem(root: Path, name: str, conftest: str, test: str) -> ProblemConfig:
    return load_problem(write_problem(root / name, CONFIG.format(name=name), {
        "tests/conftest.py": conftest, "tests/test_checkpoint_1.py": test,
        "checkpoint_1.md": "Print 1.\n", "solutions/checkpoint_1/tool.py": "print(1)\n"}))


def _grade(problem: ProblemConfig, tmp: Path) -> CheckpointEvaluation:
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"],
                            problem.solution_dir("checkpoint_1"), options).evaluation


def _passed(evaluation: CheckpointEvaluation) -> None:
    assert evaluation.status is GradeStatus.COMPLETED, evaluation.infrastructure_reason
    assert evaluation.pytest_exit_code == 0
    assert [case.outcome for case in evaluation.tests] == ["passed"]


def _flag(args: list[str]) -> bool:
    return any(args[i:i + 2] == ["-p", "no:anyio"] for i in range(len(args)))


@pytest.mark.sandbox
def test_a_problem_without_anyio_runs_and_records_no_anyio(tmp_path: Path) -> None:
    problem = _problem(tmp_path, "plain", CONFTEST, PLAIN_TEST)
    evaluation = _grade(problem, tmp_path)
    _passed(evaluation)  # the test itself saw the flag in pytest's argv, and no plugin loaded
    assert _flag(evaluation.grader.pytest_args)


@pytest.mark.sandbox
def test_an_anyio_async_test_grades_as_before(tmp_path: Path) -> None:
    problem = _problem(tmp_path, "async_tests", ASYNC_CONFTEST, ASYNC_TEST)
    evaluation = _grade(problem, tmp_path)
    _passed(evaluation)  # without the plugin pytest fails an async test it cannot run
    assert not _flag(evaluation.grader.pytest_args)


def test_the_flag_follows_the_decision(tmp_path: Path) -> None:
    problem = _problem(tmp_path, "plain", CONFTEST, PLAIN_TEST)
    checkpoint = problem.checkpoints["checkpoint_1"]
    off = graded_pytest_args(problem, checkpoint, Path("r.json"), anyio=False, scratch=Path(".."))
    on = graded_pytest_args(problem, checkpoint, Path("r.json"), anyio=True, scratch=Path(".."))
    assert _flag(off) and not _flag(on)
    at = on.index("no:cacheprovider") + 1
    assert off == [*on[:at], "-p", "no:anyio", *on[at:]]


def test_the_checkpoints_variables_can_ask_for_the_plugin(tmp_path: Path) -> None:
    problem = _problem(tmp_path, "plain", CONFTEST, PLAIN_TEST)
    checkpoint = problem.checkpoints["checkpoint_1"]
    tests = problem.tests_dir
    assert not wants_anyio(problem, checkpoint, tests)
    asked = checkpoint.model_copy(update={"env": {"PYTEST_PLUGINS": "anyio.pytest_plugin"}})
    assert wants_anyio(problem, asked, tests)


def _hostile_tests(tmp_path: Path) -> Path:
    """A tests folder whose only mentions of anyio are behind links, a FIFO or a non-Python file."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("import anyio\npytestmark = pytest.mark.anyio\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_bytes(b"# \xff\xfe not UTF-8\nimport pytest\n")
    (tests / "test_checkpoint_1.py").write_text("def test_one():\n    pass\n")
    (tests / "test_checkpoint_2.py").symlink_to(outside / "evil.py")
    (tests / "helpers").symlink_to(outside, target_is_directory=True)
    (tests / "data").mkdir()
    (tests / "data" / "cases.json").write_text('{"library": "anyio"}')
    (tests / "data" / "conftest.py").symlink_to("../../outside/evil.py")
    os.mkfifo(tests / "test_fifo.py")  # opened, it would hang a reader without O_NONBLOCK
    return tests


def test_links_fifos_and_other_files_are_not_read(tmp_path: Path) -> None:
    tests = _hostile_tests(tmp_path)
    assert not ws.names_anyio(tests)
    (tests / "data" / "helpers.py").write_bytes(b"\x80\x81 import anyio\n")
    assert ws.names_anyio(tests)  # a real file names it, undecodable bytes around it or not


def test_the_copy_pytest_sees_is_what_counts(tmp_path: Path) -> None:
    """The decision is made on the tests as laid out for pytest: another checkpoint's test file
    is not there, and a link inside the problem was copied as the file it leads to (which
    pytest imports), so that file's text counts."""
    problem = _problem(tmp_path, "plain", CONFTEST, PLAIN_TEST)
    (problem.tests_dir / "test_checkpoint_2.py").write_text("import anyio\n")
    first = problem.checkpoints["checkpoint_1"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert not wants_anyio(problem, first, ws.copy_tests(problem, first, tmp_path / "a"))
    (problem.path / "shared.py").write_text("import anyio\n")
    (problem.tests_dir / "helpers.py").symlink_to("../shared.py")
    assert wants_anyio(problem, first, ws.copy_tests(problem, first, tmp_path / "b"))


def test_past_the_budget_the_plugin_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_big.py").write_text("x = 1\n" * 100)
    monkeypatch.setattr(ws, "MAX_SCAN_BYTES", 599)
    assert ws.names_anyio(tests)  # 600 bytes unread past the budget: not known, so loaded
    monkeypatch.setattr(ws, "MAX_SCAN_BYTES", 600)
    assert not ws.names_anyio(tests)
