"""Issue 41, point 5's LLM pass: `metrics causes` sends each failed checkpoint's evidence to the
judge's model (the fake LLM server here, recorded into a cassette), keeps the answers, and
report.md shows them; replayed from the cassette on a copy of the run with the server stopped
and no key, it gives the same causes; asked again, unchanged evidence is not sent again."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers import FIXTURES, run_cli

pytestmark = pytest.mark.sandbox
CAUSES_DIR = FIXTURES / "failure_causes"
KEY_ENV, KEY = "CAUSES_CREDENTIAL_VAR", "causes-secret-value-0b7d41c2"


def _reply(cause: str, exception: str | None, reason: str) -> dict[str, Any]:
    return {"text": json.dumps({"cause": cause, "exception": exception, "reason": reason}),
            "usage": {"input_tokens": 500, "output_tokens": 40}}


SCRIPT = Script.model_validate({"rules": [
    {"match": ["Checkpoint: wrong/trial_1/checkpoint_1"],
     "replies": [_reply("crash", "OverflowError", "the transcript shows an overflow")]},
    {"match": [], "replies": [_reply("crash", "ValueError", "it raised ValueError: boom")]}]})


def _causes(run: Path, *options: str, env: dict[str, str]) -> Any:
    done = run_cli("metrics", "causes", str(run), "--model", "fake-judge", "--json", *options,
                   env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _units(run: Path) -> dict[str, tuple[str, str | None, bool]]:
    done = run_cli("report", str(run), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return {u["unit"].split("/")[0]: (u["cause"], u["exception"], u["refined"])
            for u in json.loads(done.stdout)["failure_causes"]["units"]}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("refine") / "run"
    done = run_cli("run", "coding", "--problems-dir", str(CAUSES_DIR), "--problem", "wrong",
                   "--problem", "crash", "--agent", "command", "--agent-command",
                   (CAUSES_DIR / "agent.sh").read_text(), "--no-metrics", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_refined_causes_record_then_replay_offline(run: Path, tmp_path: Path) -> None:
    first, again, cassette = tmp_path / "first", tmp_path / "again", tmp_path / "cassette"
    shutil.copytree(run, first, symlinks=True)
    shutil.copytree(run, again, symlinks=True)
    assert _units(first) == {"wrong": ("wrong output", None, False),
                             "crash": ("crash", "ValueError", False)}
    with FakeLLMServer(SCRIPT) as server:
        options = ("--base-url", f"{server.base_url}/v1", "--api-key-env", KEY_ENV)
        recorded = _causes(first, *options, "--llm-record", str(cassette),
                           env={**os.environ, KEY_ENV: KEY})
        calls = len(server.model_calls)
        base_url = server.base_url
    assert calls == 2 and recorded["errors"] == []
    expected = {"wrong": ("crash", "OverflowError", True), "crash": ("crash", "ValueError", True)}
    assert _units(first) == expected
    assert "the transcript shows an overflow" in (first / "report.md").read_text()
    env = {k: v for k, v in os.environ.items() if k not in (KEY_ENV, "OPENAI_API_KEY")}
    replayed = _causes(again, "--base-url", f"{base_url}/v1", "--llm-replay", str(cassette),
                       env=env)
    assert replayed["answers"] == recorded["answers"]
    assert _units(again) == expected
    texts = [gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
             for p in cassette.rglob("*") if p.is_file()]
    assert texts and not any(KEY.encode() in t for t in texts)


def test_asked_again_unchanged_evidence_is_not_sent(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(run, copy, symlinks=True)
    with FakeLLMServer(SCRIPT) as server:
        options = ("--base-url", f"{server.base_url}/v1")
        _causes(copy, *options, env=os.environ.copy())
        _causes(copy, *options, env=os.environ.copy())
        assert len(server.model_calls) == 2  # the second asking sent nothing


def test_no_model_is_one_line(run: Path) -> None:
    done = run_cli("metrics", "causes", str(run))
    assert done.returncode == 2
    assert "no model to sort the failures with" in done.stderr and "Traceback" not in done.stderr
