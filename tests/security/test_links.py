"""An agent or a problem author plants links, FIFOs, sockets, odd names and sparse files.

Each probe is what an attacker would leave behind; the harness (root) must record links as
links, never read or write through them, skip special files and say so, and keep a run going.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from pathlib import Path

import pytest
import yaml

from benchwright.coding.attempts.snapshots import (
    SnapshotLimits,
    diff_snapshots,
    files_of,
    take_snapshot,
)
from benchwright.coding.grading.workspace import copy_asset
from benchwright.coding.problems.loader import load_problem
from benchwright.errors import ProblemConfigError, SnapshotLimitError
from benchwright.files.nofollow import read_regular
from benchwright.metrics.languages import analyzers
from benchwright.metrics.static import source_files
from tests.helpers import run_cli
from tests.helpers.probes import (
    SOLVE_1,
    files_holding,
    quick_problem,
    records,
    run_coding,
    run_command_agent,
    tree_state,
)

pytestmark = pytest.mark.sandbox
CANARY = b"canary-7f3a9c-outside-the-workspace"


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A host file outside every workspace and problem folder, holding a secret."""
    path = tmp_path / "host" / "secret.py"
    path.parent.mkdir()
    path.write_bytes(b"SECRET = '" + CANARY + b"'\n")
    return path


# --- end to end: an agent's workspace ------------------------------------------------------


def test_workspace_links_to_host_files_are_recorded_as_links(tmp_path: Path,
                                                             canary: Path) -> None:
    quick_problem(tmp_path / "problems")
    out = tmp_path / "run"
    host_before = tree_state(canary.parent)
    run_command_agent(tmp_path / "problems", out,
                      f"ln -s {canary} leak.py; ln -s /etc/shadow shadow; "
                      f"mkdir pkg; ln -s {canary.parent} pkg/hostdir")
    assert tree_state(canary.parent) == host_before  # nothing written through the link
    assert files_holding(out, CANARY) == []
    shadow = Path("/etc/shadow").read_bytes().split(b"\n")[0]
    assert not shadow or files_holding(out, shadow) == []
    snapshot = out / "quick" / "trial_1" / "checkpoint_1" / "snapshot"
    assert (snapshot / "leak.py").is_symlink()
    assert (snapshot / "leak.py").readlink() == canary
    diff = json.loads((snapshot.parent / "diff.json").read_text())
    assert diff["patches"]["leak.py"].endswith(f"+symlink -> {canary}")
    metrics = json.loads((snapshot.parent / "quality_analysis" / "metrics.json").read_text())
    assert [f["path"] for f in metrics["files"]] == []


def test_resume_never_copies_an_asset_through_a_linked_folder(tmp_path: Path) -> None:
    problem = quick_problem(tmp_path / "problems", checkpoints=2)
    (problem / "assets").mkdir()
    (problem / "assets" / "data.txt").write_text("asset\n")
    config = yaml.safe_load((problem / "config.yaml").read_text())
    config["static_assets"] = {"data": {"path": "assets/data.txt",
                                        "save_path": "inputs/data.txt"}}
    (problem / "config.yaml").write_text(yaml.safe_dump(config))
    host = tmp_path / "host_folder"
    host.mkdir()
    (host / "keep.txt").write_text("mine\n")
    out = tmp_path / "run"
    run_command_agent(tmp_path / "problems", out,
                      f'[ "$BENCHWRIGHT_CHECKPOINT" = checkpoint_1 ] || exit 1\n{SOLVE_1}'
                      f"rm -rf inputs && ln -s {host} inputs")
    assert [r["passed"] for r in records(out)] == [True, False]
    with (problem / "checkpoint_2.md").open("a") as spec:
        spec.write("\nEdited: the second checkpoint runs again on resume.\n")
    proc = run_cli("run", "coding", "--resume", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    assert tree_state(host) == {"keep.txt": b"mine\n"}


def test_special_files_and_undecodable_names_are_skipped_and_listed(tmp_path: Path) -> None:
    quick_problem(tmp_path / "problems")
    out = tmp_path / "run"
    run_command_agent(tmp_path / "problems", out,
                      "mkfifo pipe; python -c \"import socket; "
                      "socket.socket(socket.AF_UNIX).bind('sock')\"; "
                      "touch \"$(printf 'bad\\377name')\"; " + SOLVE_1)
    [record] = records(out)
    assert record["solved"] is True
    assert sorted(record["snapshot_skipped"]) == ["bad\\xffname: the name is not UTF-8",
                                                  "pipe: FIFO skipped", "sock: socket skipped"]


def test_sparse_files_past_the_cap_are_the_agents_error(tmp_path: Path) -> None:
    quick_problem(tmp_path / "problems")
    out = tmp_path / "run"
    run_command_agent(tmp_path / "problems", out,
                      SOLVE_1 + "truncate -s 1000M a b c")
    [record] = records(out)
    assert record["agent"]["status"] == "error"
    assert "over the snapshot limit" in record["agent"]["error"]
    assert record["passed"] is False
    snapshot = out / "quick" / "trial_1" / "checkpoint_1" / "snapshot"
    assert list(snapshot.iterdir()) == []
    used = sum(p.stat().st_blocks * 512 for p in out.rglob("*") if not p.is_symlink())
    assert used < 50 * 2**20


def test_too_many_files_is_the_agents_error(tmp_path: Path) -> None:
    quick_problem(tmp_path / "problems")
    out = tmp_path / "run"
    run_command_agent(tmp_path / "problems", out, SOLVE_1 + "touch f{1..30}",
                      "--max-snapshot-files", "20")
    [record] = records(out)
    assert record["agent"]["status"] == "error"
    assert "more than 20 files" in record["agent"]["error"]


def test_a_fifo_in_one_problem_loses_no_other_attempt(tmp_path: Path) -> None:
    problems = tmp_path / "problems"
    quick_problem(problems, "healthy")
    hostile = quick_problem(problems, "hostile")
    with (hostile / "checkpoint_1.md").open("a") as spec:
        spec.write("\nPLANT-A-FIFO\n")
    out = tmp_path / "run"
    run_command_agent(problems, out,
                      'grep -q PLANT-A-FIFO "$BENCHWRIGHT_PROMPT_FILE" && mkfifo pipe\n'
                      + SOLVE_1, "--workers", "2")
    by_problem = {r["problem"]: r for r in records(out)}
    assert by_problem["healthy"]["solved"] is True
    assert by_problem["hostile"]["snapshot_skipped"] == ["pipe: FIFO skipped"]


# --- end to end: a problem folder ----------------------------------------------------------


def test_a_solution_linked_outside_the_problem_is_refused(tmp_path: Path, canary: Path) -> None:
    problem = quick_problem(tmp_path / "problems")
    shutil.rmtree(problem / "solutions" / "checkpoint_1")
    (problem / "solutions" / "checkpoint_1").symlink_to(canary.parent)
    out = tmp_path / "run"
    proc = run_coding(tmp_path / "problems", out, "--agent", "oracle")
    assert proc.returncode == 2, proc.stderr
    assert "solutions/checkpoint_1 is a link to" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists() or files_holding(out, CANARY) == []


def test_a_spec_linked_outside_the_problem_is_refused(tmp_path: Path, canary: Path) -> None:
    problem = quick_problem(tmp_path / "problems")
    (problem / "checkpoint_1.md").unlink()
    (problem / "checkpoint_1.md").symlink_to(canary)
    out = tmp_path / "run"
    proc = run_coding(tmp_path / "problems", out, "--agent", "oracle")
    assert proc.returncode == 2, proc.stderr
    assert "checkpoint_1.md is a link to" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists() or files_holding(out, CANARY) == []


# --- units: the functions that read an agent's tree ----------------------------------------


@pytest.fixture
def hostile_workspace(tmp_path: Path, canary: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "main.py").write_text("print('hi')\n")
    (ws / "leak.py").symlink_to(canary)
    (ws / "pkg" / "host").symlink_to(canary.parent)
    (ws / "rel.py").symlink_to("main.py")
    os.mkfifo(ws / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws / "sock"))
    sock.close()
    (ws / os.fsdecode(b"bad\xffname")).write_text("x")
    with (ws / "sparse.bin").open("wb") as sparse:
        sparse.truncate(200 * 2**20)
    return ws


def test_snapshot_keeps_links_as_links_and_lists_what_it_skips(hostile_workspace: Path,
                                                               tmp_path: Path) -> None:
    dest = tmp_path / "snap"
    snap = take_snapshot(hostile_workspace, dest, exclude=set())
    assert sorted(p.name for p in dest.iterdir()) == ["leak.py", "main.py", "pkg", "rel.py",
                                                      "sparse.bin"]
    assert (dest / "leak.py").is_symlink() and (dest / "pkg" / "host").is_symlink()
    assert sorted(snap.skipped) == ["bad\\xffname: the name is not UTF-8",
                                    "pipe: FIFO skipped", "sock: socket skipped"]
    assert snap.files == 5 and snap.bytes == 200 * 2**20 + len("print('hi')\n")
    assert (dest / "sparse.bin").stat().st_size == 200 * 2**20
    assert (dest / "sparse.bin").stat().st_blocks * 512 < 2**20  # still sparse


def test_diff_and_metrics_never_read_through_a_link(hostile_workspace: Path,
                                                    tmp_path: Path) -> None:
    dest = tmp_path / "snap"
    take_snapshot(hostile_workspace, dest, exclude=set())
    assert CANARY not in json.dumps(diff_snapshots(None, dest)).encode()
    assert set(files_of(dest)) == {"leak.py", "main.py", "pkg/host", "rel.py", "sparse.bin"}
    python = next(a for a in analyzers() if ".py" in a.suffixes)
    assert source_files(dest, python) == ["main.py"]
    assert read_regular(dest, "leak.py") is None and read_regular(dest, "pkg/host/secret.py") \
        is None
    assert read_regular(dest, "main.py") == b"print('hi')\n"


def test_snapshot_limits_raise_and_leave_nothing(hostile_workspace: Path,
                                                 tmp_path: Path) -> None:
    dest = tmp_path / "snap"
    with pytest.raises(SnapshotLimitError, match="MB"):
        take_snapshot(hostile_workspace, dest, set(), SnapshotLimits(max_mb=100))
    with pytest.raises(SnapshotLimitError, match="more than 3 files"):
        take_snapshot(hostile_workspace, dest, set(), SnapshotLimits(max_files=3))
    assert not dest.exists() and not dest.with_name("snap.tmp").exists()


def test_an_asset_is_never_copied_through_a_link(tmp_path: Path) -> None:
    source = tmp_path / "asset.txt"
    source.write_text("asset\n")
    host = tmp_path / "host"
    host.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "inputs").symlink_to(host)
    copy_asset(source, work, "inputs/deep/asset.txt")
    assert list(host.iterdir()) == []
    assert (work / "inputs").is_dir() and not (work / "inputs").is_symlink()
    assert (work / "inputs" / "deep" / "asset.txt").read_text() == "asset\n"


def test_links_inside_a_problem_are_fine_and_loops_are_refused(tmp_path: Path) -> None:
    problem = quick_problem(tmp_path / "problems")
    (problem / "tests" / "data").mkdir()
    (problem / "tests" / "data" / "same.md").symlink_to("../../checkpoint_1.md")
    load_problem(problem)
    (problem / "tests" / "data" / "loop").symlink_to("..")
    with pytest.raises(ProblemConfigError, match="a folder that holds it"):
        load_problem(problem)


def test_a_fifo_in_a_problem_folder_is_refused(tmp_path: Path) -> None:
    problem = quick_problem(tmp_path / "problems")
    os.mkfifo(problem / "solutions" / "checkpoint_1" / "pipe")
    with pytest.raises(ProblemConfigError, match="solutions/checkpoint_1/pipe: FIFO"):
        load_problem(problem)


def test_folders_nested_past_the_depth_cap_are_skipped_not_a_crash(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "/".join(["d"] * 200)).mkdir(parents=True)
    snap = take_snapshot(ws, tmp_path / "snap", exclude=set())
    assert len(snap.skipped) == 1 and "nested deeper than" in snap.skipped[0]


def test_devices_are_skipped_and_set_id_bits_are_dropped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tool = ws / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o4755)  # a set-uid file the agent left; the harness copies it as root
    try:
        os.mknod(ws / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("no CAP_MKNOD here")
    snap = take_snapshot(ws, tmp_path / "snap", exclude=set())
    assert snap.skipped == ["null: device skipped"]
    assert (tmp_path / "snap" / "tool").stat().st_mode & 0o7777 == 0o755
