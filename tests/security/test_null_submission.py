"""A submission that implements nothing never scores, whatever it plants (issue 36, point 8).

Generative: a null entry file (it prints a fixed line) combined with every file name pytest 8/9
or CPython reads at start-up, console scripts named after the programs tests run, and links to
every file of the tests folder (tests.helpers.null_submission), one channel at a time and all
together, on the bundled problems and on SCBench-style case-file problems (one whose tests read
the output file back, in Python and with `diff`). Each grading must score 0 passed tests. The
reference solution with every plant beside it still scores in full: the plants change nothing.
Needs bubblewrap.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.examples import example_problem_dir
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from benchwright.sandbox.interpreters import resolve_python
from tests.helpers import FIXTURES
from tests.helpers.null_submission import CHANNELS, CONFIGS, answers_for, null_program, plant

pytestmark = pytest.mark.sandbox
OUTFILES = FIXTURES / "outfiles"
CASEFILES = FIXTURES / "casefiles"
EVERY = (*CHANNELS, "links")
# One at a time: each config file alone (pytest reads only the first it finds), then the rest.
SINGLE = (*(f"config:{name}" for name in CONFIGS), *EVERY[1:])


def _grade(problem_dir: Path, checkpoint: str, tmp: Path, channels: tuple[str, ...],
           entry: str | None = None) -> CheckpointEvaluation:
    problem = load_problem(problem_dir)
    snapshot = tmp / "snapshot"
    snapshot.mkdir()
    answers = answers_for(problem.tests_dir, checkpoint) if problem_dir == OUTFILES else None
    source = null_program(answers if "links" in channels else None) if entry is None else entry
    (snapshot / f"{problem.entry_file}.py").write_text(source)
    plant(snapshot, channels, problem.tests_dir, resolve_python(None).executable)
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints[checkpoint], snapshot,
                            options).evaluation


def _passed(evaluation: CheckpointEvaluation) -> list[str]:
    return [case.id for case in evaluation.tests if case.passed]


def _scores_nothing(evaluation: CheckpointEvaluation) -> None:
    # Graded to the end: a plant that made grading an infrastructure error would take a failing
    # checkpoint out of the scores, which is a forgery too.
    assert evaluation.status is GradeStatus.COMPLETED, evaluation.infrastructure_reason
    assert evaluation.tests
    assert _passed(evaluation) == []


@pytest.mark.parametrize("channel", SINGLE)
def test_one_channel_at_a_time_scores_nothing(channel: str, tmp_path: Path) -> None:
    _scores_nothing(_grade(OUTFILES, "checkpoint_1", tmp_path, (channel,)))


@pytest.mark.parametrize(("problem_dir", "checkpoint"), [
    (OUTFILES, "checkpoint_1"), (CASEFILES, "checkpoint_2"),
    (example_problem_dir("kv_server"), "checkpoint_1"),
    (example_problem_dir("ledger_cli"), "checkpoint_1"),
], ids=["outfiles", "casefiles", "kv_server", "ledger_cli"])
def test_every_channel_together_scores_nothing(problem_dir: Path, checkpoint: str,
                                               tmp_path: Path) -> None:
    _scores_nothing(_grade(problem_dir, checkpoint, tmp_path, EVERY))


def test_the_reference_with_every_plant_beside_it_scores_in_full(tmp_path: Path) -> None:
    reference = OUTFILES / "solutions" / "checkpoint_1" / "main.py"
    evaluation = _grade(OUTFILES, "checkpoint_1", tmp_path, EVERY, reference.read_text())
    assert evaluation.pytest_exit_code == 0, [c.message for c in evaluation.tests]
    assert len(_passed(evaluation)) == evaluation.pytest_collected == 4


def test_the_plants_are_what_the_docs_list(tmp_path: Path) -> None:
    # The channels planted here are the rows of docs/security.md's threat model that concern
    # files: a channel added there must be planted here too.
    workspace = tmp_path / "w"
    workspace.mkdir()
    plant(workspace, EVERY, OUTFILES / "tests", None)
    names = {p.name for p in workspace.iterdir()}
    for name in ("pytest.toml", ".pytest.toml", "pytest.ini", "conftest.py", "sitecustomize.py",
                 "usercustomize.py", "forge_bw.pth", "requirements.txt", "diff"):
        assert name in names
    assert any(p.is_symlink() for p in workspace.iterdir())
    shutil.rmtree(workspace)
