"""A full or read-only disk (issue 26 point 3): one line naming the path, exit 3 (full) or 2
(read-only), no traceback, and the run resumable once there is space. Each test mounts its own
small tmpfs or read-only bind mount (root only) and removes it."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from benchwright.errors import disk_error
from benchwright.runs.journal import append_record
from tests.helpers import FIXTURES
from tests.helpers.cli import run_cli
from tests.helpers.tmpfs import tmpfs as _tmpfs

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root"),
              pytest.mark.e2e, pytest.mark.sandbox]
LIMIT_S = 30
"""Each probe's time limit (a run's, which grades, gets more)."""


def _cli(*args: str, timeout: float = LIMIT_S) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return run_cli(*args, env=env, timeout=timeout)


def _one_line(done: subprocess.CompletedProcess[str], code: int, fragment: str) -> str:
    """The error line, checked: the exit code, no traceback, one `error:` line last."""
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out[-2000:]
    assert done.returncode == code, out[-2000:]
    last = [line for line in done.stderr.splitlines() if line.strip()][-1]
    assert last.startswith("error: ") and fragment in last, last
    return last


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[Path]:
    source = path.with_name(path.name + "-source")
    source.mkdir(parents=True)
    path.mkdir(parents=True)
    done = subprocess.run(["mount", "--bind", str(source), str(path)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount: {done.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], check=True)
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _problems(tmp_path: Path) -> Path:
    problems = tmp_path / "problems"
    shutil.copytree(FIXTURES / "runs" / "quick", problems / "quick")
    return problems


def _fill(disk: Path, keep_bytes: int = 4096) -> Path:
    """A file that takes all but `keep_bytes` of the disk's space."""
    info = os.statvfs(disk)
    filler = disk / "filler"
    size = max(0, info.f_bavail * info.f_frsize - keep_bytes)
    with filler.open("wb") as handle, contextlib.suppress(OSError):
        handle.write(b"\0" * size)
    return filler


def test_a_run_on_a_full_disk_stops_with_one_line_and_resumes(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    with _tmpfs(tmp_path / "disk", "100k") as disk:
        run = disk / "run"
        done = _cli("run", "coding", "--problems-dir", str(problems), "--no-metrics", "--out",
                    str(run), timeout=300)
        line = _one_line(done, 3, "no space left on the device")
        assert str(run) in line and f"benchwright run coding --resume {run}" in line
        subprocess.run(["mount", "-o", "remount,size=4m", str(disk)], check=True)
        resumed = _cli("run", "coding", "--resume", str(run), timeout=300)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert "4/4 checkpoints solved" in resumed.stdout


def test_eval_and_a_bundle_on_a_full_disk_and_a_read_only_bundle(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    with _tmpfs(tmp_path / "disk", "4m") as disk:
        run = disk / "run"
        done = _cli("run", "coding", "--problems-dir", str(problems), "--no-metrics", "--out",
                    str(run), timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        filler = _fill(disk)
        line = _one_line(_cli("eval", str(run), timeout=120), 3, "no space left")
        assert str(run) in line and "benchwright eval" in line
        line = _one_line(_cli("view", str(run), "--bundle", str(disk / "bundle")), 3,
                         "no space left")
        assert str(disk / "bundle") in line
        filler.unlink()
        again = _cli("eval", str(run), timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        with _read_only(tmp_path / "ro") as read_only:
            line = _one_line(_cli("view", str(run), "--bundle", str(read_only / "b")), 2,
                             "read-only")
            assert str(read_only / "b") in line


class _Line(BaseModel):
    """A journal record of a chosen size."""

    text: str
    """Its payload."""


def test_a_record_the_disk_cannot_hold_leaves_the_journal_as_it_was(tmp_path: Path) -> None:
    """A record larger than the space left is written in part, then the write fails: the part
    is cut off again (no torn line to count or mend) and the error says what it needed."""
    with _tmpfs(tmp_path / "disk", "1m") as disk:
        journal = disk / "journal.jsonl"
        append_record(journal, _Line(text="first"))
        before = journal.read_bytes()
        _fill(disk, keep_bytes=0)
        big = _Line(text="x" * 64 * 1024)  # past the page the journal's first line is in
        with pytest.raises(OSError) as raised:
            append_record(journal, big)
        assert raised.value.errno == errno.ENOSPC
        assert journal.read_bytes() == before
        error = disk_error(raised.value, disk)
        assert error is not None and error.path == journal, error
        needed = len(big.model_dump_json()) + 1
        assert f"needs at least {-(-needed // 1024)} KiB" in error.one_line(), error.one_line()
        assert "free on its file system" in error.one_line()
