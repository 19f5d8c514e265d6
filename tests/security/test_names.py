"""A problem author writes paths where names belong: checkpoint keys, asset keys, markers.

A checkpoint's name becomes a folder of the run, an asset key a folder of the grading workspace
and a marker a line of pytest.ini; each must be refused with one line, exit 2, before anything is
deleted or written."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from benchwright.coding.problems.loader import load_problem
from benchwright.errors import ProblemConfigError
from benchwright.files.names import check_name
from tests.helpers import run_cli
from tests.helpers.probes import quick_problem, run_coding, tree_state

pytestmark = pytest.mark.sandbox


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder of the host that a run must never touch."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine\n")
    return folder


def _rename_checkpoint(problem: Path, name: str) -> None:
    config = yaml.safe_load((problem / "config.yaml").read_text())
    config["checkpoints"] = {name: config["checkpoints"]["checkpoint_1"]}
    (problem / "config.yaml").write_text(yaml.safe_dump(config))


@pytest.mark.parametrize("kind", ["absolute", "dotdot"])
def test_a_checkpoint_named_like_a_path_is_refused_and_touches_nothing(
        tmp_path: Path, victim: Path, kind: str) -> None:
    problems = tmp_path / "a" / "b" / "problems"
    problem = quick_problem(problems)
    out = tmp_path / "a" / "run"
    # Seen from the checkpoint folder's parent (a/run/quick/trial_1), ../../../victim is
    # a/victim; the spec beside it (the old code read it before deleting) is a/victim.md.
    name = str(victim) if kind == "absolute" else "../../../victim"
    if kind == "dotdot":
        victim = Path(shutil.move(victim, tmp_path / "a" / "victim"))
    Path(os.path.normpath(problem / f"{name}.md")).write_text("spec\n")
    _rename_checkpoint(problem, name)
    before = tree_state(victim)
    proc = run_coding(problems, out, "--agent", "command", "--agent-command",
                      "echo planted > planted.txt")
    assert tree_state(victim) == before
    assert proc.returncode == 2, proc.stderr
    assert "is not a name" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_checkpoint_name_with_a_newline_is_one_line_exit_2(tmp_path: Path) -> None:
    problem = quick_problem(tmp_path / "problems")
    _rename_checkpoint(problem, "checkpoint_1\nforged line")
    proc = run_coding(tmp_path / "problems", tmp_path / "run", "--agent", "oracle")
    assert proc.returncode == 2, proc.stderr
    assert "is not a name" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("edit", [
    {"static_assets": {"../../escape": {"path": "checkpoint_1.md"}}},
    {"markers": {"evil\naddopts = -p no:cacheprovider": {"description": "x",
                                                           "group": "Core"}}},
    {"markers": {"slow": {"description": "x\naddopts = -x", "group": "Core"}}},
    {"name": "../quick"},
])
def test_asset_keys_markers_and_problem_names_are_names(tmp_path: Path,
                                                         edit: dict[str, object]) -> None:
    problem = quick_problem(tmp_path / "problems")
    config = yaml.safe_load((problem / "config.yaml").read_text())
    (problem / "config.yaml").write_text(yaml.safe_dump({**config, **edit}))
    with pytest.raises(ProblemConfigError) as caught:
        load_problem(problem)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["checkpoint_1", "checkpoint_10", "code_search", "file_backup",
                                  "trajectory_api", "kv_server", "v1.2-beta", "1"])
def test_real_names_pass(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "a..b", "/abs", "a/b", "a\\b", "-x", ".hidden",
                                  "a\nb", "a\0b", "tab\there", "a b", "é", "x" * 129,
                                  "checkpoint_1\n"])
def test_paths_and_odd_strings_are_not_names(name: str) -> None:
    with pytest.raises(ValueError, match="not a name"):
        check_name(name)


def _suite_file(tmp_path: Path, task_id: object) -> Path:
    from benchwright.web.local_suite.catalog import DATASET_PATH

    task = json.loads(Path(DATASET_PATH).read_text())[0]
    path = tmp_path / "suite.json"
    path.write_text(json.dumps([{**task, "task_id": task_id}]))
    return path


@pytest.mark.parametrize("task_id", ["../../x", "12", -1, True, 1.5])
def test_a_web_task_id_is_a_non_negative_integer(tmp_path: Path, task_id: object) -> None:
    from benchwright.errors import UserInputError
    from benchwright.web.evaluation.tasks import load_task_file

    with pytest.raises(UserInputError) as caught:
        load_task_file(_suite_file(tmp_path, task_id))
    assert "\n" not in str(caught.value)


def test_a_suite_file_with_a_path_for_a_task_id_is_one_line_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("run", "web", "--suite", str(_suite_file(tmp_path, "../../x")),
                   "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "task_id" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
