"""The collected-tests cache (`cache_base()/collections`) gains one entry per checkpoint, however
often it is graded (issue 42 point 1: only `cache prune` bounds that folder): grading the same
checkpoint again, from another scratch folder as another run would, finds its entry; a change
to what pytest reads (a test file, the problem's pytest config) makes a new one. Real gradings
in the sandbox, a private cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.examples import example_problem_dir
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import BwrapRuntime, Limits

pytestmark = pytest.mark.sandbox
CHECKPOINT = "checkpoint_2"


def _grade(problem_dir: Path, scratch_root: Path) -> None:
    problem = load_problem(problem_dir)
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=scratch_root)
    grade_checkpoint(problem, problem.checkpoints[CHECKPOINT],
                     problem_dir / "solutions" / CHECKPOINT, options)


def _entries(cache: Path) -> set[str]:
    return {p.name for p in (cache / "collections").iterdir()}


def test_a_checkpoint_graded_again_adds_no_entry_and_a_changed_one_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(cache))
    # ledger_cli has static assets, whose variables name the grading's scratch folder
    problem_dir = tmp_path / "ledger_cli"
    shutil.copytree(example_problem_dir("ledger_cli"), problem_dir)
    _grade(problem_dir, tmp_path / "run-1")
    first = _entries(cache)
    assert len(first) == 1
    for run in ("run-2", "run-3"):
        _grade(problem_dir, tmp_path / run)
    assert _entries(cache) == first

    config = problem_dir / "config.yaml"  # a marker registered: pytest's config changes
    config.write_text(config.read_text() + "markers:\n  slowish:\n    description: slow ones\n"
                      "    group: Functionality\n")
    _grade(problem_dir, tmp_path / "run-4")
    with_marker = _entries(cache)
    assert len(with_marker) == 2

    test_file = problem_dir / "tests" / "test_checkpoint_2.py"  # a test added
    test_file.write_text(test_file.read_text() + "\n\ndef test_added():\n    pass\n")
    _grade(problem_dir, tmp_path / "run-5")
    assert len(_entries(cache)) == 3 and with_marker < _entries(cache)
