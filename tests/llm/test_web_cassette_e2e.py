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


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A browser-use run recorded against the fake server, which is stopped afterwards."""
    root = tmp_path_factory.mktemp("web")
    with FakeLLMServer(SCRIPT) as server:
        first = run_web(root / "first", server.base_url, KEY, "--llm-record",
                        str(root / "cassette"))
        base_url, calls = server.base_url, len(server.model_calls)
    assert first.returncode == 0, first.stderr[-3000:]
    assert calls == 2 and json.loads(first.stdout)["n_passed"] == 1
    return root / "first", root / "cassette", base_url


def test_browser_use_replays_with_no_server_and_no_key(
        recorded: tuple[Path, Path, str], tmp_path: Path) -> None:
    first, cassette, base_url = recorded
    again = run_web(tmp_path / "again", base_url, None, "--llm-replay", str(cassette))
    assert again.returncode == 0, again.stderr[-3000:]
    before, after = trial(first), trial(tmp_path / "again")
    assert before["score"] == 1.0 and before["input_tokens"] == 2000
    assert after == before
    assert json.loads(again.stdout)["n_passed"] == 1
    assert json.loads(again.stdout)["llm"]["mode"] == "replay"
    assert "model calls: replayed from" in (tmp_path / "again" / "report.md").read_text()
    leaked = [p for p in cassette.rglob("*.gz")
              if subprocess.run(["zgrep", "-q", "--", KEY, str(p)]).returncode == 0]
    assert leaked == []


def test_a_changed_prompt_diverges_naming_the_trial(
        recorded: tuple[Path, Path, str], tmp_path: Path) -> None:
    _first, cassette, base_url = recorded
    out = tmp_path / "again"
    again = run_web(out, base_url, None, "--llm-replay", str(cassette), "--prompt", "plain")
    assert again.returncode == 3, again.stderr[-3000:]
    assert "replay diverged in web/9005/trial_1: request 0" in again.stderr
    assert "Traceback" not in again.stderr
    folder = out / "tasks" / TASK / "trial_1"
    infra = json.loads((folder / "infra_error.json").read_text())
    assert "replay diverged" in infra["errors"][0]
    assert not (folder / "metrics.json").exists() and not (folder / "agent_response.json").exists()
    [record] = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    assert record["status"] == "infra_error"
