"""What a test hands the submission reaches it through the jail, and nothing else (issue 37,
points 1 to 3 and 5): the `handover` fixture problem's conftest makes the entry script absolute
against pytest's working folder as newer SCBench conftests do, its tests run the program from a
folder of their own, set `HOME`, name a config file (which names a file beside it) in a variable,
start it through a shell, write to its stdin, signal it by Popen, by pid and by process group
(from pytest's process and from another), hand it a relative path in a variable and a variable
under SCBench's prefix, and make a file unreadable to it. The reference passes every test on each
runtime, a program that does nothing passes none.
Needs bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import Limits
from tests.helpers import FIXTURES
from tests.helpers.runtimes import RUNTIME_PARAMS, runtime_for

pytestmark = pytest.mark.sandbox
HANDOVER = FIXTURES / "handover"


@pytest.fixture(params=RUNTIME_PARAMS)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return runtime_for(request)


def _grade(main: Path, tmp: Path, runtime: Runtime) -> CheckpointEvaluation:
    problem = load_problem(HANDOVER)
    snapshot = tmp / "snapshot"
    snapshot.mkdir()
    shutil.copyfile(main, snapshot / "main.py")
    options = GradeOptions(runtime=runtime, limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], snapshot,
                            options).evaluation


def _failed(evaluation: CheckpointEvaluation) -> dict[str, str]:
    return {case.id: (case.message or "")[-300:] for case in evaluation.tests if not case.passed}


def test_the_reference_gets_everything_its_tests_hand_it(tmp_path: Path,
                                                         runtime: Runtime) -> None:
    evaluation = _grade(HANDOVER / "solutions" / "checkpoint_1" / "main.py", tmp_path, runtime)
    assert evaluation.grader.jailed
    assert evaluation.pytest_collected == 29
    assert _failed(evaluation) == {}


def test_a_program_that_does_nothing_passes_no_test(tmp_path: Path, runtime: Runtime) -> None:
    evaluation = _grade(HANDOVER / "broken" / "main.py", tmp_path, runtime)
    assert evaluation.pytest_collected == 29
    assert len(_failed(evaluation)) == 29


# ---- the rule, as an attacker would probe it (no sandbox needed to compute it) -------------


def _layout(tmp_path: Path) -> tuple[dict[str, object], Path, Path, Path]:
    """The grader's layout: workspace, the tests folder beside it, and the sandbox's /tmp with
    pytest's folders in it (two tests' own folders)."""
    workspace = tmp_path / "grade" / "workspace"
    workspace.mkdir(parents=True)
    tests = workspace.parent / ".evaluation_tests"
    (tests / "data" / "case").mkdir(parents=True)
    (tests / "data" / "case" / "expected.txt").write_text("answer")
    tmp = tmp_path / "tmp"
    mine, other = (tmp / "pytest-of-u" / "pytest-3" / name for name in ("test_a0", "test_b0"))
    for folder in (mine / "home", mine / "conf", other):
        folder.mkdir(parents=True)
    config = {"bwrap": "/usr/bin/bwrap", "workspace": str(workspace), "tests": str(tests),
              "readonly": [], "solution": "/envs/solution", "system": [], "launcher": [],
              "tmp": str(tmp), "env": {"HOME": str(tmp), "PATH": "/usr/bin:/bin"}}
    return config, workspace, mine, other


def _exposed(config: dict[str, object], cwd: Path, **env: str) -> list[str]:
    from benchwright.coding.grading.jail import exposed_paths

    return exposed_paths(config, ["python", "main.py"], str(cwd), {"PATH": "/usr/bin:/bin", **env})


def test_home_or_a_variable_naming_a_tests_own_folder_exposes_that_folder(
        tmp_path: Path) -> None:
    config, workspace, mine, other = _layout(tmp_path)
    assert _exposed(config, workspace, HOME=str(mine / "home")) == [str(mine)]
    assert _exposed(config, workspace, APP_CONFIG=str(mine / "conf" / "app.ini")) == [str(mine)]
    assert _exposed(config, workspace, PATH=f"{mine / 'conf'}:/usr/bin:/bin") == [str(mine)]
    assert str(other) not in _exposed(config, workspace, HOME=str(mine / "home"))


def test_what_pytest_started_with_hands_nothing_over(tmp_path: Path) -> None:
    config, workspace, _mine, _other = _layout(tmp_path)
    assert _exposed(config, workspace, HOME=str(tmp_path / "tmp")) == []


def test_no_variable_exposes_the_tests_the_root_or_every_tests_folders(tmp_path: Path) -> None:
    config, workspace, mine, _other = _layout(tmp_path)
    tests = Path(str(config["tests"]))
    (mine / "answers").symlink_to(tests / "data")
    for value in (str(tests), str(tests / "data"), str(tests / "data" / "case"), "/",
                  str(tmp_path / "tmp"), str(tmp_path / "tmp" / "pytest-of-u"),
                  str(tmp_path / "tmp" / "pytest-of-u" / "pytest-3"), str(workspace.parent),
                  str(mine / "answers"), str(mine / "answers" / "case" / "expected.txt"),
                  f"{tests}:{mine / 'answers'}"):
        assert _exposed(config, workspace, HOME=value, DATA=value) == [], value


def test_a_working_folder_inside_a_tests_own_folder_exposes_that_folder_only(
        tmp_path: Path) -> None:
    config, _workspace, mine, other = _layout(tmp_path)
    assert _exposed(config, mine / "conf") == [str(mine)]
    (other / "up").symlink_to(mine)
    assert _exposed(config, other) == [str(other)]
