"""Record once, replay for free, end to end through the CLI (issue 29): a run records its model
traffic against the fake LLM server acting as the real endpoint; the server is stopped; the
same run replayed from the cassette, with no key in the environment, grades the same and
reports the same usage and cost. A changed spec makes the replay diverge, naming the
checkpoint; no key is in any cassette."""

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
from tests.helpers.mini_runs import FAKE_KEY, PROBLEM

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]
pytest.importorskip("openai")
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "BENCHWRIGHT_LLM_API_KEY")


def writing_script(problem_dir: Path) -> Script:
    """Turns that write checkpoint 1's reference solution with bash, look, then finish."""
    solution = problem_dir / "solutions" / "checkpoint_1"
    writes = [f"cat > {f.name} <<'BENCHWRIGHT_EOF'\n{f.read_text()}BENCHWRIGHT_EOF"
              for f in sorted(solution.iterdir()) if f.is_file()]
    return Script.model_validate({"turns": [
        {"text": "I will write the program.",
         "tool_calls": [{"name": "bash", "arguments": {"command": "\n".join(writes)}}]},
        {"text": "Let me check it runs.",
         "tool_calls": [{"name": "bash", "arguments": {"command": "ls && pwd"}}]},
        {"text": "Done: ledger.py prints the balances."}]})


def without_keys(**extra: str) -> dict[str, str]:
    """This environment with no provider key in it (plus `extra`)."""
    return {**{k: v for k, v in os.environ.items() if k not in KEYS}, **extra}


def run_mini(problems: Path, out: Path, base_url: str, env: dict[str, str],
             *traffic: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", "coding", "--agent", "mini", "--model", "fake", "--problems-dir",
                   str(problems), "--base-url", f"{base_url}/v1", "--no-metrics", "--out",
                   str(out), "-A", "input_price_per_mtok=2", "-A", "output_price_per_mtok=8",
                   "-A", "infra_retries=0", *traffic, "--json", env=env)


def records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "checkpoint_records.jsonl"
    lines = path.read_text().splitlines() if path.is_file() else []
    return [json.loads(line) for line in lines]


def graded(record: dict[str, Any]) -> dict[str, Any]:
    """What must be equal between a run and its replay."""
    agent = record["agent"]
    return {"checkpoint": record["checkpoint"], "passed": record["passed"],
            "solved": record["solved"], "verdicts": record["verdicts"],
            "counts": record["counts"], "status": agent["status"], "usage": agent["usage"]}


def assert_no_key(folder: Path, key: str) -> None:
    """No key anywhere, compressed files read unpacked (zgrep)."""
    plain = subprocess.run(["grep", "-rl", "--", key, str(folder)], capture_output=True,
                           text=True)
    packed = [p for p in folder.rglob("*.gz")
              if subprocess.run(["zgrep", "-q", "--", key, str(p)]).returncode == 0]
    assert plain.stdout == "" and packed == [], f"the key leaked: {plain.stdout} {packed}"


@pytest.fixture(scope="module")
def recorded(problems_dir: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, Path, str]:
    """A mini run recorded against the fake server, which is stopped afterwards."""
    root = tmp_path_factory.mktemp("mini")
    with FakeLLMServer(writing_script(problems_dir / PROBLEM)) as server:
        proc = run_mini(problems_dir, root / "run", server.base_url,
                        without_keys(OPENAI_API_KEY=FAKE_KEY),
                        "--llm-record", str(root / "cassette"))
        base_url = server.base_url
    assert proc.returncode == 0, proc.stderr
    return root / "run", root / "cassette", base_url


def test_mini_replays_with_no_server_and_no_key(
        recorded: tuple[Path, Path, str], problems_dir: Path, tmp_path: Path) -> None:
    run, cassette, base_url = recorded
    proc = run_mini(problems_dir, tmp_path / "replay", base_url, without_keys(),
                    "--llm-replay", str(cassette))
    assert proc.returncode == 0, proc.stderr
    [first] = records(run)
    [again] = records(tmp_path / "replay")
    assert first["passed"] and first["agent"]["usage"]["steps"] == 3
    assert graded(again) == graded(first)
    result = json.loads(proc.stdout)
    assert result["llm"]["mode"] == "replay"
    report = (tmp_path / "replay" / "report.md").read_text()
    assert f"model calls: replayed from {cassette}" in report
    assert result["totals"]["cost_usd"] == json.loads(
        (run / "result.json").read_text())["totals"]["cost_usd"]
    assert_no_key(cassette, FAKE_KEY)


def test_an_edited_spec_diverges_naming_the_checkpoint(
        recorded: tuple[Path, Path, str], problems_dir: Path, tmp_path: Path) -> None:
    _run, cassette, base_url = recorded
    edited = tmp_path / "problems"
    shutil.copytree(problems_dir, edited)
    spec = edited / PROBLEM / "checkpoint_1.md"
    spec.write_text(spec.read_text() + "\nAlso print a total line.\n")
    out = tmp_path / "replay"
    proc = run_mini(edited, out, base_url, without_keys(), "--llm-replay", str(cassette))
    assert proc.returncode == 3, proc.stderr
    assert "replay diverged" in proc.stderr and "checkpoint_1" in proc.stderr
    assert "request 0" in proc.stderr and "messages[1].content (character" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert records(out) == []  # nothing journaled: the checkpoint is an infrastructure error
    infra = json.loads((out / PROBLEM / "trial_1" / "infra_error.json").read_text())
    assert "replay diverged" in infra["agent"]["error"]
    folder = out / PROBLEM / "trial_1" / "checkpoint_1"  # never graded: no half of a result
    assert not (folder / "snapshot").exists() and not (folder / "evaluation.json").exists()
    result = json.loads((out / "result.json").read_text())
    assert result["n_checkpoints"] == 0 and result["n_checkpoints_infra_error"] == 1
