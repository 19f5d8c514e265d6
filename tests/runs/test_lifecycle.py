"""`runs.start`, the kernel's one lifecycle of every run (issue 28 point 1), with a track written
here: the steps run in order under the run folder's lock, an interrupt becomes the resume
command, and a resumed folder is opened by the kernel (a run of another track is refused)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from benchwright.errors import Interrupted, UserInputError
from benchwright.executors.local import LocalExecutor
from benchwright.protocols import ExecutorSetup, RegradeSettings, StartedRun, Track
from benchwright.runs import start
from benchwright.runs.lock import lock_holder


class Config(BaseModel):
    n: int


class Result(BaseModel):
    n: int


class StepTrack:
    """A track that records the kernel's calls (and whether the lock was held)."""

    name, noun, command = "coding", "toy run", "toy run"

    def __init__(self, interrupt: bool = False) -> None:
        self.steps: list[str] = []
        self.interrupt = interrupt

    def node_checks(self, config: Config) -> list[Callable[[], object]]:
        self.steps.append("node_checks")
        return []

    def create(self, run_dir: Path, config: Config) -> Config:
        self.steps.append(f"create locked={lock_holder(run_dir) is not None}")
        (run_dir / "manifest.json").write_text(json.dumps({"track": "toy"}))
        return config

    def resumed(self, run_dir: Path) -> Config:
        self.steps.append("resumed")
        return Config(n=1)

    def refresh(self, run_dir: Path) -> Config:
        self.steps.append("refresh")
        return Config(n=1)

    def sweep(self, run_dir: Path) -> None:
        self.steps.append("sweep")

    def execute(self, run: StartedRun[Config]) -> Result:
        self.steps.append(f"execute n={run.config.n} resuming={run.resuming}")
        if self.interrupt:
            raise KeyboardInterrupt
        return Result(n=run.config.n)

    def outcome(self, run_dir: Path, result: Any) -> str:
        self.steps.append("outcome")
        return "done"

    def resume_command(self, run_dir: Path) -> str:
        return f"toy run --resume {run_dir}"

    def interrupted(self, run_dir: Path) -> str:
        return "interrupted; kept"

    # readers: not called by `start`
    def resume(self, run_dir: Path, workers: int = 1) -> Result:
        raise NotImplementedError

    def read(self, run_dir: Path) -> Config:
        raise NotImplementedError

    def finish(self, run_dir: Path) -> Result:
        raise NotImplementedError

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> BaseModel:
        raise NotImplementedError

    def report(self, run_dir: Path, baseline: Path | None) -> Result:
        raise NotImplementedError

    def render(self, report: Result) -> str:
        raise NotImplementedError


EXECUTOR = LocalExecutor.from_setup(ExecutorSetup())


def test_a_new_run_takes_every_step_in_order_under_the_lock(tmp_path: Path) -> None:
    track = StepTrack()
    typed: Track[Config, Config, Result, Result] = track  # the protocol, checked by mypy too
    result = start(typed, tmp_path / "run", Config(n=3), executor=EXECUTOR)
    assert result == Result(n=3)
    assert track.steps == ["node_checks", "create locked=True", "sweep",
                           "execute n=3 resuming=False", "outcome"]


def test_an_interrupt_becomes_the_resume_command(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with pytest.raises(Interrupted) as raised:
        start(StepTrack(interrupt=True), run_dir, Config(n=1), executor=EXECUTOR)
    assert raised.value.message == "interrupted; kept"
    assert raised.value.hint == f"continue with: toy run --resume {run_dir.resolve()}"
    assert lock_holder(run_dir) is None  # the lock went with the block


def test_a_refused_new_run_leaves_no_folder(tmp_path: Path) -> None:
    class Refusing(StepTrack):
        def create(self, run_dir: Path, config: Config) -> Config:
            raise UserInputError("no")

    with pytest.raises(UserInputError):
        start(Refusing(), tmp_path / "run", Config(n=1), executor=EXECUTOR)
    assert not (tmp_path / "run").exists()


def test_a_resumed_folder_is_opened_by_the_kernel_first(tmp_path: Path) -> None:
    # a web run handed to the coding track: refused before any step of the track
    (tmp_path / "manifest.json").write_text(json.dumps({
        "format": "benchwright.web-run/1", "track": "web", "created_at": "2026-01-01T00:00:00Z",
        "benchwright_version": "0.1.0"}))
    track = StepTrack()
    with pytest.raises(UserInputError, match="is a web run, not a coding run"):
        start(track, tmp_path, executor=EXECUTOR)
    assert track.steps == []
