"""Chromium's start and stop (issue 42): it leaves nothing in the machine's temporary folder (its
singleton socket's folder, `org.chromium.Chromium.*`, which it leaves at every exit, is removed
with it, or with a killed run's work folder), and a browser that fails to start is the harness's
failure, never the agent's."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    folder; the singleton folder stayed in the browser's private /tmp (confinement.py), and
    another Chromium's is left alone."""
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
        assert sum(n.startswith("org.chromium.Chromium.") for n in left) == 1, left
        SharedBrowser().close()  # a new start: the sweep
        assert sorted(p.name for p in temp.iterdir()) == [other.name]
    finally:
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.parametrize("exit_code", [1, -9], ids=["exits", "killed"])
def test_a_browser_that_fails_to_start_is_the_harness_failing(
        tmp_path: Path, site: SiteServer, exit_code: int,
        write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    """Chromium exiting at start (or killed there, as the OOM killer would) is an infrastructure
    error, never the agent's crash: left out of scores, redone by --resume (scheduling's tests),
    no ATIF file."""
    from benchwright.web.browser.launch import BrowserSettings
    from benchwright.web.browser.trial import AgentSpec, TrialRequest, TrialStatus, run_trial
    from benchwright.web.evaluation.tasks import TaskType, WebTask

    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\n" + ("exit 1\n" if exit_code > 0 else "kill -9 $$\n"))
    broken.chmod(0o755)
    task = WebTask(task_id=1, sites=("shopping",), intent_template_id=1,
                   start_urls=("__SHOPPING__",), intent="Look", eval=(), revision=1,
                   task_type=TaskType.RETRIEVE, expected_status="SUCCESS")
    script = write_script([{"done": {"text": "x", "success": True}}])
    request = TrialRequest(task=task, trial_dir=tmp_path / "t", site_urls={"shopping": site.url},
                           agent=AgentSpec(name="scripted", script=script),
                           browser=BrowserSettings(executable=broken))
    outcome = run_trial(request)
    assert outcome.status is TrialStatus.INFRA_ERROR, outcome
    assert any("Chromium exited at start" in e for e in outcome.errors), outcome.errors
    assert outcome.steps == 0
