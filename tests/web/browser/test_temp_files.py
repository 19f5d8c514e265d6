"""Chromium leaves nothing in the machine's temporary folder: its own temporary files
(`org.chromium.Chromium.*`, which it leaves at every exit) go in its work folder, removed with it
(issue 42 point 5: nothing left outside the run folder after a web run)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers.testsite import SiteServer

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(shutil.which("chromium") is None
                                 and not Path("/usr/bin/chromium").exists(),
                                 reason="needs Debian's chromium")]


def test_a_browser_started_twice_and_closed_leaves_no_temporary_file(
        site: SiteServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchwright.web.browser.shared_browser import SharedBrowser

    temp = Path(tempfile.mkdtemp(prefix="bw-", dir="/tmp"))  # short: Chromium's sockets
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    try:
        browser = SharedBrowser(site_urls=[site.url])
        asyncio.run(browser.reset())
        browser.running().stop()  # a browser that died: the next trial starts another
        asyncio.run(browser.reset())
        assert browser.launches == 2
        browser.close()
        assert sorted(p.name for p in temp.iterdir()) == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def test_a_killed_runs_singleton_folder_goes_with_its_profile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """kill -9 of a process whose Chromium was running: the next browser's start sweeps the work
    folder and the singleton folder its profile names; another Chromium's is left alone."""
    from benchwright.web.browser.shared_browser import CHROMIUM_PREFIX, SharedBrowser

    temp = Path(tempfile.mkdtemp(prefix="bw-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", None)
    hold = ("import asyncio, os, signal, sys\n"
            "from benchwright.web.browser.shared_browser import SharedBrowser\n"
            "b = SharedBrowser(); asyncio.run(b.reset()); print('up', flush=True)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    try:
        done = subprocess.run([sys.executable, "-c", hold], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "TMPDIR": str(temp)})
        assert "up" in done.stdout, done.stderr[-2000:]
        other = temp / "org.chromium.Chromium.someone"  # not named by our profile: kept
        other.mkdir()
        left = sorted(p.name for p in temp.iterdir())
        assert any(n.startswith(CHROMIUM_PREFIX) for n in left), left
        assert sum(n.startswith("org.chromium.Chromium.") for n in left) == 2, left
        SharedBrowser().close()  # a new start: the sweep
        assert sorted(p.name for p in temp.iterdir()) == [other.name]
    finally:
        shutil.rmtree(temp, ignore_errors=True)
