"""One checkpoint laid out for plain pytest, outside any sandbox, for the grading benches
(grade_overhead.py, grader_pytest_start.py): the reference solution as the workspace, the tests
and assets as the grader copies them, the cached test and solution environments, and an
environment with the assets' variables and the solution first on PATH.
Imported by those scripts (bench/ is their folder on sys.path), never run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from benchwright.coding.grading import workspace as ws
from benchwright.coding.grading.grader import TEST_ENV_BASE, wants_anyio
from benchwright.coding.problems.config import CheckpointConfig, ProblemConfig
from benchwright.coding.problems.loader import get_checkpoint, load_problem
from benchwright.sandbox.environments import ensure_env, parse_requirements
from benchwright.sandbox.interpreters import resolve_python


class Layout(NamedTuple):
    """What a bench needs to start the grader's pytest on one checkpoint."""

    problem: ProblemConfig
    checkpoint: CheckpointConfig
    python: list[str]
    """The test environment's `python -P -m pytest`, arguments to follow."""
    workspace: Path
    env: dict[str, str]
    anyio: bool
    """Whether the grader would load anyio's plugin here (`wants_anyio`)."""


def lay_out(problem_dir: Path, checkpoint: str, scratch: Path) -> Layout:
    """The checkpoint laid out under `scratch` as the grader lays it out: the workspace, the tests
    beside it and the harness's pytest.ini (`pytest_args(..., scratch=scratch)` names them)."""
    problem = load_problem(problem_dir)
    config = get_checkpoint(problem, checkpoint)
    workspace = scratch / "workspace"
    ws.copy_snapshot(problem.solution_dir(checkpoint), workspace)
    tests = ws.copy_tests(problem, config, scratch)
    asset_env = ws.copy_assets(problem, tests)
    ws.write_pytest_ini(problem, scratch)
    python = resolve_python(None)
    test_env = ensure_env("tests", python, [*TEST_ENV_BASE, *problem.test_dependencies])
    req = workspace / "requirements.txt"
    solution = ensure_env("solution", python,
                          parse_requirements(req.read_text() if req.is_file() else ""))
    env = {**os.environ, **asset_env, "PATH": f"{solution.path}/bin:{os.environ['PATH']}"}
    return Layout(problem, config, [str(test_env.python), "-P", "-m", "pytest"], workspace, env,
                  wants_anyio(problem, config, tests))
