"""Lay out a grading scratch folder: the snapshot as the workspace, and beside it (never inside)
the tests, their assets and the harness's pytest.ini, which the submission never wrote."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from benchwright.coding.grading.pytest_report import BUILTIN_MARKERS
from benchwright.coding.problems.config import CheckpointConfig, ProblemConfig
from benchwright.errors import ProblemConfigError
from benchwright.files.nofollow import TreeWalk, copy_tree, open_regular, read_fd, remove_tree

TESTS_DIR = ".evaluation_tests"
"""The tests' folder, beside the workspace in the scratch folder (node ids start with it)."""
PYTEST_INI = "config/pytest.ini"
"""The harness's pytest config, in the scratch folder: the only one pytest reads (`-c`)."""
# Never graded: caches, virtualenvs, and anything that could stand in for the real tests.
_IGNORED = frozenset(("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv",
                      "venv"))
# No longer special in the workspace (pytest reads neither there): dropped all the same, so the
# workspace holds nothing named like the harness's files.
_PLANTED = (TESTS_DIR, "pytest.ini")
# How much of the tests' Python files `names_anyio` reads in all before it answers yes unread.
MAX_SCAN_BYTES = 16 << 20


def copy_snapshot(snapshot: Path, workspace: Path) -> None:
    """Copy the snapshot into a fresh workspace, dropping files that could subvert grading.

    Links are copied as links, never followed; FIFOs, sockets and devices are left out."""
    workspace.parent.mkdir(parents=True, exist_ok=True)
    copy_tree(snapshot, workspace, prune=lambda rel: rel.rpartition("/")[2] in _IGNORED)
    for name in _PLANTED:
        target = workspace / name
        if target.is_dir() and not target.is_symlink():
            remove_tree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()


def test_files_for(problem: ProblemConfig, checkpoint: CheckpointConfig) -> list[str]:
    """The checkpoint test files that run at `checkpoint`, in checkpoint order."""
    if not checkpoint.include_prior_tests:
        return [f"test_{checkpoint.name}.py"]
    return [f"test_{c.name}.py" for c in problem.checkpoints_through(checkpoint.name)]


def check_tests_exist(problem: ProblemConfig, checkpoint: CheckpointConfig) -> None:
    """Raise a clear error when the tests folder or the checkpoint's test file is missing."""
    own = problem.tests_dir / f"test_{checkpoint.name}.py"
    if not problem.tests_dir.is_dir():
        raise ProblemConfigError("the problem has no tests/ folder", path=problem.path,
                                 hint="add tests/conftest.py and tests/test_checkpoint_N.py")
    if not own.is_file():
        raise ProblemConfigError(f"no test file for {checkpoint.name}", path=own,
                                 hint=f"add {own.name} to the problem's tests/ folder")


def copy_tests(problem: ProblemConfig, checkpoint: CheckpointConfig, scratch: Path) -> Path:
    """Copy conftest, helpers, data folders and the selected checkpoint test files to
    `scratch/.evaluation_tests` (beside the workspace, not in it); return that folder.

    Nothing of a later checkpoint is copied: no file or folder named after one
    (`checkpoint_3`, `checkpoint_3_cases.json`, `checkpoint_3.yaml`), anywhere in the tests."""
    wanted = set(test_files_for(problem, checkpoint))
    later = later_checkpoints(problem, checkpoint)
    target = scratch / TESTS_DIR
    target.mkdir()
    for item in sorted(problem.tests_dir.iterdir()):
        if _names_later(item.name, later):
            continue
        if item.is_dir() and item.name != "__pycache__":
            shutil.copytree(item, target / item.name, ignore=_ignore_later(later))
        elif item.is_file() and (not _is_checkpoint_test(item.name) or item.name in wanted):
            shutil.copy2(item, target / item.name)
    return target


def later_checkpoints(problem: ProblemConfig, checkpoint: CheckpointConfig) -> frozenset[str]:
    """The names of the checkpoints that come after `checkpoint`."""
    earlier = {c.name for c in problem.checkpoints_through(checkpoint.name)}
    return frozenset(c.name for c in problem.ordered_checkpoints() if c.name not in earlier)


def _names_later(name: str, later: frozenset[str]) -> bool:
    """Whether a file or folder name belongs to a later checkpoint: the name itself, or the name
    followed by `_`, `-` or `.` (`checkpoint_1` never claims `checkpoint_10`)."""
    return any(name == c or name.startswith((f"{c}_", f"{c}-", f"{c}.")) for c in later)


def _ignore_later(later: frozenset[str]) -> Callable[[str, list[str]], set[str]]:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _IGNORED or _names_later(n, later)}

    return ignore


def _is_checkpoint_test(name: str) -> bool:
    return name.startswith("test_") and name.endswith(".py")


def copy_assets(problem: ProblemConfig, tests_dir: Path) -> dict[str, str]:
    """Copy static assets to `.evaluation_tests/assets/<key>`; return SCBench's env vars, as
    absolute paths (the tests folder is no longer under pytest's working folder)."""
    if not problem.static_assets:
        return {}
    assets = tests_dir / "assets"
    assets.mkdir(exist_ok=True)
    env = {"SCBENCH_ASSETS_DIR": str(assets)}
    for key, source in asset_sources(problem).items():
        copy_asset(source, assets, key)
        env[f"SCBENCH_ASSET_{key.upper()}"] = str(assets / key)
    return env


def asset_sources(problem: ProblemConfig) -> dict[str, Path]:
    """Each static asset's file or folder in the problem, or an error naming the missing one."""
    sources = {key: problem.path / asset.path for key, asset in problem.static_assets.items()}
    for key, source in sources.items():
        if not source.exists():
            raise ProblemConfigError(f"static asset {key!r} not found", path=source,
                                     hint="fix static_assets in config.yaml")
    return sources


def copy_asset(source: Path, root: Path, rel: str) -> None:
    """Copy a static asset (a folder or a file) to `root/rel`, replacing what is there.

    The folders on the way are made real folders: a link (or file) an agent left in their
    place is removed, never followed, so the copy cannot land outside `root`. The source is
    the problem's: its links were checked at load to stay inside the problem folder."""
    target = _real_folders(root, Path(rel).parts[:-1]) / Path(rel).name
    _remove(target)
    if source.is_dir():
        shutil.copytree(source, target)
    elif source.is_file():
        shutil.copy2(source, target)


def _real_folders(root: Path, parts: tuple[str, ...]) -> Path:
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            _remove(current)
        current.mkdir(exist_ok=True)
    return current


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        remove_tree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()


def write_pytest_ini(problem: ProblemConfig, scratch: Path) -> Path:
    """The pytest.ini SCBench writes (testpaths and every marker registered), at
    `scratch/PYTEST_INI`, where pytest reads it through `-c`; return its path."""
    lines = ["[pytest]", "testpaths = tests", "markers ="]
    lines += [f"    {name}: {desc}" for name, (desc, _group) in BUILTIN_MARKERS.items()]
    lines += [f"    {name}: {marker.description}" for name, marker in problem.markers.items()
              if name not in BUILTIN_MARKERS]
    path = scratch / PYTEST_INI
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    return path


def names_anyio(tests_dir: Path) -> bool:
    """Whether a Python file of the laid-out tests names anyio (`pytest.mark.anyio`, the
    `anyio_backend` fixture, `import anyio`): only then does pytest load anyio's plugin, which
    the tests' environment has (httpx needs anyio) and which costs a third of pytest's start.

    The files are the problem's, read as hostile: links and special files are never followed,
    bytes are searched undecoded, and past MAX_SCAN_BYTES in all the answer is yes (the plugin
    loads, as it always did). Only `.py` files count: nothing else can load a pytest plugin."""
    budget = MAX_SCAN_BYTES
    for entry in TreeWalk(tests_dir):
        fd = open_regular(entry) if entry.kind == "file" and entry.name.endswith(".py") else None
        if fd is None:
            continue
        try:
            data = read_fd(fd, budget + 1)
        finally:
            os.close(fd)
        budget -= len(data)
        if b"anyio" in data or budget < 0:
            return True
    return False
