"""`benchwright run harbor` end to end under Podman: tasks written for the tests (Dockerfile FROM
the locally built grading image), the oracle and the command agent; rewards, min_reward and the
multi-step reward as Harbor computes them; kill -9 and --resume journal each trial once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.harbor_tasks import multi_step, single_step

pytestmark = [pytest.mark.container, pytest.mark.e2e]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchwright", "run", "harbor", *args],
                          capture_output=True, text=True, timeout=1800, check=False)


def journal(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]


def test_single_step_oracle_and_a_wrong_agent(tmp_path: Path, image: str) -> None:
    task = single_step(tmp_path, image)
    done = run("--tasks", str(task), "--out", str(tmp_path / "oracle"))
    assert done.returncode == 0, done.stderr
    assert journal(tmp_path / "oracle")[0]["rewards"] == {"reward": 1.0, "exact": 1.0}
    wrong = run("--tasks", str(task), "--out", str(tmp_path / "wrong"), "--agent", "command",
                "--agent-command", "echo 41 > /app/answer.txt")
    assert wrong.returncode == 0, wrong.stderr
    assert journal(tmp_path / "wrong")[0]["rewards"] == {"reward": 0.0, "exact": 0.0}


def test_multi_step_oracle_means_every_step(tmp_path: Path, image: str) -> None:
    done = run("--tasks", str(multi_step(tmp_path, image)), "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    [record] = journal(tmp_path / "r")
    assert [s["name"] for s in record["steps"]] == ["a", "b", "c"]  # type: ignore[index]
    assert record["rewards"] == {"reward": 1.0, "step_a": 1 / 3, "step_b": 1 / 3,
                                 "step_c": 1 / 3}


@pytest.mark.parametrize("strategy, expected", [
    ("mean", {"reward": 0.5, "step_a": 0.5, "step_b": 0.0}),
    ("final", {"reward": 0.0, "step_b": 0.0}),
])
def test_a_step_below_min_reward_ends_the_trial_as_harbor_would(
        tmp_path: Path, image: str, strategy: str, expected: dict[str, float]) -> None:
    task = multi_step(tmp_path, image, strategy=strategy, min_reward="1.0")
    done = run("--tasks", str(task), "--out", str(tmp_path / "r"), "--agent", "command",
               "--agent-command", "echo 1 > /app/answer.txt")
    assert done.returncode == 0, done.stderr
    [record] = journal(tmp_path / "r")
    steps = record["steps"]
    assert [s["name"] for s in steps] == ["a", "b"]  # type: ignore[union-attr]
    assert steps[1]["gate"] == "reward=0.0 below min_reward 1.0"  # type: ignore[index]
    assert record["rewards"] == expected


def test_kill_9_then_resume_journals_each_trial_once(tmp_path: Path, image: str) -> None:
    task = multi_step(tmp_path, image)
    run_dir = tmp_path / "r"
    argv = [sys.executable, "-m", "benchwright", "run", "harbor", "--tasks", str(task),
            "--out", str(run_dir), "--trials", "3"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        _wait_for(lambda: (run_dir / "trials.jsonl").exists()
                  and (run_dir / "trials" / "tests_multi__1" / "steps").exists(), proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = journal(run_dir)
    assert len(before) < 3
    done = run("--resume", str(run_dir))
    assert done.returncode == 0, done.stderr
    trials = sorted(int(r["trial"]) for r in journal(run_dir))  # type: ignore[call-overload]
    assert trials == [0, 1, 2]
    assert all(r["rewards"] == journal(run_dir)[0]["rewards"] for r in journal(run_dir))


def _wait_for(ready: object, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(6000):
        if ready():  # type: ignore[operator]
            return
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.1)
    raise AssertionError("the run never reached its second trial")


def test_the_mini_agent_on_the_fake_llm_works_in_the_steps_container(tmp_path: Path,
                                                                     image: str) -> None:
    from benchwright.testing import FakeLLMServer, Script

    script = Script.model_validate({"turns": [
        {"text": "Writing it.", "tool_calls": [{"name": "bash", "arguments": {
            "command": "cat $BENCHWRIGHT_INSTRUCTION >/dev/null; pwd; echo 42 > answer.txt"}}]},
        {"text": "Done."}]})
    task = single_step(tmp_path, image)
    with FakeLLMServer(script) as server:
        done = subprocess.run(
            [sys.executable, "-m", "benchwright", "run", "harbor", "--tasks", str(task),
             "--out", str(tmp_path / "r"), "--agent", "mini", "--model", "fake",
             "--base-url", f"{server.base_url}/v1"], capture_output=True, text=True,
            timeout=1800, check=False, env={**os.environ, "OPENAI_API_KEY": "sk-fake-39"})
    assert done.returncode == 0, done.stderr
    [record] = journal(tmp_path / "r")
    assert record["rewards"] == {"reward": 1.0, "exact": 1.0}
    trajectory = tmp_path / "r" / "trials" / "tests_single__0" / "steps" / "main" / "agent"
    assert "/app" in (trajectory / "trajectory.json").read_text()
