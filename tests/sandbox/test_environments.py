"""Environments: built with uv from requirements, cached by content hash, never re-installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.errors import EnvironmentBuildError, PrerequisiteError
from benchwright.sandbox.bwrap import get_runtime
from benchwright.sandbox.environments import ensure_env, env_key, parse_requirements
from benchwright.sandbox.interpreters import resolve_python
from tests.helpers import CONFTEST, write_problem

DEP_TEST = """
import subprocess

def test_uses_its_dependency(entrypoint_argv):
    out = subprocess.run(entrypoint_argv, capture_output=True, text=True)
    assert out.stdout.strip() == "1.16.0", out.stderr
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_parse_requirements_drops_comments_and_blanks() -> None:
    text = "# pinned\nrequests==2.32.3  # http\n\n  six\n"
    assert parse_requirements(text) == ["requests==2.32.3", "six"]


def test_key_depends_on_interpreter_and_requirements() -> None:
    python = resolve_python(None)
    assert env_key(python, ["six"]) == env_key(python, ["six"])
    assert env_key(python, ["six"]) != env_key(python, ["six==1.16.0"])


def test_interpreter_resolution() -> None:
    current = ".".join(map(str, sys.version_info[:2]))
    assert resolve_python(current).minor == current
    assert resolve_python(sys.executable).minor == current
    with pytest.raises(PrerequisiteError, match=r"no Python 2\.1 interpreter"):
        resolve_python("2.1")


@pytest.mark.sandbox
def test_environments_come_compiled_a_submissions_without_its_python_starting(
        cache: Path) -> None:
    """Environments are read-only where they run: their bytecode is made once, at build. Ours
    by uv; a submission's by the base interpreter without `site` after the install (its own
    python never starts at build, as with pip), else each jailed start recompiled every import
    (a FastAPI server of execution_server took 3-4 s to start, past its tests' 5 s)."""
    python = resolve_python(None)
    ours = ensure_env("tests", python, ["six==1.16.0"])
    assert list(ours.path.glob("lib/python*/site-packages/__pycache__/six.*.pyc"))
    source = cache.parent / "ws"
    source.mkdir()
    theirs = ensure_env("solution", python, ["six==1.16.0"], source=source)
    assert list(theirs.path.glob("lib/python*/site-packages/__pycache__/six.*.pyc"))
    assert theirs.key != ensure_env("solution", python, ["six==1.16.0"]).key


@pytest.mark.sandbox  # environments are built in the sandbox
def test_built_once_then_reused(cache: Path) -> None:
    python = resolve_python(None)
    first = ensure_env("solution", python, ["six==1.16.0"])
    assert not first.reused and "six==1.16.0" in first.packages
    marker_mtime = (first.path / ".benchwright-env.json").stat().st_mtime_ns
    again = ensure_env("solution", python, ["six==1.16.0"])
    assert again.reused and again.path == first.path
    assert (first.path / ".benchwright-env.json").stat().st_mtime_ns == marker_mtime


@pytest.mark.sandbox  # environments are built in the sandbox
def test_half_built_environment_is_rebuilt(cache: Path) -> None:
    python = resolve_python(None)
    built = ensure_env("solution", python, [])
    (built.path / ".benchwright-env.json").unlink()  # as if killed before it finished
    assert not ensure_env("solution", python, []).reused


@pytest.mark.sandbox  # environments are built in the sandbox
def test_uninstallable_requirement_fails_cleanly(cache: Path) -> None:
    with pytest.raises(EnvironmentBuildError, match="uv pip failed"):
        ensure_env("solution", resolve_python(None), ["benchwright-no-such-package-xyz==0.0.1"])


@pytest.mark.sandbox
def test_grading_uses_the_solution_requirements_and_caches_both_envs(
    cache: Path, tmp_path: Path
) -> None:
    problem = load_problem(write_problem(tmp_path / "dep", """
        name: dep
        entry_file: tool
        checkpoints: {checkpoint_1: {version: 1, order: 1}}
    """, {"tests/conftest.py": CONFTEST, "tests/test_checkpoint_1.py": DEP_TEST,
          "solutions/checkpoint_1/tool.py": "import six\nprint(six.__version__)\n",
          "solutions/checkpoint_1/requirements.txt": "six==1.16.0\n"}))
    checkpoint = problem.checkpoints["checkpoint_1"]
    snapshot = problem.solution_dir("checkpoint_1")
    options = GradeOptions(runtime=get_runtime())
    first = grade_checkpoint(problem, checkpoint, snapshot, options).evaluation
    assert first.verdicts["all-cases"], first.tests
    assert not first.grader.solution_env.reused
    second = grade_checkpoint(problem, checkpoint, snapshot, options).evaluation
    assert second.grader.test_env.reused and second.grader.solution_env.reused
    assert second.verdicts["all-cases"]
    (snapshot / "requirements.txt").write_text("benchwright-no-such-package-xyz==0.0.1\n")
    broken = grade_checkpoint(problem, checkpoint, snapshot, options).evaluation
    assert broken.grader.solution_env.error is not None
    assert broken.status == "completed" and not broken.verdicts["all-cases"]
