"""The executor interface without a cluster: packed trees (as an attacker would shape them),
node checks, the missing extra, and the coding run's no-shared-filesystem path on an executor
that streams in this process (the same code the Ray executor drives; test_ray_cluster.py
runs it on a real cluster)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.attempts.models import RunConfig
from benchwright.coding.attempts.remote import Landed, land
from benchwright.coding.attempts.runner import create_run, execute
from benchwright.errors import PrerequisiteError
from benchwright.executors.local import LocalExecutor
from benchwright.files.redaction import Redactor
from benchwright.runs.file_tree import FileTree, TreeEntry, UnsafeTree, pack_tree, unpack_tree
from benchwright.runs.node_checks import require_on_every_node
from tests.helpers import run_cli


def test_a_tree_round_trips_links_modes_and_empty_folders(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg" / "empty").mkdir(parents=True)
    (source / "pkg" / "run.sh").write_text("#!/bin/sh\n")
    (source / "pkg" / "run.sh").chmod(0o755)
    (source / "link").symlink_to("/etc/passwd")
    os.mkfifo(source / "fifo")
    tree = pack_tree(source)
    assert any("FIFO" in s for s in tree.skipped)
    unpack_tree(tree, tmp_path / "dest")
    dest = tmp_path / "dest"
    assert (dest / "pkg" / "empty").is_dir()
    assert (dest / "pkg" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert str((dest / "link").readlink()) == "/etc/passwd"  # kept as a link, never followed


@pytest.mark.parametrize("entries", [
    [TreeEntry(path="../escape", kind="file", data=b"x")],
    [TreeEntry(path="/tmp/escape", kind="file", data=b"x")],
    [TreeEntry(path="a", kind="dir"), TreeEntry(path="a/../../escape", kind="file")],
    [TreeEntry(path="a", kind="link", data=b"/tmp"), TreeEntry(path="a/escape", kind="file")],
    [TreeEntry(path="x", kind="file"), TreeEntry(path="x", kind="file")],
    [TreeEntry(path="deep/file", kind="file")],
    [TreeEntry(path="", kind="file")],
])
def test_a_hostile_tree_writes_nothing_outside(tmp_path: Path, entries: list[TreeEntry]) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(UnsafeTree):
        unpack_tree(FileTree(entries=entries), tmp_path / "dest")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # not even `dest` is left
    assert not Path("/tmp/escape").exists()


class _Cluster:
    """An executor whose nodes report what they lack."""

    shares_filesystem = False

    def __init__(self, report: dict[str, list[tuple[str, str]]]) -> None:
        self.report = report

    def each_node(self, fn: Callable[[], Any]) -> dict[str, Any]:
        return {node: found for node, found in self.report.items()}


def test_a_node_without_bubblewrap_is_one_error_naming_it() -> None:
    cluster = _Cluster({"10.0.0.2 (node ab12)": [],
                        "10.0.0.3 (node cd34)": [("bubblewrap not found",
                                                  "apt-get install bubblewrap")]})
    with pytest.raises(PrerequisiteError) as caught:
        require_on_every_node(cluster, [])  # type: ignore[arg-type]
    message = caught.value.one_line()
    assert "node 10.0.0.3 (node cd34): bubblewrap not found" in message
    assert "apt-get install bubblewrap" in message and "ab12" not in message


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchwright.executors.ray_cluster import ray_module

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(PrerequisiteError) as caught:
        ray_module()
    assert "pip install 'benchwright[ray]'" in caught.value.one_line()


def test_an_unknown_executor_lists_the_choices(tmp_path: Path) -> None:
    done = run_cli("run", "coding", "--executor", "k8s", "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert "local, ray" in done.stderr and not (tmp_path / "run").exists()


class _Detached(LocalExecutor):
    """The local executor, but declaring that jobs cannot see the run directory."""

    shares_filesystem = False

    def stream(self, fn: Callable[[Any], Iterator[Any]], jobs: Sequence[Any]) -> Iterator[Any]:
        for job in jobs:
            ready = job.ready()
            if ready is not None:
                moved = ready.model_copy(update={"job": ready.job.model_copy(
                    update={"run_dir": Path("/nonexistent/run")})})
                yield from fn(moved)  # a job that touched the run directory would fail


def _config(problems_dir: Path) -> RunConfig:
    return RunConfig(problems_dir=problems_dir, problems=["ledger_cli"], agent="oracle",
                     trials=2, metrics=False)


def _key_fields(run_dir: Path) -> list[tuple[Any, ...]]:
    rows = [json.loads(line) for path in sorted(run_dir.glob("*/trial_*/journal.jsonl"))
            for line in path.open()]
    return [(r["problem"], r["trial"], r["checkpoint"], r["prompt_sha256"], r["counts"],
             r["verdicts"]) for r in rows]


@pytest.mark.sandbox
def test_the_driver_alone_writes_a_detached_run(tmp_path: Path, problems_dir: Path) -> None:
    config = _config(problems_dir)
    create_run(config, tmp_path / "local")
    execute(tmp_path / "local", config, LocalExecutor(1))
    create_run(config, tmp_path / "detached")
    landed: list[Any] = []
    result = execute(tmp_path / "detached", config, _Detached(1), on_record=landed.append)
    assert result.complete and len(landed) == 2
    assert _key_fields(tmp_path / "detached") == _key_fields(tmp_path / "local")
    folder = tmp_path / "detached" / "ledger_cli" / "trial_1" / "checkpoint_1"
    assert (folder / "snapshot").is_dir() and (folder / "prompt.txt").is_file()


@pytest.mark.sandbox
def test_a_checkpoint_sent_twice_is_journaled_once(tmp_path: Path, problems_dir: Path) -> None:
    config = _config(problems_dir)
    create_run(config, tmp_path / "run")
    execute(tmp_path / "run", config, LocalExecutor(1))
    journal = tmp_path / "run" / "ledger_cli" / "trial_1" / "journal.jsonl"
    record = json.loads(journal.read_text().splitlines()[0])
    from benchwright.coding.attempts.models import CheckpointRecord

    again = Landed(record=CheckpointRecord.model_validate(record), files=FileTree())
    assert land(tmp_path / "run", again, Redactor({})) is None
    assert len(journal.read_text().splitlines()) == 1


@pytest.mark.ray  # the CLI in a network namespace of its own (needs root and unshare)
def test_no_cluster_at_the_address_is_one_line_and_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = (f"ip link set lo up && exec {sys.executable} -m benchwright run coding "
               f"--executor ray --ray-address 127.0.0.1:1 --no-metrics --out {out}")
    done = subprocess.run(["unshare", "-n", "sh", "-c", command], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2
    assert "no Ray cluster at --ray-address 127.0.0.1:1" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()



_ORPHAN_SCRIPT = """
import multiprocessing, os, sys
from pathlib import Path

from benchwright.executors.local import _init_worker


class Sink:  # a stand-in for the event queue (a real one dies with its parent's semaphores)
    def put(self, event):
        pass


def child(marker, events):
    _init_worker(events)
    Path(marker).write_text("a worker took a job after its parent died")


if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    worker = ctx.Process(target=child, args=(sys.argv[1], Sink()))
    worker.start()
    print(worker.pid, flush=True)
    os._exit(0)  # dies while the worker is still starting (spawn's imports take far longer)
"""


def test_a_worker_whose_parent_died_while_it_started_exits(tmp_path: Path) -> None:
    """kill -9 of benchwright while a pool worker starts: the worker arms PR_SET_PDEATHSIG too
    late to be told, so it must see for itself that its parent is gone rather than run jobs
    beside the resumed run."""
    import time

    script, marker = tmp_path / "orphan.py", tmp_path / "survived"
    script.write_text(_ORPHAN_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(marker)], check=True, timeout=60,
                          capture_output=True, text=True)
    worker = Path("/proc") / done.stdout.split()[0]
    deadline = time.monotonic() + 60
    while worker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not worker.exists() and not marker.exists()


def test_a_lost_worker_loses_its_job_only() -> None:
    """A worker killed mid-job (issue 26 point 5): that job is reported lost once every other
    job has run on a fresh pool; no BrokenProcessPool reaches the caller."""
    from benchwright.errors import WorkersLost
    from benchwright.executors.local import LocalExecutor
    from tests.helpers.executor_jobs import die_on_one

    results = []
    with pytest.raises(WorkersLost) as lost:
        for result in LocalExecutor(2).run(die_on_one, [0, 1, 2, 3]):
            results.append(result)
    assert sorted(results) == [0, 2, 3]
    assert [job for job, _why in lost.value.lost] == [1]
    assert "SIGKILL" in lost.value.lost[0][1] and lost.value.exit_code == 3
