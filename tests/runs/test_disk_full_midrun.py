"""The disk filling up, or turning read-only, in the middle of a run (issue 42 point 2): the run
stops with one `DiskError` naming a path on that disk, what was journaled is whole (every record
has its checkpoint's files), and `--resume` once there is space finishes every checkpoint exactly
once. Real file systems: a small tmpfs as the run folder, or as the cache (where environments and
grading scratch live). The moment is chosen in the process that runs, by the API's hooks or by
wrapping one step of the attempt: after the first checkpoint is journaled (the next checkpoint's
agent work or grading hits it); while the second checkpoint's agent work is saved (full during
agent work, space again after: not the agent's failure); once the second checkpoint is graded,
before its record is written (record writing); or after the last attempt ended (result.json and
report.md hit it). A full disk's line gives the space left and the space the failed write
needed (when the writer knew it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES
from tests.helpers.cli import run_cli
from tests.helpers.tmpfs import tmpfs as _tmpfs

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root"),
              pytest.mark.e2e, pytest.mark.sandbox]

RUN = """
import json, os, subprocess, sys
from pathlib import Path
from benchwright import CodingHooks, run_coding
from benchwright.errors import BenchwrightError

problems, run, disk, when, how = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), \\
    sys.argv[4], sys.argv[5]
seen = []

def break_disk():
    if how == "read-only":  # a read-only mount stacked on it: open files keep the one below
        subprocess.run(["mount", "--bind", str(disk), str(disk)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(disk)], check=True)
        return
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(disk / "filler", "wb") as handle:
        try:
            handle.write(b"\\0" * max(0, free - 2048))
        except OSError:
            pass

def on_event(record):
    seen.append(record)
    if when == "first-checkpoint" and len(seen) == 1:
        break_disk()

# No API hook is there for the next two moments, so the step is wrapped; the writes themselves
# meet the real disk.
import benchwright.coding.attempts.chain as chain

def broken_before(step):
    def step_then(*args):
        if seen:  # the second checkpoint
            break_disk()
        return step(*args)
    return step_then

def full_during(step):  # space again right after: only this step met the full disk
    def step_then(*args):
        if not seen:
            return step(*args)
        break_disk()
        try:
            return step(*args)
        finally:
            (disk / "filler").unlink(missing_ok=True)
    return step_then

if when == "agent-work":  # the disk filled while the agent worked: its work cannot be saved
    chain.take_snapshot = full_during(chain.take_snapshot)
if when == "record":  # the second checkpoint graded, its record not yet written
    chain.save_grade_output = broken_before(chain.save_grade_output)

def on_summary(summary):
    if when == "report":
        break_disk()

try:
    run_coding(problems, out=run, metrics=False,
               hooks=CodingHooks(on_event=on_event, on_summary=on_summary))
except BenchwrightError as exc:
    print(json.dumps({"code": exc.exit_code, "line": exc.one_line(), "kind": type(exc).__name__}))
else:
    print(json.dumps({"code": 0}))
"""


def _mend(disk: Path, how: str) -> None:
    """Space again, or the read-only mount taken away."""
    if how == "read-only":
        subprocess.run(["umount", str(disk)], check=True)
    (disk / "filler").unlink(missing_ok=True)


def _broken_run(tmp_path: Path, run: Path, disk: Path, when: str, how: str,
                env: dict[str, str]) -> dict[str, object]:
    problems = tmp_path / "problems"
    shutil.copytree(FIXTURES / "runs" / "quick", problems / "quick")
    done = subprocess.run([sys.executable, "-c", RUN, str(problems), str(run), str(disk), when,
                           how], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    return dict(json.loads(done.stdout.splitlines()[-1]))


def _journal(run: Path) -> list[str]:
    path = run / "quick" / "trial_1" / "journal.jsonl"
    return [json.loads(line)["checkpoint"] for line in path.read_text().splitlines()]


def _consistent(run: Path) -> None:
    """Every journaled checkpoint has its files: no record counted without them."""
    for checkpoint in _journal(run):
        folder = run / "quick" / "trial_1" / checkpoint
        assert (folder / "evaluation.json").is_file() and (folder / "snapshot").is_dir(), folder


def _resumed_once(run: Path, env: dict[str, str]) -> None:
    resumed = run_cli("run", "coding", "--resume", str(run), env=env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "4/4 checkpoints solved" in resumed.stdout
    assert _journal(run) == [f"checkpoint_{n}" for n in (1, 2, 3, 4)]  # each exactly once
    assert (run / "result.json").is_file() and (run / "report.md").is_file()


def _the_line(outcome: dict[str, object], code: int, disk: Path) -> None:
    assert outcome.get("kind") == "DiskError" and outcome["code"] == code, outcome
    assert str(disk) in str(outcome["line"]), outcome  # names the folder on the broken disk
    if code == 3:  # the space left, and the space the write needed (or that it is unknown)
        assert "free on its file system" in str(outcome["line"]), outcome
        assert re.search(r"needs at least \d+ (bytes|KiB|MiB)|space needed unknown",
                         str(outcome["line"])), outcome


@pytest.mark.parametrize(("when", "how", "code"), [
    ("first-checkpoint", "full", 3), ("first-checkpoint", "read-only", 2),
    ("agent-work", "full", 3), ("record", "full", 3), ("report", "full", 3)])
def test_the_run_folder_breaks_mid_run_then_resumes_exactly_once(tmp_path: Path, when: str,
                                                                 how: str, code: int) -> None:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    with _tmpfs(tmp_path / "disk", "16m") as disk:
        run = disk / "run"
        outcome = _broken_run(tmp_path, run, disk, when, how, env)
        _the_line(outcome, code, disk)
        if when in ("agent-work", "record"):  # a copy, a file written whole: the size is known
            assert "needs at least" in str(outcome["line"]), outcome
        _mend(disk, how)
        _consistent(run)
        assert len(_journal(run)) == (4 if when == "report" else 1)
        _resumed_once(run, env)


def test_the_cache_fills_mid_run_then_the_run_resumes_exactly_once(tmp_path: Path) -> None:
    """The cache (environments, grading scratch) on its own small disk fills after the first
    checkpoint: the next grading cannot make its scratch folder."""
    with _tmpfs(tmp_path / "cache", "400m") as cache:
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "BENCHWRIGHT_CACHE_DIR": str(cache)}
        run = tmp_path / "run"
        outcome = _broken_run(tmp_path, run, cache, "first-checkpoint", "full", env)
        _the_line(outcome, 3, cache)
        _mend(cache, "full")
        _consistent(run)
        assert len(_journal(run)) == 1
        _resumed_once(run, env)
