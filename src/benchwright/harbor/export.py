"""`benchwright export harbor PROBLEM_DIR --out DIR`: an SCBench-format problem written as a
Harbor multi-step task, one step per checkpoint (docs/harbor.md).

The task folder: `task.toml` (the steps in checkpoint order, each gated by `min_reward = 1.0` on
`reward` as a failed checkpoint ends benchwright's chain, `artifacts = ["/app"]`, the verifier in
a separate container, `multi_step_reward_strategy = "mean"`), `environment/Dockerfile` (FROM
a base image with Python, plus the verifier's environment at benchwright's pytest pins), and per
step `instruction.md` (the rendered spec), `workdir/` (the static assets where the agent finds
them), `tests/` (the checkpoint's tests laid out as benchwright's grader lays them out, its
pytest.ini, `benchwright.json`, our verifier script and `test.sh`) and `solution/` (`solve.sh`
and the reference snapshot). Nothing of a later checkpoint enters a step's tests.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from benchwright.coding.grading import workspace as ws
from benchwright.coding.grading.grader import TEST_ENV_BASE
from benchwright.coding.problems.config import CheckpointConfig, ProblemConfig
from benchwright.coding.problems.loader import load_problem, require_tests
from benchwright.errors import UserInputError
from benchwright.files.nofollow import copy_tree

DEFAULT_BASE_IMAGE = "python:3.12-slim-bookworm"
"""The image the exported Dockerfile starts FROM unless `--base-image` says otherwise: any image
with `python3 -m venv` works."""
TASK_ORG = "benchwright"
VERIFIER_ENV = "/opt/benchwright-verifier"
VERIFIER_SCRIPT = "benchwright_verify.py"
SETTINGS = "benchwright.json"
AGENT_TIMEOUT_S = 3600.0
VERIFIER_TIMEOUT_S = 600.0


class HarborExport(BaseModel):
    """What `export harbor` wrote."""

    task_dir: Path
    """The Harbor task folder."""
    task_name: str
    """Its `[task] name` ("benchwright/<problem>")."""
    steps: list[str]
    """The steps, one per checkpoint, in order."""
    base_image: str
    """The image its Dockerfile starts FROM."""


def export_problem(problem_dir: Path, out: Path, base_image: str = DEFAULT_BASE_IMAGE
                   ) -> HarborExport:
    """Write the problem at `problem_dir` as the Harbor task `out/<problem name>`."""
    problem = load_problem(problem_dir)
    require_tests(problem)
    task_dir = out / problem.name
    if task_dir.exists() or task_dir.is_symlink():
        raise UserInputError("the task folder already exists", path=task_dir,
                             hint="remove it, or give another --out")
    checkpoints = problem.ordered_checkpoints()
    for checkpoint in checkpoints:
        ws.check_tests_exist(problem, checkpoint)
    task_dir.mkdir(parents=True)
    _write(task_dir / "task.toml", task_toml(problem))
    _write(task_dir / "instruction.md", problem.render_spec(checkpoints[0].name))
    _write(task_dir / "environment" / "Dockerfile", dockerfile(problem, base_image))
    for checkpoint in checkpoints:
        _write_step(problem, checkpoint, task_dir / "steps" / checkpoint.name)
    return HarborExport(task_dir=task_dir, task_name=f"{TASK_ORG}/{problem.name}",
                        steps=[c.name for c in checkpoints], base_image=base_image)


def task_toml(problem: ProblemConfig) -> str:
    """task.toml: every value written by `json.dumps`, which TOML reads as the same string."""
    lines = ['schema_version = "1.4"', 'multi_step_reward_strategy = "mean"',
             'artifacts = ["/app"]', "", "[task]",
             f"name = {json.dumps(f'{TASK_ORG}/{problem.name}')}",
             f"description = {json.dumps(problem.description.strip())}", "",
             "[metadata]", 'source = "benchwright export harbor"',
             f"problem = {json.dumps(problem.name)}",
             f"difficulty = {json.dumps(problem.difficulty)}",
             f"category = {json.dumps(problem.category)}",
             'reward_keys = "docs/harbor.md: reward (Core all passed), solved, pass_rate, '
             'tests_passed, tests_total, <group>_pass_rate"', "",
             "[environment]", 'workdir = "/app"', "",
             "[agent]", 'user = "agent"', f"timeout_sec = {AGENT_TIMEOUT_S}", "",
             "[verifier]", 'environment_mode = "separate"', f"timeout_sec = {VERIFIER_TIMEOUT_S}"]
    for checkpoint in problem.ordered_checkpoints():
        # a checkpoint that fails benchwright's default pass policy ends the chain, as ours do
        lines += ["", "[[steps]]", f"name = {json.dumps(checkpoint.name)}", "min_reward = 1.0"]
    return "\n".join(lines) + "\n"


def dockerfile(problem: ProblemConfig, base_image: str) -> str:
    """The agent's and the verifier's image: the base, the verifier's pinned environment."""
    pins = " ".join(shlex.quote(p) for p in [*TEST_ENV_BASE, *problem.test_dependencies])
    return (f"FROM {base_image}\n"
            f"RUN python3 -m venv {VERIFIER_ENV} \\\n"
            f" && {VERIFIER_ENV}/bin/python -m pip install --no-cache-dir {pins}\n"
            "RUN useradd --create-home --uid 1000 agent \\\n"
            " && mkdir -p /app && chown agent:agent /app\n"
            "WORKDIR /app\n")


def test_sh() -> str:
    """The step's verifier: our script, run by the verifier environment's Python."""
    return ("#!/bin/bash\n"
            "# benchwright's grading (docs/harbor.md): writes /logs/verifier/reward.json\n"
            f"exec {VERIFIER_ENV}/bin/python /tests/{VERIFIER_SCRIPT}\n")


def solve_sh() -> str:
    """The oracle: the checkpoint's reference snapshot copied over /app."""
    return ("#!/bin/bash\n"
            "set -euo pipefail\n"
            'here="$(cd "$(dirname "$0")" && pwd)"\n'
            'cp -a "$here/reference/." /app/\n')


def _write_step(problem: ProblemConfig, checkpoint: CheckpointConfig, step: Path) -> None:
    _write(step / "instruction.md", problem.render_spec(checkpoint.name))
    _write_tests(problem, checkpoint, step / "tests")
    reference = problem.solution_dir(checkpoint.name)
    (step / "solution").mkdir(parents=True)
    _write(step / "solution" / "solve.sh", solve_sh(), executable=True)
    if reference.is_dir():
        copy_tree(reference, step / "solution" / "reference")
    else:
        (step / "solution" / "reference").mkdir()
    workdir = step / "workdir"
    workdir.mkdir()
    for asset in problem.static_assets.values():
        ws.copy_asset(problem.path / asset.path, workdir, asset.save_path or asset.path)
    if not any(workdir.iterdir()):
        workdir.rmdir()


def _write_tests(problem: ProblemConfig, checkpoint: CheckpointConfig, tests: Path) -> None:
    """The tests as the grader lays them out (`workspace.copy_tests`, `copy_assets`), our
    pytest.ini beside them, the settings, the verifier and test.sh."""
    with tempfile.TemporaryDirectory(prefix="bw-harbor-") as scratch:
        laid = ws.copy_tests(problem, checkpoint, Path(scratch))
        ws.copy_assets(problem, laid)
        shutil.copy2(ws.write_pytest_ini(problem, Path(scratch)), laid / "pytest.ini")
        shutil.copytree(laid, tests)
    settings = {"checkpoint": checkpoint.name, "entry_file": problem.entry_filename,
                "timeout": problem.timeout_for(checkpoint), "env": problem.env_for(checkpoint),
                "markers": {name: m.group.value for name, m in problem.markers.items()}}
    _write(tests / SETTINGS, json.dumps(settings, indent=2, sort_keys=True) + "\n")
    script = resources.files("benchwright.harbor").joinpath("verifier_script.py")
    _write(tests / VERIFIER_SCRIPT, script.read_text(encoding="utf-8"))
    _write(tests / "test.sh", test_sh(), executable=True)


def _write(path: Path, text: str, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)
