"""Costly folders (finished runs) made once per test session, across xdist workers.

Several test modules need the same finished run (the oracle over the bundled problems: six
checkpoints graded in the sandbox). A module fixture makes its own, and with xdist each worker
makes its own copy of a session fixture. Here each distinct folder is made once per session:

    made = shared_run(tmp_path_factory, "run", "coding", "--out", f"{OUT}/run", "--json")
    run_dir = made.folder / "run"

runs `benchwright ARGS` (OUT in an argument is the folder it runs in, also its working
directory) the first time these exact arguments (and extra environment) are asked for in the
session, under a file lock in the session's shared temp root (with xdist, the parent of each
worker's basetemp; without, the basetemp), and hands each caller its own copy of that folder
(links kept as links), so no test sees another's writes. `made.stdout`/`made.stderr` are the
build's texts: paths in them name the build folder, not the copy.

`shared_folder(tmp_path_factory, name, build)` does the same for any build: `build(folder)` fills
the folder and returns a JSON value, kept beside it. A build that raises fails every caller with
its error (none waits forever, none gets a half-made folder); a build cut off by a crashed worker
(no verdict written) is removed and made again by the next caller.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.paths import FIXTURES
from tests.helpers.tiers import starts

OUT = "{out}"
"""Stands for the build folder in shared_run's arguments."""
LOCK_WAIT_S = 1800
"""How long a caller waits for another worker's build (a run's own time limit is 600 s)."""


@dataclass(frozen=True)
class SharedRun:
    """A caller's copy of a shared run folder and what the CLI printed when it was made."""

    folder: Path
    returncode: int
    stdout: str
    stderr: str


def session_root(factory: pytest.TempPathFactory) -> Path:
    """The temp folder every xdist worker of this session shares (the basetemp without xdist)."""
    base = factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared-runs"
    root.mkdir(exist_ok=True)
    return root


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"shared build {path.stem}: another worker held its lock for "
                                f"{LOCK_WAIT_S} s", pytrace=False)
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build_once(place: Path, build: Callable[[Path], Any]) -> Any:
    """The build's value, made now unless made before; raises for a build that failed."""
    done, failed, folder = place / "done.json", place / "failed.txt", place / "folder"
    if done.exists():
        return json.loads(done.read_text())["value"]
    if failed.exists():
        pytest.fail(f"shared build {place.name} failed in another test:\n{failed.read_text()}",
                    pytrace=False)
    shutil.rmtree(folder, ignore_errors=True)  # what a crashed worker left, if anything
    folder.mkdir(parents=True)
    try:
        value = build(folder)
    except BaseException as error:
        failed.write_text(f"{type(error).__name__}: {error}")
        raise
    partial = place / "done.json.part"
    partial.write_text(json.dumps({"value": value}))
    partial.rename(done)
    return value


def shared_folder(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any],
                  dest: Path | None = None) -> tuple[Path, Any]:
    """A copy (at `dest`, a new path; else a new temp folder) of the folder `build` made once
    this session under `name`, and the JSON value it returned."""
    root = session_root(factory)
    with _locked(root / f"{name}.lock"):
        value = _build_once(root / name, build)
    copy = dest if dest is not None else factory.mktemp(name[:40]) / "folder"
    shutil.copytree(root / name / "folder", copy, symlinks=True)
    return copy, value


@starts("e2e")
def shared_run(factory: pytest.TempPathFactory, *args: str, env: dict[str, str] | None = None,
               dest: Path | None = None) -> SharedRun:
    """`benchwright ARGS` (OUT in an argument is the build folder, its working directory) run once
    this session with os.environ plus `env`; the caller's copy of the folder (see the module)."""
    key = hashlib.sha256(json.dumps([args, sorted((env or {}).items())]).encode()).hexdigest()

    def build(folder: Path) -> dict[str, Any]:
        argv = [arg.replace(OUT, str(folder)) for arg in args]
        done = run_cli(*argv, env={**os.environ, **(env or {})}, cwd=folder)
        return {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

    copy, made = shared_folder(factory, f"run-{key[:16]}", build, dest)
    return SharedRun(folder=copy, **made)


def bundled_oracle_run(factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """`benchwright run coding --json` in an empty folder: the oracle (the default agent) over
    both bundled problems with metrics, in the default run folder (benchwright-out/runs/none/
    <SCBench-style name>). The caller's copy of that run folder and the run's --json summary.

    tests/coding/attempts/test_scbench_files.py needs the default folder; tests/judge needs an
    oracle run of both problems with metrics, wherever it is (it used `--agent oracle --out`)."""
    made = shared_run(factory, "run", "coding", "--json")
    assert made.returncode == 0, made.stderr
    [found] = (made.folder / "benchwright-out" / "runs").glob("*/*")
    summary: dict[str, Any] = json.loads(made.stdout)
    return found, summary


SLOPPY = FIXTURES / "counterfactual" / "sloppy_agent.sh"


def sloppy_run(factory: pytest.TempPathFactory, *extra: str) -> Path:
    """A `command` agent that breaks code it inherited from itself (SLOPPY) over both bundled
    problems, no metrics, with these extra options (`--start-from reference`): the caller's copy
    of the run folder (tests/coding/attempts/test_counterfactual_runs.py's runs; tests/view's are of
    kv_server alone: its tests work out that head-to-head by hand)."""
    from benchwright.coding.problems.examples import examples_dir

    problems = examples_dir()
    made = shared_run(factory, "run", "coding", "--agent", "command", "--agent-command",
                      f"bash {SLOPPY} {problems}", "--agent-mount", str(SLOPPY),
                      "--agent-mount", str(problems), "--no-metrics", "--out", f"{OUT}/run",
                      *extra, "--json")
    assert made.returncode == 0, made.stderr
    return made.folder / "run"


@starts("e2e", "sandbox")
def make_quick_run(root: Path) -> Path:
    """A finished oracle run of the `quick` fixture problem (one trial, no metrics) in `root/r`,
    made from a copy of the problem in `root/problems/quick`."""
    shutil.copytree(FIXTURES / "runs" / "quick", root / "problems" / "quick")
    done = run_cli("run", "coding", "--problems-dir", str(root / "problems"), "--no-metrics",
                   "--out", str(root / "r"))
    assert done.returncode == 0, done.stderr
    return root / "r"


@starts("e2e", "sandbox")
def quick_finished_run(factory: pytest.TempPathFactory) -> Path:
    """`make_quick_run` made once this session: the caller's copy of the run folder. Its
    manifest names the build folder's problems, which nobody writes."""
    def build(folder: Path) -> None:
        make_quick_run(folder)

    copy, _ = shared_folder(factory, "quick-finished-run", build)
    return copy / "r"
