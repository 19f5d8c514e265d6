"""No credential survives in a web run directory: the model's key (in its variable and inside
`--base-url`), keys that only the URL holds, the sites' passwords from the environment config,
and credential headers sent to the model's endpoint. Each test greps every byte of every file.

The first test is the real thing (Chromium, browser-use, benchwright's fake LLM server, the local
suite); the others drive the run loop with a trial runner that writes every secret it can see
into every file a trial has, as a leaky agent would.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.errors import UserInputError
from benchwright.web.evaluation.scoring import HISTORY, NETWORK_HAR
from benchwright.web.sites.config import DEFAULT_AUTO_LOGIN
from benchwright.web.trials.models import (
    AgentName,
    AgentSpec,
    TrialOutcome,
    TrialRequest,
    TrialStatus,
    WebRunConfig,
)
from benchwright.web.trials.runner import create_web_run, execute_web_run
from benchwright.web.trials.suites import open_suite
from tests.helpers.web_suites import write_suite

KEY = "sk-bw-redaction-env-key-7f3a9c"
URL_ONLY = "url-only-password-51e0b2"
QUERY_ONLY = "query-only-token-c4d8e1"
SITE_PASSWORD = "site-form-password-9b27"
HEADER_PASSWORD = "auto-login-password-3d61"
BEARER_ONLY = "bearer-only-value-0aa7f3"
DEFAULT_PASSWORDS = [h.value.partition(":")[2] for h in DEFAULT_AUTO_LOGIN.values()]


def leaks(root: Path, values: list[str]) -> dict[str, list[str]]:
    """Which values appear, raw, in which files under `root` (every file, every byte)."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes()
        for value in values:
            if value.encode() in data:
                found.setdefault(value, []).append(str(path.relative_to(root)))
    return found


@pytest.fixture
def key_in_env() -> Iterator[None]:
    os.environ["BW_TEST_WEB_KEY"] = KEY
    try:
        yield
    finally:
        del os.environ["BW_TEST_WEB_KEY"]


@pytest.mark.browser
@pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                    reason="needs browser-use: pip install 'benchwright[web]'")
def test_a_browser_use_run_keeps_no_key(tmp_path: Path) -> None:
    from benchwright.testing import FakeLLMServer, Script

    chatter = f"key {KEY}, url {URL_ONLY}, passwords {' '.join(DEFAULT_PASSWORDS)}"

    def turn(action: dict[str, Any]) -> dict[str, Any]:
        output = {"thinking": chatter, "evaluation_previous_goal": chatter, "memory": chatter,
                  "next_goal": chatter, "action": [action]}
        return {"text": json.dumps(output), "usage": {"input_tokens": 1000, "output_tokens": 50}}

    script = Script.model_validate({"turns": [
        turn({"scroll": {"down": True, "pages": 1}}),
        turn({"done": {"text": "NOT_FOUND_ERROR: there is no order #000000131",
                       "success": False}}),
    ]})
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != "BENCHWRIGHT_WEB_TRIAL_RUNNER"}
    env["BW_TEST_WEB_KEY"] = KEY
    with FakeLLMServer(script) as server:
        # The key is also inside the URL (as its password), beside a value only the URL holds.
        base = server.base_url.replace("http://", f"http://{URL_ONLY}:{KEY}@", 1)
        done = subprocess.run(
            [sys.executable, "-m", "benchwright", "run", "web", "--agent", "browser-use",
             "--model", "gpt-4.1-mini", "--base-url", f"{base}/v1", "--api-key-env",
             "BW_TEST_WEB_KEY", "--task-ids", "9005", "--keep-browser-files", "--out", str(out),
             "--json"], capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(server.requests) == 2
    assert json.loads(done.stdout)["n_trials"] == 1
    trial = out / "tasks" / "9005" / "trial_1"
    assert (trial / NETWORK_HAR).is_file() and (out / "manifest.json").is_file()
    assert leaks(out, [KEY, URL_ONLY, *DEFAULT_PASSWORDS]) == {}
    # The agent did leak it: marked by both names that held it.
    assert "<redacted:BASE_URL_PASSWORD,BW_TEST_WEB_KEY>" in (trial / HISTORY).read_text()
    assert "<redacted:BASE_URL_USER>" in (out / "manifest.json").read_text()


def leaky_runner(secrets: list[str], model_origin: str) -> type:
    class LeakyRunner:
        """Writes every secret into the HAR (URL, header, body), the history and the errors."""

        def run_trial(self, request: TrialRequest) -> TrialOutcome:
            text = " ".join(secrets)
            entries = [_entry(f"{model_origin}/v1/chat/completions?note={secrets[0]}",
                              {"Authorization": f"Bearer {BEARER_ONLY}", "x-api-key": BEARER_ONLY},
                              text),
                       _entry(f"{next(iter(request.site_urls.values()))}/login", {}, text)]
            har = {"log": {"version": "1.2", "entries": entries}}
            (request.trial_dir / NETWORK_HAR).write_text(json.dumps(har))
            (request.trial_dir / HISTORY).write_text(json.dumps({"steps": [{"thinking": text}]}))
            (request.trial_dir / "browser").mkdir()
            (request.trial_dir / "browser" / "agent.log").write_text(text)
            return TrialOutcome(status=TrialStatus.COMPLETED, final_text="Done.",
                                agent_success=True, errors=[f"leaked: {text}"])

        def close(self) -> None:
            """Nothing to release."""

    return LeakyRunner


def _entry(url: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    return {"request": {"method": "POST", "url": url,
                        "headers": [{"name": k, "value": v} for k, v in headers.items()],
                        "postData": {"mimeType": "text/plain", "text": body}},
            "response": {"status": 200, "headers": []}}


def _suite_with_passwords(tmp_path: Path) -> tuple[Path, Path]:
    tasks, env = write_suite(tmp_path / "suite")
    config = yaml.safe_load(env.read_text())
    config["sites"]["shopping"]["credentials"] = {"username": "emma", "password": SITE_PASSWORD}
    config["sites"]["reddit"]["auto_login_header"] = {"name": "X-Postmill-Auto-Login",
                                                      "value": f"someone:{HEADER_PASSWORD}"}
    env.write_text(yaml.safe_dump(config))
    return tasks, env


MODEL = "http://127.0.0.1:9"
BASE_URL = f"http://bw:{URL_ONLY}@127.0.0.1:9/v1?api_key={QUERY_ONLY}&key={KEY}"
EVERY_SECRET = [KEY, URL_ONLY, QUERY_ONLY, SITE_PASSWORD, HEADER_PASSWORD]


def _leaky_run(tmp_path: Path) -> Path:
    tasks, env = _suite_with_passwords(tmp_path)
    suite = open_suite(str(tasks), env)
    run_dir = tmp_path / "run"
    config = WebRunConfig(suite=suite.name, task_ids=[7001, 7004], env_config=env,
                          agent=AgentSpec(name=AgentName.BROWSER_USE, model="m",
                                          base_url=BASE_URL, api_key_env="BW_TEST_WEB_KEY"),
                          runner="fake")
    create_web_run(config, run_dir, suite)
    assert leaks(run_dir, EVERY_SECRET) == {}, "the manifest holds a secret"
    execute_web_run(run_dir, runner_factory=leaky_runner(EVERY_SECRET, MODEL), config=config)
    return run_dir


def test_every_file_of_a_leaky_run_is_swept(tmp_path: Path, key_in_env: None) -> None:
    run_dir = _leaky_run(tmp_path)
    assert leaks(run_dir, [*EVERY_SECRET, BEARER_ONLY]) == {}
    har = json.loads((run_dir / "tasks" / "7001" / "trial_1" / NETWORK_HAR).read_text())
    sent = {h["name"]: h["value"] for h in har["log"]["entries"][0]["request"]["headers"]}
    assert sent == {"Authorization": "<redacted:AUTHORIZATION_HEADER>",
                    "x-api-key": "<redacted:X_API_KEY_HEADER>"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["agent"]["base_url"] == (
        "http://bw:<redacted:BASE_URL_PASSWORD>@127.0.0.1:9/v1?api_key="
        "<redacted:BASE_URL_API_KEY>&key=<redacted:BASE_URL_KEY,BW_TEST_WEB_KEY>")


def test_a_resumed_run_gets_the_url_credentials_back_from_the_environment(
        tmp_path: Path, key_in_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _leaky_run(tmp_path)
    (run_dir / "journal.jsonl").write_text("")  # every trial is redone
    with pytest.raises(UserInputError) as refused:
        execute_web_run(run_dir, runner_factory=leaky_runner(EVERY_SECRET, MODEL))
    assert "BASE_URL_API_KEY" in (refused.value.hint or "")
    seen: list[str | None] = []

    class Recording(leaky_runner(EVERY_SECRET, MODEL)):  # type: ignore[misc]
        def run_trial(self, request: TrialRequest) -> TrialOutcome:
            seen.append(request.agent.base_url)
            return super().run_trial(request)  # type: ignore[no-any-return]

    monkeypatch.setenv("BASE_URL_PASSWORD", URL_ONLY)
    monkeypatch.setenv("BASE_URL_API_KEY", QUERY_ONLY)
    execute_web_run(run_dir, runner_factory=Recording)
    assert seen and set(seen) == {BASE_URL}
    assert leaks(run_dir, [*EVERY_SECRET, BEARER_ONLY]) == {}
