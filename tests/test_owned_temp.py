"""Issue 26 point 5: no temp folder is left by any kill. Every temporary folder benchwright makes
(the mini agent's home, Chromium's profile, a remote site worker's scratch, a web package's
staging, a grading scratch in the shared cache) is named for its owner and locked while in use;
the next start removes what a kill -9 left, and never a folder in use, even one of another PID
namespace sharing this /tmp, a link, or a folder whose name is not ours."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchwright.coding.grading.scratch import new_scratch, remove_tree
from benchwright.files.owned_temp import OwnedTemp, held, owned_prefix, sweep_leftovers

PREFIX = "benchwright-probe-"
HOLD = """
import sys, time
from pathlib import Path
from benchwright.files.owned_temp import OwnedTemp
owned = OwnedTemp(sys.argv[1], Path(sys.argv[2]))
print(owned.path, flush=True)
time.sleep(600)
"""


def _killed_owner(root: Path, prefix: str = PREFIX) -> Path:
    """A folder whose owner made it, then died of SIGKILL."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, prefix, str(root)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    assert folder.is_dir() and held(folder)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return folder


def test_what_a_kill_left_is_swept_at_the_next_start_and_nothing_else(tmp_path: Path) -> None:
    left = _killed_owner(tmp_path)
    (left / "profile").mkdir()
    assert left.is_dir() and not held(left)
    elsewhere = tmp_path / f"{PREFIX}999999999-1-inuse"  # a pid of another PID namespace
    not_ours = tmp_path / f"{PREFIX}someone-elses"
    target = tmp_path / "target"
    for folder in (not_ours, target):
        folder.mkdir()
    link = tmp_path / f"{PREFIX}1-2-link"
    link.symlink_to(target)
    with OwnedTemp(PREFIX, tmp_path) as live:
        live.rename(elsewhere)  # the same inode, still locked by this process
        with OwnedTemp(PREFIX, tmp_path) as fresh:  # the next start
            assert not left.exists()
            assert elsewhere.is_dir() and not_ours.is_dir() and link.is_symlink()
            assert target.is_dir() and fresh.name.startswith(owned_prefix(PREFIX))
        assert not fresh.exists()
        elsewhere.rename(live)
    assert not live.exists()
    assert sweep_leftovers(tmp_path, PREFIX) == []


def test_a_grading_scratch_in_the_shared_cache_is_locked_while_in_use(tmp_path: Path) -> None:
    """Ray nodes on one host share the cache folder in PID namespaces of their own: a scratch in
    use must survive their sweeps (before, only its name spoke for it)."""
    scratch = new_scratch(tmp_path)
    assert held(scratch)
    foreign = scratch.with_name("grade-999999999-1-inuse")
    scratch.rename(foreign)
    try:
        new_scratch(tmp_path)  # another grader's start sweeps
        assert foreign.is_dir()
    finally:
        foreign.rename(scratch)
    remove_tree(scratch)
    assert not scratch.exists() and not held(tmp_path)


@pytest.mark.parametrize("prefix", ["benchwright-mini-", "benchwright-chromium-",
                                    "benchwright-site-", "benchwright-package-",
                                    "benchwright-envbuild-", "benchwright-egress-",
                                    "benchwright-fds-", "grade-"])
def test_each_temporary_folder_is_swept_after_a_kill(tmp_path: Path, prefix: str) -> None:
    left = _killed_owner(tmp_path, prefix)
    with OwnedTemp(prefix, tmp_path):
        assert not left.exists()


def test_the_users_make_owned_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Chromium work folder, a remote site worker's scratch and an egress proxy's folder are
    owned folders."""
    from benchwright.sandbox.egress.proxy import EgressProxy
    from benchwright.web.browser.shared_browser import CHROMIUM_PREFIX, SharedBrowser
    from benchwright.web.trials.remote_runner import HostedRunner

    tmp_path = Path(tempfile.mkdtemp(prefix="owned-", dir="/tmp"))  # a unix socket's path is
    monkeypatch.setenv("TMPDIR", str(tmp_path))                   # short: not under pytest's
    monkeypatch.setattr("tempfile.tempdir", None)
    browser = SharedBrowser()
    site = HostedRunner("fake")
    with EgressProxy([]):
        made = sorted(p.name for p in tmp_path.iterdir())
        for prefix in (CHROMIUM_PREFIX, "benchwright-site-", "benchwright-egress-"):
            assert [n.startswith(owned_prefix(prefix)) for n in made].count(True) == 1
        assert all(held(p) for p in tmp_path.iterdir())
    browser.close()
    site.close()
    assert list(tmp_path.iterdir()) == []
    tmp_path.rmdir()
