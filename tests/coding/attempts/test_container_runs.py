"""`run coding --runtime podman|docker` end to end: the bundled problems with the oracle solve as
with bubblewrap, the image is resolved once and recorded (manifest, report), a resumed run keeps
it, and no container is left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.coding.attempts.models import RunConfig, runtime_of
from benchwright.errors import PrerequisiteError, UserInputError
from benchwright.sandbox.images.resolve import image_for_runtime
from tests.helpers import run_cli
from tests.helpers.runtimes import CONTAINER_PARAMS

pytestmark = [pytest.mark.container, pytest.mark.e2e]


def test_the_oracle_solves_the_bundled_problems_in_containers(tmp_path: Path) -> None:
    runtime = "podman"  # docker: the same code behind another CLI (graded below; tests/security)
    out = tmp_path / "run"
    done = run_cli("run", "coding", "--runtime", runtime, "--no-metrics", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "6/6 checkpoints solved" in done.stdout + done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    image_id = manifest["config"]["image_id"]
    assert image_id.startswith("sha256:") and manifest["environment"]["image"] == image_id
    assert manifest["environment"]["runtime"] == runtime
    assert f"- sandbox: {runtime}, image" in (out / "report.md").read_text()
    grading = json.loads(next(out.glob("kv_server/trial_1/checkpoint_1/grading.json"))
                         .read_text())
    assert grading["grader"]["runtime"] == runtime and grading["grader"]["jailed"] is True
    again = run_cli("run", "coding", "--resume", str(out))  # complete: finished again, same image
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "manifest.json").read_text())["config"]["image_id"] == image_id


def test_a_run_whose_image_is_gone_is_refused(tmp_path: Path) -> None:
    config = RunConfig(problems_dir=tmp_path, problems=["p"], agent="oracle", runtime="podman",
                       image_id="sha256:" + "0" * 64)
    with pytest.raises(PrerequisiteError, match="not in podman's store"):
        runtime_of(config)


@pytest.mark.parametrize("runtime", ["bwrap", "unsafe-local"])
def test_an_image_for_a_runtime_without_containers_is_refused(runtime: str) -> None:
    with pytest.raises(UserInputError, match="--image is for --runtime podman"):
        image_for_runtime(runtime, "some/image:tag")


@pytest.mark.parametrize("runtime", CONTAINER_PARAMS)
def test_eval_checkpoint_grades_the_reference_in_a_container(
        runtime: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if runtime == "docker":
        request.getfixturevalue("docker_api")
    done = run_cli("eval", "checkpoint", "--problem", "ledger_cli", "--checkpoint",
                   "checkpoint_2", "--runtime", runtime, "--out", str(tmp_path / "out"), "--json")
    assert done.returncode == 0, done.stderr
    evaluation = json.loads(done.stdout)
    assert evaluation["status"] == "completed" and evaluation["verdicts"]["all-cases"] is True
    assert evaluation["grader"]["runtime"] == runtime
