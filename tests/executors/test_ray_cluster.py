"""`--executor ray` on a real cluster: a head and two worker nodes, each its own `ray start`,
all in a network namespace of the lab's own with only loopback up (benchwright.testing.ray_lab).

The worker nodes run in mount namespaces where pytest's whole temporary folder (every run
directory and the copied problems) is an empty tmpfs: a job that read or wrote the run directory
from a worker would fail or write where the driver never looks, so a run that completes with the
local executor's records proves the files travelled through Ray both ways.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.problems.examples import examples_dir
from benchwright.testing.ray_lab import RayLab
from tests.helpers.shared_runs import bundled_oracle_run

pytestmark = [
    pytest.mark.ray,
    pytest.mark.e2e,  # the driver is the CLI, started by tests and by module fixtures
    pytest.mark.timeout(1800),  # the first test also waits for the cluster to start
    pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                       reason="the Ray lab needs root (network, mount and pid namespaces)"),
]

BENCHWRIGHT = [sys.executable, "-m", "benchwright"]
WEB_TASKS = ("9003", "9006", "9008", "9011")
"""One task of each site of the local suite (shopping, shopping_admin, reddit, wikipedia)."""
KEYS = ("problem", "trial", "checkpoint", "index", "prompt_sha256", "counts", "verdicts",
        "passed", "solved", "core_solved", "iso_solved", "snapshot_files", "grade_status")


@pytest.fixture(scope="module")
def hidden_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp()


@pytest.fixture(scope="module")
def lab(hidden_root: Path) -> Any:
    with RayLab(workers=2, cpus=1, hidden=[hidden_root], log_dir=Path("/tmp")) as started:
        yield started


@pytest.fixture(scope="module")
def problems(hidden_root: Path) -> Path:
    """The bundled problems, copied where no worker can see them."""
    target = hidden_root / "problems"
    shutil.copytree(examples_dir(), target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def coding_args(problems: Path, out: Path, *extra: str) -> list[str]:
    """A run of both bundled problems, one trial each: two jobs of three checkpoints, one on each
    worker node (one CPU each), so when the first checkpoint is journaled both nodes still hold
    a job in flight (what the interruptions and the node loss need), at half the cost of two
    trials (the second trial of a problem proved nothing the first does not)."""
    return [*BENCHWRIGHT, "run", "coding", "--problems-dir", str(problems), "--trials", "1",
            "--workers", "2", "--no-metrics", "--json", "--out", str(out), *extra]


def ray_args(lab: RayLab) -> list[str]:
    return ["--executor", "ray", "--ray-address", lab.address]


def records(run_dir: Path) -> list[dict[str, Any]]:
    """Every journaled checkpoint's fields that must not depend on where it ran."""
    lines = [line for path in sorted(run_dir.glob("*/trial_*/journal.jsonl"))
             for line in path.read_text().splitlines()]
    return [{k: json.loads(line)[k] for k in KEYS} for line in lines]


@pytest.fixture(scope="module")
def local_records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The local executor's records: the session's one oracle run of both bundled problems, one
    trial (made once for the judge, view and SCBench-files tests too). It has metrics and reads
    the bundled folder, not the copy: neither changes any of KEYS (checked: equal records)."""
    run_dir, _summary = bundled_oracle_run(tmp_path_factory)
    return records(run_dir)


def test_nothing_listens_beyond_loopback(lab: RayLab) -> None:
    listening = lab.listening()
    assert listening
    assert all(a.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")) for a in listening)


def test_workers_cannot_see_the_run_directory(lab: RayLab, problems: Path) -> None:
    probe = ("import os, ray, sys; ray.init(address=sys.argv[1], log_to_driver=False)\n"
             "f = ray.remote(num_cpus=1)(lambda p: os.path.exists(p))\n"
             "print('SEEN', ray.get([f.remote(sys.argv[2]) for _ in range(4)]))")
    done = lab.run([sys.executable, "-c", probe, lab.address, str(problems)], timeout=300)
    assert "SEEN [False, False, False, False]" in done.stdout, done.stderr[-2000:]
    assert problems.is_dir()  # the driver sees it


def test_ray_run_gives_the_local_records(lab: RayLab, problems: Path, hidden_root: Path,
                                         local_records: list[dict[str, Any]]) -> None:
    out = hidden_root / "ray-run"
    done = lab.run([*coding_args(problems, out), *ray_args(lab)], timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert records(out) == local_records
    summary = json.loads(done.stdout)
    assert summary["complete"] is True
    # the driver wrote every checkpoint folder; no worker scratch path became a run path
    for record in local_records:
        folder = out / record["problem"] / f"trial_{record['trial']}" / record["checkpoint"]
        assert (folder / "snapshot").is_dir() and (folder / "evaluation.json").is_file()
    assert not (out / ".work").exists()


def test_driver_killed_then_resumed(lab: RayLab, problems: Path, hidden_root: Path,
                                    local_records: list[dict[str, Any]]) -> None:
    out = hidden_root / "killed-run"
    driver = subprocess.Popen(lab.command([*coding_args(problems, out), *ray_args(lab)]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for_journaled(out, at_least=1, process=driver)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    resumed = lab.run([*BENCHWRIGHT, "run", "coding", "--resume", str(out), "--json",
                       *ray_args(lab)], timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert records(out) == local_records
    _no_duplicates(out)


def _wait_for_journaled(run_dir: Path, at_least: int, process: subprocess.Popen[Any],
                        timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        journaled = sum(len(p.read_text().splitlines()) for p in run_dir.glob("*/*/journal.jsonl"))
        if journaled >= at_least:
            return
        if process.poll() is not None:
            stderr = process.stderr.read() if process.stderr is not None else ""
            raise AssertionError(f"the run ended (exit {process.returncode}) before the moment "
                                 f"to interrupt it: {str(stderr)[-3000:]}")
        time.sleep(0.2)
    raise TimeoutError("no checkpoint was journaled in time")


def _no_duplicates(run_dir: Path) -> None:
    for path in run_dir.glob("*/*/journal.jsonl"):
        checkpoints = [json.loads(line)["checkpoint"] for line in path.read_text().splitlines()]
        assert len(checkpoints) == len(set(checkpoints)), path


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists()
                    or importlib.util.find_spec("browser_use") is None,
                    reason="needs Debian's chromium and browser-use")
def test_web_run_on_ray_passes_the_local_suite(lab: RayLab, hidden_root: Path) -> None:
    from benchwright.web.evaluation.evaluator import evaluator_env

    evaluator_env()  # built out here, where the package index is in reach (the lab has none)
    out = hidden_root / "web-run"
    env = {"BENCHWRIGHT_WEB_TRIAL_RUNNER": ""}
    # four site workers, each holding half a CPU of the two worker nodes for the whole run; one
    # task of each site of the local suite (the site workers' unit), each scored from its HAR
    # too (NetworkEventEvaluator: the HAR made on a worker node came back whole)
    done = lab.run([*BENCHWRIGHT, "run", "web", "--suite", "local", "--agent", "scripted",
                    "--task-ids", ",".join(WEB_TASKS), "--out", str(out), "--json",
                    *ray_args(lab), "--job-cpus", "0.5"], timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert (summary["n_trials"], summary["n_passed"]) == (4, 4)
    trials = sorted(out.glob("tasks/*/trial_*"))
    assert sorted(t.parent.name for t in trials) == sorted(WEB_TASKS)
    for trial in trials:
        har = json.loads((trial / "network.har").read_text())
        assert har["log"]["entries"], trial
        assert (trial / "history.json").is_file()


# SIGTERM too: `ray.init` puts a SIGTERM handler of its own (a bare exit 15) in the driver
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["ctrl_c", "sigterm"])
def test_ctrl_c_leaves_no_sandbox_on_any_node(lab: RayLab, problems: Path, hidden_root: Path,
                                              signum: int, code: int) -> None:
    out = hidden_root / f"interrupted-run-{signum}"
    driver = subprocess.Popen(lab.command([*coding_args(problems, out), *ray_args(lab)]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_journaled(out, at_least=1, process=driver)
    driver.send_signal(signum)
    _stdout, stderr = driver.communicate(timeout=600)
    assert driver.returncode == code, stderr[-2000:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "interrupted" in errors[0], stderr[-2000:]
    # no Python traceback, no dump of Ray's C++ signal or check-failure handlers ("*** ...")
    assert "Traceback" not in stderr and "***" not in stderr, stderr[-2000:]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _sandboxed(lab):
        time.sleep(0.5)
    assert not _sandboxed(lab)
    resumed = lab.run([*BENCHWRIGHT, "run", "coding", "--resume", str(out), "--json",
                       *ray_args(lab)], timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    _no_duplicates(out)


def _sandboxed(lab: RayLab) -> list[str]:
    return [c for c in lab.worker_processes() if "bwrap" in c or "pytest" in c]


def test_a_worker_process_killed_mid_job_costs_nothing(lab: RayLab, problems: Path,
                                                       hidden_root: Path,
                                                       local_records: list[dict[str, Any]]
                                                       ) -> None:
    """The processes running the jobs, killed (SIGKILL) while a job is in flight, their nodes
    left up: each job runs again from what the driver journaled, exactly once in the records."""
    out = hidden_root / "worker-killed-run"
    driver = subprocess.Popen(lab.command([*coding_args(problems, out), *ray_args(lab)]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_journaled(out, at_least=1, process=driver)
    killed = lab.kill_task_workers("_streamed")
    assert killed, "no job was in flight on a worker node"
    _stdout, stderr = driver.communicate(timeout=900)
    assert driver.returncode == 0, stderr[-3000:]
    assert records(out) == local_records
    _no_duplicates(out)
    assert "Traceback" not in stderr


# last: it takes a worker node away for good
def test_worker_node_lost_mid_run(lab: RayLab, problems: Path, hidden_root: Path,
                                  local_records: list[dict[str, Any]]) -> None:
    out = hidden_root / "node-lost-run"
    driver = subprocess.Popen(lab.command([*coding_args(problems, out), *ray_args(lab)]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_journaled(out, at_least=1, process=driver)
    lab.kill_worker(0)
    _stdout, stderr = driver.communicate(timeout=900)
    assert driver.returncode == 0, stderr[-3000:]
    assert records(out) == local_records
    _no_duplicates(out)
