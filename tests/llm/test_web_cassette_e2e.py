"""`run web --agent browser-use` on the local suite recorded against the fake LLM server acting
as the real endpoint, then replayed with the server stopped and no key: the same verdict, steps,
tokens and cost; no key in the cassette."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers.cli import run_real_web_cli

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                       reason="needs browser-use: pip install 'benchwright[web]'"),
]
KEY_ENV, KEY = "BW_CASSETTE_WEB_KEY", "sk-benchwright-web-cassette-8d2e4f"
TASK = "9005"


def turn(action: dict[str, Any]) -> dict[str, Any]:
    output = {"thinking": "", "evaluation_previous_goal": "", "memory": "", "next_goal": "",
              "action": [action]}
    return {"text": json.dumps(output), "usage": {"input_tokens": 1000, "output_tokens": 50}}


SCRIPT = Script.model_validate({"turns": [
    turn({"scroll": {"down": True, "pages": 1}}),
    turn({"done": {"text": "NOT_FOUND_ERROR: there is no order #000000131", "success": False}}),
]})


def run_web(out: Path, base_url: str, env_key: str | None, *traffic: str
            ) -> subprocess.CompletedProcess[str]:
    saved = os.environ.pop(KEY_ENV, None)
    if env_key is not None:
        os.environ[KEY_ENV] = env_key
    try:
        return run_real_web_cli("run", "web", "--agent", "browser-use", "--model",
                                "gpt-4.1-mini", "--base-url", f"{base_url}/v1", "--api-key-env",
                                KEY_ENV, "--task-ids", TASK, "--out", str(out), *traffic,
                                "--json")
    finally:
        os.environ.pop(KEY_ENV, None)
        if saved is not None:
            os.environ[KEY_ENV] = saved


def trial(out: Path) -> dict[str, Any]:
    folder = out / "tasks" / TASK / "trial_1"
    metrics = json.loads((folder / "metrics.json").read_text())
    verdict = json.loads((folder / "eval_result.json").read_text())
    return {"score": verdict["score"], "steps": metrics["steps"],
            "input_tokens": metrics["input_tokens"], "output_tokens": metrics["output_tokens"],
            "cost_usd": metrics["cost_usd"], "trial_status": metrics["trial_status"],
            "answer": json.loads((folder / "agent_response.json").read_text())}


def test_browser_use_replays_with_no_server_and_no_key(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette"
    with FakeLLMServer(SCRIPT) as server:
        first = run_web(tmp_path / "first", server.base_url, KEY, "--llm-record", str(cassette))
        base_url, calls = server.base_url, len(server.model_calls)
    assert first.returncode == 0, first.stderr[-3000:]
    again = run_web(tmp_path / "again", base_url, None, "--llm-replay", str(cassette))
    assert again.returncode == 0, again.stderr[-3000:]
    before, after = trial(tmp_path / "first"), trial(tmp_path / "again")
    assert before["score"] == 1.0 and before["input_tokens"] == 2000 and calls == 2
    assert after == before
    assert json.loads(again.stdout)["n_passed"] == json.loads(first.stdout)["n_passed"] == 1
    leaked = [p for p in cassette.rglob("*.gz")
              if subprocess.run(["zgrep", "-q", "--", KEY, str(p)]).returncode == 0]
    assert leaked == []
