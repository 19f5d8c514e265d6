"""Cookies injected before the first request, form logins, auto-login headers, and a trial
killed with SIGKILL that still leaves a parseable HAR."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from benchwright.cli.main import app as main_app
from benchwright.web.browser.cookies import load_cookies
from benchwright.web.browser.trial import (
    AgentSpec,
    LiveLogin,
    TrialRequest,
    TrialStatus,
    run_trial,
)
from benchwright.web.evaluation.tasks import WebTask
from tests.helpers.processes import ProcessTree, wait_for
from tests.helpers.testsite import PASSWORD, SESSION, USER, SiteServer

SESSION_COOKIE = {"name": "session", "value": SESSION, "domain": "127.0.0.1", "path": "/",
                  "expires": -1, "session": True, "size": 15}


def first_entry(trial_dir: Path) -> dict[str, Any]:
    har = json.loads((trial_dir / "network.har").read_text())
    return dict(har["log"]["entries"][0])


def sent_headers(entry: dict[str, Any]) -> dict[str, str]:
    return {h["name"].lower(): h["value"] for h in entry["request"]["headers"]}


def account_script(write: Callable[[list[dict[str, Any]]], Path]) -> Path:
    return write([{"navigate": {"url": "__SHOPPING__/account"}},
                  {"done": {"text": "account page", "success": True}}])


def test_injected_cookies_reach_the_first_request(
        site: SiteServer, shared: Any, task: WebTask, tmp_path: Path,
        write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    request = TrialRequest(task=task, trial_dir=tmp_path / "t", site_urls={"shopping": site.url},
                           agent=AgentSpec(name="scripted", script=account_script(write_script)),
                           cookies=[SESSION_COOKIE], extra_headers={"X-Auto-Login": "alice:pw"})
    outcome = run_trial(request, browser=shared)
    assert outcome.status is TrialStatus.COMPLETED, outcome.errors
    entry = first_entry(request.trial_dir)
    assert entry["request"]["url"].endswith("/account")
    assert f"session={SESSION}" in sent_headers(entry)["cookie"]
    assert entry["response"]["status"] == 200  # signed in, no redirect to /login
    assert sent_headers(entry)["x-auto-login"] == "alice:pw"
    assert site.seen[-1][2].get("X-Auto-Login") == "alice:pw" or any(
        h.get("X-Auto-Login") for _, _, h in site.seen)


def test_state_does_not_leak_into_the_next_trial(
        site: SiteServer, shared: Any, task: WebTask, tmp_path: Path,
        write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    request = TrialRequest(task=task, trial_dir=tmp_path / "t", site_urls={"shopping": site.url},
                           agent=AgentSpec(name="scripted", script=account_script(write_script)))
    run_trial(request, browser=shared)
    entry = first_entry(request.trial_dir)
    assert "session=" not in sent_headers(entry).get("cookie", "")
    assert entry["response"]["status"] == 302  # not signed in: sent to /login


def test_live_login_happens_before_recording(
        site: SiteServer, shared: Any, task: WebTask, tmp_path: Path,
        write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    login = LiveLogin(login_url=site.url + "/login", username=USER, password=PASSWORD)
    request = TrialRequest(task=task, trial_dir=tmp_path / "t", site_urls={"shopping": site.url},
                           agent=AgentSpec(name="scripted", script=account_script(write_script)),
                           live_logins=[login])
    outcome = run_trial(request, browser=shared)
    assert outcome.status is TrialStatus.COMPLETED, outcome.errors
    entry = first_entry(request.trial_dir)
    assert entry["request"]["url"].endswith("/account") and entry["response"]["status"] == 200


def test_auth_capture_saves_login_cookies_that_trials_use(
        site: SiteServer, shared: Any, task: WebTask, tmp_path: Path,
        write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    config = tmp_path / "env.yaml"
    config.write_text(yaml.safe_dump({"sites": {"shopping": {
        "url": site.url, "credentials": {"username": USER, "password": PASSWORD}}}}))
    out = tmp_path / "cookies.json"
    result = CliRunner().invoke(main_app, ["web", "auth", "capture", "--site", "shopping",
                                           "--config", str(config), "--out", str(out),
                                           "--login-path", "/login"])
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert saved["schema"] == "benchwright.web-cookies/1" and saved["site"] == "shopping"
    assert {"session": SESSION}.items() <= {c["name"]: c["value"]
                                           for c in load_cookies(out)}.items()
    request = TrialRequest(task=task, trial_dir=tmp_path / "t", site_urls={"shopping": site.url},
                           agent=AgentSpec(name="scripted", script=account_script(write_script)),
                           cookies=load_cookies(out))
    assert run_trial(request, browser=shared).status is TrialStatus.COMPLETED
    entry = first_entry(request.trial_dir)
    assert entry["request"]["url"].endswith("/account") and entry["response"]["status"] == 200


def test_auth_capture_with_wrong_password_fails(site: SiteServer, tmp_path: Path) -> None:
    config = tmp_path / "env.yaml"
    config.write_text(yaml.safe_dump({"sites": {"shopping": {
        "url": site.url, "credentials": {"username": USER, "password": "wrong"}}}}))
    result = subprocess.run([sys.executable, "-m", "benchwright", "web", "auth", "capture",
                             "--site", "shopping", "--config", str(config), "--out",
                             str(tmp_path / "c.json"), "--login-path", "/login"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 3, result.stderr
    assert "still on the login page" in result.stderr and "Traceback" not in result.stderr


KILLED_TRIAL = """
import sys
from pathlib import Path
from benchwright.web.browser.trial import AgentSpec, TrialRequest, run_trial
from benchwright.web.evaluation.tasks import WebTask
task = WebTask(task_id=1, sites=("shopping",), intent_template_id=1, start_urls=("__SHOPPING__",),
               intent="x", eval=(), revision=1, task_type="MUTATE", expected_status="SUCCESS")
run_trial(TrialRequest(task=task, trial_dir=Path(sys.argv[1]), site_urls={"shopping": sys.argv[2]},
                       agent=AgentSpec(name="scripted", script=Path(sys.argv[3]))))
"""


def har_urls(path: Path) -> list[str]:
    """The request URLs of a HAR being written (none before it exists)."""
    if not path.exists():
        return []
    return [e["request"]["url"] for e in json.loads(path.read_text())["log"]["entries"]]


def test_killed_trial_leaves_a_parseable_har(
        site: SiteServer, tmp_path: Path,
        write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    script = write_script([{"navigate": {"url": "__SHOPPING__/"}},
                           {"navigate": {"url": "__SHOPPING__/form"}},
                           {"wait": {"seconds": 30}},
                           {"done": {"text": "never", "success": True}}])
    trial_dir = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_TRIAL, str(trial_dir), site.url,
                             str(script)], env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                 sys.path)})
    har_path = trial_dir / "network.har"
    tree = ProcessTree(proc.pid)  # the trial and the Chromium it starts
    with tree.watch():
        wait_for(lambda: any(u.endswith("/form") for u in har_urls(har_path)),
                 what="the trial to load the form")
        assert any("chromium" in " ".join(p.argv) for p in tree.running())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        har = json.loads(har_path.read_text())
        urls = [e["request"]["url"] for e in har["log"]["entries"]]
        assert urls[0] == site.url + "/" and any(u.endswith("/form") for u in urls)
        left = tree.wait_until_gone(timeout_s=120)  # Chromium died with its harness
        assert left == [], [" ".join(p.argv)[:200] for p in left]
