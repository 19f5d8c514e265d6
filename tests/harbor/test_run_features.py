"""Run features of `benchwright run harbor` under Podman (issue 39, points 2 and 3): `--jobs`
runs trials at once, each in containers of its own, journaled once each by the harness; the
image each task's Dockerfile starts FROM is recorded by id in the manifest and every trial."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.harbor_tasks import CHECK, base_image, single_step, write_task

pytestmark = [pytest.mark.container, pytest.mark.e2e]
# Each trial's agent waits until the test has seen both trials' agents running at once, then
# answers: with one trial at a time the second never starts while the first waits.
WAIT_THEN_ANSWER = "until [ -e /app/go ]; do sleep 0.2; done; echo 42 > /app/answer.txt"


@pytest.fixture(scope="module")
def image() -> str:
    return base_image()


def rendezvous_task(root: Path, image: str) -> tuple[Path, str]:
    """One step whose instruction holds a token naming this test's containers."""
    token = f"bw-rendezvous-{time.time_ns()}"
    task = write_task(root, "par", """\
        schema_version = "1.4"
        [task]
        name = "tests/par"
        [environment]
        workdir = "/app"
        [agent]
        timeout_sec = 900
        """, image=image, files={
        "instruction.md": f"{token}\n",
        "tests/test.sh": CHECK.format(want="42", key="exact")})
    return task, token


def agents_waiting(token: str) -> list[str]:
    """This test's agent containers now running (their instruction holds `token`)."""
    listed = subprocess.run(["podman", "ps", "--filter", "label=benchwright.runtime=1",
                             "--format", "{{.Names}}"], capture_output=True, text=True,
                            check=False).stdout.split()
    return [name for name in listed if token in subprocess.run(
        ["podman", "exec", name, "cat", "/logs/agent/instruction.md"], capture_output=True,
        text=True, check=False).stdout]


def test_jobs_run_trials_at_once_and_the_base_image_is_recorded(tmp_path: Path,
                                                                 image: str) -> None:
    task, token = rendezvous_task(tmp_path, image)
    run_dir = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchwright", "run", "harbor", "--tasks", str(task), "--out",
         str(run_dir), "--trials", "2", "--jobs", "2", "--agent", "command",
         "--agent-command", WAIT_THEN_ANSWER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        together: list[str] = []
        for _ in range(3000):  # a bound for a run that never gets there, not a timing
            together = agents_waiting(token)
            if len(together) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.2)
        for name in together:
            subprocess.run(["podman", "exec", name, "touch", "/app/go"], check=False)
        _out, err = proc.communicate(timeout=1800)
    finally:
        proc.kill()
    assert len(together) == 2, f"the two trials never ran at once: {err[-500:]}"
    assert proc.returncode == 0, err
    records = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    assert sorted(r["trial"] for r in records) == [0, 1]
    assert all(r["rewards"] == {"reward": 1.0, "exact": 1.0} for r in records)
    base = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", image],
                          capture_output=True, text=True, check=True).stdout.strip()
    recorded = {image: f"sha256:{base.removeprefix('sha256:')}"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["base_images"] == {"tests/par": recorded}
    assert all(r["base_images"] == recorded for r in records)


def test_the_mini_agent_stops_at_its_cost_limit_and_its_session_exports_as_atif(
        tmp_path: Path, image: str) -> None:
    from benchwright.testing import FakeLLMServer, Script

    usage = {"input_tokens": 1000, "output_tokens": 1000}  # $2 a call at $1000 per Mtok
    script = Script.model_validate({"turns": [
        {"text": "First try.", "usage": usage, "tool_calls": [
            {"name": "bash", "arguments": {"command": "echo 41 > answer.txt"}}]},
        {"text": "Fixing it.", "usage": usage, "tool_calls": [
            {"name": "bash", "arguments": {"command": "echo 42 > answer.txt"}}]},
        {"text": "Done.", "usage": usage}]})
    task = single_step(tmp_path, image)
    with FakeLLMServer(script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "benchwright", "run", "harbor", "--tasks", str(task),
             "--out", str(tmp_path / "r"), "--agent", "mini", "--model", "fake-unpriced",
             "--base-url", f"{server.base_url}/v1", "--max-cost", "1", "--price-in", "1000",
             "--price-out", "1000"], capture_output=True, text=True, timeout=1800,
            check=False, env={**os.environ, "OPENAI_API_KEY": "sk-fake-39"})
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in (tmp_path / "r" / "trials.jsonl").read_text()
                .splitlines()]
    [step] = record["steps"]
    assert step["agent_error"] == "stopped at the cost limit ($1)"
    assert step["agent_usage"]["steps"] == 1
    assert step["agent_usage"]["cost_usd"] == 2.0
    assert record["rewards"] == {"reward": 0.0, "exact": 0.0}  # the second turn never ran
    report = (tmp_path / "r" / "report.md").read_text()
    assert "$2.0000 (1 calls)" in report
    # the step's session as ATIF, beside it and through `export atif`
    session = "trials/tests_single__0/steps/main"
    assert (tmp_path / "r" / session / "agent" / "trajectory.atif.json").is_file()
    exported = subprocess.run([sys.executable, "-m", "benchwright", "export", "atif",
                               str(tmp_path / "r"), "--out", str(tmp_path / "atif")],
                              capture_output=True, text=True, timeout=600, check=False)
    assert exported.returncode == 0, exported.stderr
    doc = json.loads((tmp_path / "atif" / session / "trajectory.atif.json").read_text())
    assert doc["session_id"] == session
    assert "echo 41 > answer.txt" in json.dumps(doc["steps"])


def test_a_recorded_cassette_replays_the_run_without_the_model(tmp_path: Path,
                                                               image: str) -> None:
    from benchwright.testing import FakeLLMServer, Script

    script = Script.model_validate({"turns": [
        {"text": "Writing it.", "tool_calls": [
            {"name": "bash", "arguments": {"command": "echo 42 > answer.txt"}}]},
        {"text": "Done."}]})
    task = single_step(tmp_path, image)
    cassette = tmp_path / "cassette"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    with FakeLLMServer(script) as server:
        recorded = subprocess.run(
            [sys.executable, "-m", "benchwright", "run", "harbor", "--tasks", str(task),
             "--out", str(tmp_path / "rec"), "--agent", "mini", "--model", "fake",
             "--base-url", f"{server.base_url}/v1", "--llm-record", str(cassette)],
            capture_output=True, text=True, timeout=1800, check=False,
            env={**env, "OPENAI_API_KEY": "sk-fake-39"})
        url = server.base_url
    assert recorded.returncode == 0, recorded.stderr
    # the server is gone and no key is set: every answer comes from the cassette
    replayed = subprocess.run(
        [sys.executable, "-m", "benchwright", "run", "harbor", "--tasks", str(task), "--out",
         str(tmp_path / "rep"), "--agent", "mini", "--model", "fake", "--base-url",
         f"{url}/v1", "--llm-replay", str(cassette)], capture_output=True, text=True,
        timeout=1800, check=False, env=env)
    assert replayed.returncode == 0, replayed.stderr
    for run in ("rec", "rep"):
        [record] = [json.loads(line) for line in (tmp_path / run / "trials.jsonl").read_text()
                    .splitlines()]
        assert record["status"] == "completed"
        assert record["rewards"] == {"reward": 1.0, "exact": 1.0}
    # a cassette of another task holds nothing for this one: the step is the harness's failure,
    # and the command says so with exit 3 (as `run web` does), not 0
    other = tmp_path / "other-task"
    shutil.copytree(task, other)
    toml = other / "task.toml"
    toml.write_text(toml.read_text().replace('name = "tests/single"', 'name = "tests/other"'))
    missed = subprocess.run(
        [sys.executable, "-m", "benchwright", "run", "harbor", "--tasks", str(other), "--out",
         str(tmp_path / "miss"), "--agent", "mini", "--model", "fake", "--base-url",
         f"{url}/v1", "--llm-replay", str(cassette)], capture_output=True, text=True,
        timeout=1800, check=False, env=env)
    assert missed.returncode == 3, missed.stderr
    assert "1 trial(s) ended as infrastructure errors" in missed.stderr
    assert "Traceback" not in missed.stderr
