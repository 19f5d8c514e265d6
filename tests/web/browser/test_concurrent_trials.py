"""Two trials of one site at the same time, as `--concurrency-per-site 2` runs them (one trial
process, with its own Chromium, per trial; two threads waiting for them), each signed in as a
different user of the local suite: every request of each HAR carries its own session cookie and
never the other's."""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from benchwright.web.local_suite import load_local_dataset, serve_suite
from benchwright.web.local_suite.sessions import session_token

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                       reason="needs browser-use: pip install 'benchwright[web]'"),
]
USERS = ("emma.lopez@gmail.com", "ben.okafor@example.com")


def _script(folder: Path) -> Path:
    path = folder / "script.yaml"
    path.write_text(yaml.safe_dump({"task_id": 9001, "steps": [
        {"navigate": {"url": "__SHOPPING__/customer/account"}},
        {"navigate": {"url": "__SHOPPING__/sales/order/history"}},
        {"done": {"text": "$51.95", "success": True}}]}))
    return path


def _cookie_headers(har: Path) -> list[str]:
    entries = json.loads(har.read_text())["log"]["entries"]
    assert entries
    return [h["value"] for e in entries for h in e["request"]["headers"]
            if h["name"].lower() == "cookie"]


def test_two_concurrent_trials_as_different_users_share_nothing(tmp_path: Path) -> None:
    from benchwright.web.trials.models import AgentName, AgentSpec, TrialRequest
    from benchwright.web.trials.trial_process import ProcessTrialRunner

    task = load_local_dataset().tasks[9001]
    outcomes: dict[str, Any] = {}
    with serve_suite() as suite:
        host = urlsplit(suite.site_urls["shopping"]).hostname

        def trial(user: str) -> None:
            runner = ProcessTrialRunner()
            try:
                folder = tmp_path / user
                folder.mkdir()
                outcomes[user] = runner.run_trial(TrialRequest(
                    task=task, trial_dir=folder / "trial", site_urls=suite.site_urls,
                    agent=AgentSpec(name=AgentName.SCRIPTED, script=_script(folder)),
                    cookies=[{"name": "shop_session", "value": session_token(user),
                              "domain": host, "path": "/"}]))
            finally:
                runner.close()

        threads = [threading.Thread(target=trial, args=(user,)) for user in USERS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    for user, other in (USERS, USERS[::-1]):
        assert outcomes[user].status == "completed", outcomes[user]
        sent = _cookie_headers(tmp_path / user / "trial" / "network.har")
        assert sent and all(f"shop_session={session_token(user)}" in c for c in sent), sent
        assert not any(session_token(other) in c for c in sent)
