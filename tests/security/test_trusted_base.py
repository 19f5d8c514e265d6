"""The grader's trusted base is fixed and small (issue 36, points 1 and 5).

Written as an attacker would: a submission that implements nothing (it prints one fixed line) and
plants what pytest or Python would read at start-up if it looked in the workspace: a pytest config
under every name pytest 9 searches for (`pytest.toml` and `.pytest.toml` came first, before the
harness's own pytest.ini), whose `addopts` adds a folder of the submission's whose conftest.py
turns every test into a pass, or deselects the failing test; a conftest.py, sitecustomize.py,
usercustomize.py and a .pth file in the workspace; and programs named after those the tests call
(`diff`, `git`) as console scripts of the submission's environment, which was first on pytest's
PATH; a module a test imports lazily, planted where the problem's relative PYTHONPATH entry found
it (the workspace). Each scores 0, and the test deselected is still there and failed. Needs
bubblewrap.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from benchwright.coding.grading.grader import GradeOptions, GradeOutput, grade_checkpoint
from benchwright.coding.problems.examples import example_problem_dir
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers import FIXTURES
from tests.helpers.evil_package import write_evil_package
from tests.helpers.problems import CONFTEST, write_problem

pytestmark = pytest.mark.sandbox
NULL = 'print("not implemented")\n'
MARK = "PLANTED-" + "CODE-RAN"  # printed by planted code only: never one word in our files
# Every test a pass (pytest's hooks for the whole session: a conftest's per-test hooks would only
# reach the tests of its own folder), and the code's presence said on pytest's output.
FORCE_PASS = f'''
import sys

print("{MARK}", file=sys.stderr)


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        item.runtest = lambda: None


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("{MARK}")
'''
PROBLEMS = {"ledger_cli": example_problem_dir("ledger_cli"), "casefiles": FIXTURES / "casefiles"}


def _grade(problem_dir: Path, files: dict[str, str], tmp: Path, main: str = NULL) -> GradeOutput:
    problem = load_problem(problem_dir)
    snapshot = tmp / "snapshot"
    for name, text in {f"{problem.entry_file}.py": main, **files}.items():
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).write_text(textwrap.dedent(text))
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], snapshot, options)


def _passed(output: GradeOutput) -> int:
    return sum(c.passed for c in output.evaluation.counts.values())


def _assert_nothing_ran(output: GradeOutput) -> None:
    evaluation = output.evaluation
    assert evaluation.pytest_collected > 0, output.stdout[-2000:]
    assert _passed(output) == 0, [c.id for c in evaluation.tests if c.passed]
    assert MARK not in output.stdout + output.stderr


# The config each name takes, with `addopts` adding the submission's folder `evil/`.
CONFIGS = {
    "pytest.toml": '[pytest]\naddopts = ["evil"]\n',
    ".pytest.toml": '[pytest]\naddopts = ["evil"]\n',
    "pytest.ini": "[pytest]\naddopts = evil\n",
    ".pytest.ini": "[pytest]\naddopts = evil\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "evil"\n',
    "tox.ini": "[pytest]\naddopts = evil\n",
    "setup.cfg": "[tool:pytest]\naddopts = evil\n",
}


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("config", ["pytest.toml", ".pytest.toml"])
def test_a_planted_config_and_conftest_score_nothing(problem: str, config: str,
                                                     tmp_path: Path) -> None:
    output = _grade(PROBLEMS[problem], {config: CONFIGS[config],
                                        "evil/conftest.py": FORCE_PASS}, tmp_path)
    _assert_nothing_ran(output)


def test_no_config_name_pytest_searches_for_is_read(tmp_path: Path) -> None:
    files = {**CONFIGS, "evil/conftest.py": FORCE_PASS, "conftest.py": FORCE_PASS,
             "sitecustomize.py": FORCE_PASS, "usercustomize.py": FORCE_PASS,
             "evil.pth": f"import sys; print({MARK!r}, file=sys.stderr)\n",
             "__pycache__/conftest.cpython-312.pyc": "not bytecode"}
    _assert_nothing_ran(_grade(PROBLEMS["ledger_cli"], files, tmp_path))


def test_a_deselected_test_still_counts_as_failed(tmp_path: Path) -> None:
    problem = PROBLEMS["ledger_cli"]
    tests = (problem / "tests" / "test_checkpoint_1.py").read_text()
    name = re.findall(r"^def (test_\w+)\(", tests, re.M)[0]
    output = _grade(problem, {".pytest.toml": f'[pytest]\naddopts = ["-k", "not {name}"]\n'},
                    tmp_path)
    outcomes = {case.id: case.outcome for case in output.evaluation.tests}
    assert outcomes.get(name) == "failed", sorted(outcomes)
    assert _passed(output) == 0


# Console scripts of the submission's environment named after the programs the tests call: each
# says "no difference" (and gives git's hash of the expected line), as a forger would.
FORGERS = '''
import sys


def agree():
    print("PLANTED-" + "CODE-RAN", file=sys.stderr)
    if "hash-object" in sys.argv:
        print("4ae3e2e5b1b7c3f6c8c8a4d6a0b0c1ad33d8a0cb")
    sys.exit(0)
'''
SCRIPTS = "[console_scripts]\ndiff = evilforgers:agree\ngit = evilforgers:agree\n"


def test_the_submissions_programs_never_stand_in_for_the_tests(tmp_path: Path) -> None:
    package = write_evil_package(tmp_path / "snapshot" / "forgers", 'LOOT = "none"\n', extra={
        "evilforgers.py": FORGERS, "evilpkg-0.1.dist-info/entry_points.txt": SCRIPTS})
    output = _grade(FIXTURES / "programs", {
        "requirements.txt": f"evilpkg @ file://{package}\n"}, tmp_path)
    assert output.evaluation.grader.solution_env.error is None
    assert "evilpkg" in str(output.evaluation.grader.solution_env.packages)
    _assert_nothing_ran(output)


def test_the_reference_still_passes_with_the_systems_programs(tmp_path: Path) -> None:
    solution = FIXTURES / "programs" / "solutions" / "checkpoint_1" / "main.py"
    output = _grade(FIXTURES / "programs", {}, tmp_path, main=solution.read_text())
    assert _passed(output) == output.evaluation.pytest_collected == 2


# A helper the tests import lazily, planted by the submission where Python would find it first
# if the problem's relative PYTHONPATH entry named the workspace (pytest's working folder).
PLANTED_DEEPDIFF = f'''
import sys

print("{MARK}", file=sys.stderr)


def DeepDiff(*args, **kwargs):
    return {{}}
'''
PATH_PROBLEM = """
    name: pathprobe
    entry_file: main
    checkpoints:
      checkpoint_1: {version: 1, order: 1, env: {PYTHONPATH: "."}}
"""
LAZY_IMPORT = """
    import subprocess


    def test_answer(entrypoint_argv):
        out = subprocess.run(entrypoint_argv, capture_output=True, text=True).stdout
        from deepdiff import DeepDiff  # lazily, as some tests' helpers do

        assert not DeepDiff({"out": "42"}, {"out": out.strip()})
"""


def test_a_relative_pythonpath_never_puts_the_workspace_on_pytests_path(tmp_path: Path) -> None:
    problem = write_problem(tmp_path / "pathprobe", PATH_PROBLEM, {
        "tests/conftest.py": CONFTEST, "tests/test_checkpoint_1.py": LAZY_IMPORT})
    files = {"deepdiff.py": PLANTED_DEEPDIFF}
    _assert_nothing_ran(_grade(problem, files, tmp_path))
