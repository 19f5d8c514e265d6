"""`benchwright export harbor`: each bundled problem as a Harbor multi-step task that Harbor's own
loader (`harbor.models.task.task.Task`, in an environment of the test's own) accepts and
`harbor lint` reports nothing about."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from benchwright.coding.problems.examples import example_names, example_problem_dir
from benchwright.harbor.export import export_problem


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("harbor")
    return [export_problem(example_problem_dir(name), out).task_dir for name in example_names()]


def test_one_step_per_checkpoint_in_order(exported: list[Path]) -> None:
    for task in exported:
        config = tomllib.loads((task / "task.toml").read_text())
        names = [step["name"] for step in config["steps"]]
        assert names == sorted(p.name for p in (task / "steps").iterdir())
        assert config["verifier"]["environment_mode"] == "separate"
        assert config["multi_step_reward_strategy"] == "mean"


def test_no_step_sees_a_later_checkpoints_tests(exported: list[Path]) -> None:
    for task in exported:
        steps = sorted(p.name for p in (task / "steps").iterdir())
        for index, step in enumerate(steps):
            names = {p.name for p in (task / "steps" / step / "tests").rglob("*")}
            assert not {f"test_{later}.py" for later in steps[index + 1:]} & names
            settings = json.loads((task / "steps" / step / "tests" / "benchwright.json")
                                  .read_text())
            assert settings["checkpoint"] == step


def test_an_existing_task_folder_is_refused(tmp_path: Path) -> None:
    from benchwright.errors import UserInputError

    export_problem(example_problem_dir("kv_server"), tmp_path)
    with pytest.raises(UserInputError, match="already exists"):
        export_problem(example_problem_dir("kv_server"), tmp_path)


LOAD = """
import sys
from harbor.models.task.task import Task
for path in sys.argv[1:]:
    task = Task(path)
    print(task.config.task.name, len(task.config.steps))
"""


@pytest.mark.sandbox
def test_harbor_loads_and_lints_every_exported_bundled_problem(exported: list[Path],
                                                              harbor_python: Path) -> None:
    python = harbor_python
    loaded = subprocess.run([str(python), "-c", LOAD, *map(str, exported)],
                            capture_output=True, text=True, check=False, timeout=600)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.split() == [x for task in exported for x in (
        f"benchwright/{task.name}", str(len(list((task / "steps").iterdir()))))]
    harbor = python.parent / "harbor"
    lint = subprocess.run([str(harbor), "lint", "--json", *map(str, exported)],
                          capture_output=True, text=True, check=False, timeout=600)
    assert (lint.returncode, json.loads(lint.stdout)) == (0, []), lint.stderr[-2000:]
