"""`metrics judge` recorded against the fake LLM server acting as the real endpoint, then
replayed on a copy of the same run with the server stopped and no key: every checkpoint's
flags, the requests' usage and the cost are the recording's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers import run_cli
from tests.helpers.shared_runs import bundled_oracle_run

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]
KEY_ENV, KEY = "JUDGE_CREDENTIAL_VAR", "judge-secret-value-5e1f0a9c2d7b"
FLAG = {"criteria": "comment_restates_code", "file_name": "ledger.py", "start": 20, "end": 22,
        "confidence": 4, "explanation": "restates the code"}


def judge_script() -> Script:
    """Checkpoint 1's readability request gets a flag, every other request none."""
    usage = {"input_tokens": 1000, "output_tokens": 100, "cost_usd": 0.01}
    return Script.model_validate({"rules": [
        {"match": ["ledger_cli, checkpoint 1:", "## comment_restates_code ("],
         "replies": [{"text": json.dumps({"flags": [FLAG]}), "usage": usage}]},
        {"match": [], "replies": [{"text": json.dumps({"flags": []}), "usage": usage}]}]})


def judge(run: Path, base_url: str, env: dict[str, str], *options: str
          ) -> subprocess.CompletedProcess[str]:
    return run_cli("metrics", "judge", str(run), "--model", "fake-judge", "--base-url",
                   f"{base_url}/v1", "--retry-backoff", "0", "--retries", "0",
                   "--problem", "ledger_cli", "--json", *options, env=env)


def rubric(run: Path) -> list[list[dict[str, Any]]]:
    files = sorted(run.glob("ledger_cli/trial_1/checkpoint_*/rubric.jsonl"))
    return [[json.loads(line) for line in f.read_text().splitlines()] for f in files]


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle over the bundled problems, made once per test session (tests/judge and
    others use it too); judged here for ledger_cli only (`--problem ledger_cli`)."""
    out, _summary = bundled_oracle_run(tmp_path_factory)
    return out


def record_judging(oracle_run: Path, tmp_path: Path
                   ) -> tuple[subprocess.CompletedProcess[str], str, int]:
    """Two copies of the run (first, again); the first judged with its requests recorded
    into tmp_path/cassette against the fake server, which is stopped afterwards."""
    first, again = tmp_path / "first", tmp_path / "again"
    shutil.copytree(oracle_run, first, symlinks=True)
    shutil.copytree(oracle_run, again, symlinks=True)
    with FakeLLMServer(judge_script()) as server:
        recorded = judge(first, server.base_url, {**os.environ, KEY_ENV: KEY},
                         "--api-key-env", KEY_ENV, "--llm-record", str(tmp_path / "cassette"))
        base_url, calls = server.base_url, len(server.model_calls)
    assert recorded.returncode == 0, recorded.stderr
    return recorded, base_url, calls


def test_a_judging_replays_with_no_server_and_no_key(oracle_run: Path, tmp_path: Path) -> None:
    first, again, cassette = tmp_path / "first", tmp_path / "again", tmp_path / "cassette"
    recorded, base_url, calls = record_judging(oracle_run, tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, "OPENAI_API_KEY")}
    replayed = judge(again, base_url, env, "--llm-replay", str(cassette))
    assert replayed.returncode == 0, replayed.stderr
    before, after = json.loads(recorded.stdout), json.loads(replayed.stdout)
    assert before["requests_made"] == after["requests_made"] == calls > 0
    assert before["cost_usd_paid"] == after["cost_usd_paid"] == pytest.approx(0.01 * calls)
    assert rubric(again) == rubric(first) and any(rubric(first))
    leaked = [p for p in cassette.rglob("*.gz")
              if subprocess.run(["zgrep", "-q", "--", KEY, str(p)]).returncode == 0]
    assert leaked == []
    stats = run_cli("llm", "cassette", "stats", str(cassette), "--json")
    assert stats.returncode == 0, stats.stderr
    [judge_row] = json.loads(stats.stdout)["agents"]
    assert judge_row["agent"] == "judge" and judge_row["calls"] == calls
    assert judge_row["cost_usd"] == pytest.approx(0.01 * calls)


def test_a_judging_of_changed_code_diverges(oracle_run: Path, tmp_path: Path) -> None:
    again, cassette = tmp_path / "again", tmp_path / "cassette"
    _recorded, base_url, _calls = record_judging(oracle_run, tmp_path)
    for source in again.glob("ledger_cli/trial_1/checkpoint_1/snapshot/*.py"):
        source.write_text(source.read_text() + "\n# changed after the recording\n")
    replayed = judge(again, base_url, dict(os.environ), "--llm-replay", str(cassette))
    assert replayed.returncode == 3, replayed.stderr
    assert "replay diverged in judge" in replayed.stderr and "Traceback" not in replayed.stderr
