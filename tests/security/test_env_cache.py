"""Environments nobody else shaped: one submission's local package must not end up in another's
environment through the cache. The attacker's `./pkg` installs a .pth that runs `os._exit(7)` at
every start of the environment's python; built under the same requirement line, it made a later
grading of a correct solution fail every test. Also: the build sees only the paths the lines name
(a link is not followed), and a cached environment whose files changed is rebuilt, not reused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from benchwright.sandbox import localpaths
from benchwright.sandbox.environments import ensure_env
from benchwright.sandbox.interpreters import resolve_python
from tests.helpers import CONFTEST, run_cli, write_problem
from tests.helpers.evil_package import write_evil_package

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]

TESTS = """\
import subprocess


def test_prints_ok(entrypoint_argv):
    done = subprocess.run(entrypoint_argv, capture_output=True, text=True)
    assert done.stdout == "ok\\n", done.stderr
"""


def _problem(root: Path) -> Path:
    return write_problem(root / "problems" / "shared", """
        name: shared
        entry_file: tool
        checkpoints:
          checkpoint_1: {version: 1, order: 1}
    """, {"tests/conftest.py": CONFTEST, "tests/test_checkpoint_1.py": TESTS})


def _submission(folder: Path, pth: str) -> Path:
    """A correct tool.py, and `./pkg` (a local package whose .pth runs `pth`) required."""
    folder.mkdir(parents=True)
    (folder / "tool.py").write_text("print('ok')\n")
    write_evil_package(folder / "pkg", "LOOT = 'nothing'\n", pth)
    (folder / "requirements.txt").write_text("./pkg\n")
    return folder


def _grade(problem: Path, workspace: Path, out: Path, cache: Path) -> dict[str, object]:
    done = run_cli("eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
                   problem.name, "--checkpoint", "checkpoint_1", "--workspace", str(workspace),
                   "--out", str(out), env={**os.environ, "BENCHWRIGHT_CACHE_DIR": str(cache)})
    assert done.returncode == 0, done.stderr[-3000:]
    evaluation: dict[str, object] = json.loads((out / "grading.json").read_text())
    return evaluation


def test_an_attackers_local_package_does_not_reach_a_later_submission(tmp_path: Path) -> None:
    problem, cache = _problem(tmp_path), tmp_path / "cache"
    attacker = _submission(tmp_path / "attacker", "import os; os._exit(7)")
    graded = _grade(problem, attacker, tmp_path / "a", cache)
    assert graded["counts"]["Core"]["passed"] == 0  # type: ignore[index]  # the .pth ran
    victim = _submission(tmp_path / "victim", "import os")  # the same line, its own package
    graded = _grade(problem, victim, tmp_path / "b", cache)
    assert graded["counts"]["Core"] == {"passed": 1, "total": 1}, graded  # type: ignore[index]
    assert graded["grader"]["solution_env"]["reused"] is False  # type: ignore[index]
    # The agent changes its own package between checkpoints: never the stale environment.
    (victim / "pkg" / "backend.py").write_text(
        (victim / "pkg" / "backend.py").read_text().replace("'nothing'", "'changed'"))
    again = _grade(problem, victim, tmp_path / "c", cache)
    assert again["grader"]["solution_env"]["key"] != graded["grader"]["solution_env"]["key"]  # type: ignore[index]


def test_the_key_covers_named_paths_through_no_link(tmp_path: Path) -> None:
    source = tmp_path / "ws"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "a.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (source / "link").symlink_to(outside)
    (source / "pkg" / "up").symlink_to("/etc")
    lines = ["./pkg", "requests==2.0", "-e ./link", f"x @ file://{source}/pkg", "../outside"]
    assert localpaths.named_paths(lines, source) == ["pkg"]
    assert localpaths.named_paths(["-e ."], source) == ["."]
    first = localpaths.digest(source, ["pkg"])
    (source / "pkg" / "a.py").write_text("x = 2\n")
    assert localpaths.digest(source, ["pkg"]) != first
    (outside / "b.py").write_text("never read\n")  # behind a link: not part of it
    assert localpaths.digest(source, ["pkg"]) == localpaths.digest(source, ["pkg"])


def test_a_cached_environment_that_changed_is_rebuilt(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    python = resolve_python(None)
    built = ensure_env("solution", python, [])
    assert ensure_env("solution", python, []).reused
    planted = built.path / "lib" / "planted.pth"
    planted.write_text("import os; os._exit(7)\n")  # whatever changed it
    rebuilt = ensure_env("solution", python, [])
    assert not rebuilt.reused and not planted.exists()
    shutil.rmtree(built.path / "bin")
    assert not ensure_env("solution", python, []).reused
    # One built before fingerprints (a line naming no local path keeps its key) is adopted.
    marker = built.path / ".benchwright-env.json"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "fingerprint": None}))
    assert ensure_env("solution", python, []).reused
    assert json.loads(marker.read_text())["fingerprint"]
    (built.path / "lib" / "planted.pth").write_text("import os; os._exit(7)\n")
    assert not ensure_env("solution", python, []).reused
