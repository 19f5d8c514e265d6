"""tests/helpers/cli_forks.py: a command forked from a pre-imported CLI answers exactly as the
same command started as `python -m benchwright` (output, errors, exit code, environment, working
directory), is ended at its time limit, and is seen by the tier guard."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import cli_forks
from tests.helpers.cli_forks import run_forked

pytestmark = pytest.mark.e2e


def _real(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchwright", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600, stdin=subprocess.DEVNULL)


def _forked(args: list[str], env: dict[str, str], cwd: Path,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    run_forked(["--version"], env, cwd, timeout)  # a set-up's first command is not forked
    done = run_forked(args, env, cwd, timeout)
    assert done is not None
    return done


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # a set-up of its own (PYTHONPATH is part of it): this test's zygote, no other test's
    return {**os.environ, "PYTHONPATH": str(tmp_path / "nothing-here"), "COLUMNS": "120"}


@pytest.mark.parametrize("args", [
    ["--version"],
    ["report", "no-such-run"],
    ["run", "coding", "--help"],
    ["problems", "list"],
    ["run", "coding", "--agent", "no-such-agent"],
], ids=["version", "error", "help", "list", "unknown-agent"])
def test_a_forked_command_answers_as_a_new_interpreter(args: list[str], env: dict[str, str],
                                                       tmp_path: Path) -> None:
    real, forked = _real(args, env, tmp_path), _forked(args, env, tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode, real.stdout, real.stderr)


def test_the_command_gets_its_own_environment_and_folder(env: dict[str, str],
                                                         tmp_path: Path) -> None:
    made = tmp_path / "here"
    made.mkdir()
    done = _forked(["problems", "new", "mine"], env, made)
    assert done.returncode == 0 and (made / "mine").is_dir(), done.stderr
    # COLUMNS is read when the command runs (one zygote serves both widths)
    narrow = _forked(["run", "coding", "--help"], {**env, "COLUMNS": "60"}, made)
    wide = _forked(["run", "coding", "--help"], {**env, "COLUMNS": "200"}, made)
    assert max(map(len, narrow.stdout.splitlines())) <= 60
    assert max(map(len, wide.stdout.splitlines())) > 60


def test_a_command_past_its_time_is_killed(env: dict[str, str], tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("rules: []\n")
    with pytest.raises(subprocess.TimeoutExpired):  # the fake server serves until stopped
        _forked(["testing", "fake-llm", "--script", str(script), "--port", "0"], env, tmp_path,
                timeout=5)


def test_the_tier_guard_sees_a_forked_command(env: dict[str, str], tmp_path: Path) -> None:
    seen: list[tuple[str, object]] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "subprocess.Popen":
            seen.append((event, args[1]))

    sys.addaudithook(hook)  # stays (hooks cannot be removed): it records into a dead list after
    _forked(["--version"], env, tmp_path)
    assert [sys.executable, "-m", "benchwright", "--version"] in [argv for _, argv in seen]
    seen.clear()


def test_a_set_up_seen_once_is_not_forked(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "once")}
    assert run_forked(["--version"], env, tmp_path, 60) is None
    assert cli_forks._setup_key(env) not in cli_forks._zygotes


def test_forks_can_be_turned_off(env: dict[str, str], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHWRIGHT_TEST_FORKS", "0")
    for _ in range(3):
        assert run_forked(["--version"], env, tmp_path, 60) is None
