"""The `mini` agent end to end through `benchwright run coding`, against the fake LLM server:
a scripted solution passes with its usage and cost recorded, provider failures end as
infrastructure errors that `--resume` redoes, and no API key value reaches the run directory."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers import run_cli
from tests.helpers.mini_runs import FAKE_KEY, PROBLEM

pytestmark = pytest.mark.sandbox
pytest.importorskip("openai")


def solution_script(problem_dir: Path, leak: str = "") -> Script:
    """Turns that write the reference solution of checkpoint 1 with bash, then finish."""
    solution = problem_dir / "solutions" / "checkpoint_1"
    writes = [f"cat > {f.name} <<'BENCHWRIGHT_EOF'\n{f.read_text()}BENCHWRIGHT_EOF"
              for f in sorted(solution.iterdir()) if f.is_file()]
    if leak:  # a model that writes the key it saw somewhere into the workspace
        writes.append(f"echo 'OPENAI_API_KEY={leak}' > .env")
    turns: list[dict[str, Any]] = [
        {"text": "I will write the program.",
         "tool_calls": [{"name": "bash", "arguments": {"command": "\n".join(writes)}}]},
        {"text": "Let me check it runs.",
         "tool_calls": [{"name": "bash", "arguments": {"command": "ls && python --version"}}]},
        {"text": "Done: ledger.py prints the balances."}]
    return Script.model_validate({"turns": turns})


def _env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": FAKE_KEY}


def _run(server: FakeLLMServer, *args: str) -> dict[str, Any]:
    proc = run_cli("run", "coding", *args, "--json", env=_env())
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _start(server: FakeLLMServer, problems: Path, out: Path, *options: str) -> dict[str, Any]:
    return _run(server, "--agent", "mini", "--model", "fake", "--problems-dir", str(problems),
                "--base-url", f"{server.base_url}/v1", "--no-metrics", "--out", str(out),
                "-A", "input_price_per_mtok=2", "-A", "output_price_per_mtok=8", *options)


def _records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "checkpoint_records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_scripted_solution_passes_with_usage_cost_and_no_key_in_the_run(
        problems_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(solution_script(problems_dir / PROBLEM, leak=FAKE_KEY)) as server:
        result = _start(server, problems_dir, out)
        calls = server.model_calls
    assert result["n_checkpoints"] == 1 and result["n_checkpoints_passed"] == 1
    [record] = _records(out)
    usage = record["agent"]["usage"]
    assert record["agent"]["status"] == "completed" and usage["steps"] == 3
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    expected = (usage["input_tokens"] * 2 + usage["output_tokens"] * 8) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected)
    assert [t["function"]["name"] for t in calls[0].body["tools"]] == ["bash"]
    assert calls[1].body["messages"][-1]["role"] == "tool"
    trajectory = json.loads((out / PROBLEM / "trial_1" / "checkpoint_1" / "agent"
                             / "trajectory.json").read_text())
    assert trajectory["format"] == "benchwright.trajectory/1"
    assert trajectory["usage"] == usage and trajectory["cost_source"] == "price_table"
    assert [s["role"] for s in trajectory["steps"]][:4] == ["system", "user", "assistant", "tool"]
    _assert_no_key(out)


def _assert_no_key(run_dir: Path) -> None:
    """grep -r for the key over the whole run directory: it must be nowhere."""
    found = subprocess.run(["grep", "-rl", "--", FAKE_KEY, str(run_dir)],
                           capture_output=True, text=True)
    assert found.stdout == "", f"the API key leaked into: {found.stdout}"
    env_file = run_dir / PROBLEM / "trial_1" / "checkpoint_1" / "snapshot" / ".env"
    assert env_file.read_text().strip() == "OPENAI_API_KEY=<redacted:OPENAI_API_KEY>"


def test_429_on_every_call_is_an_infra_error_that_resume_redoes(
        problems_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    script = solution_script(problems_dir / PROBLEM)
    script.fault_all = script.model_validate({"fault_all": {"kind": "http_429",
                                                            "retry_after": 0}}).fault_all
    with FakeLLMServer(script) as server:
        first = _start(server, problems_dir, out, "-A", "llm_retries=2", "-A",
                       "retry_backoff_s=0", "-A", "infra_retries=1", "-A", "infra_backoff_s=0")
        assert first["n_checkpoints_infra_error"] == 1 and first["n_checkpoints"] == 0
        assert first["complete"] is False and len(server.model_calls) == 6  # 2 runs x 3 calls
        assert _records(out) == []
        infra = json.loads((out / PROBLEM / "trial_1" / "infra_error.json").read_text())
        assert infra["checkpoint"] == "checkpoint_1" and infra["attempts"] == 2
        assert infra["agent"]["status"] == "infra_error" and "429" in infra["agent"]["error"]
        report = (out / "report.md").read_text()
        assert "## Infrastructure errors" in report
        assert "| ledger_cli | 1 | checkpoint_1 | 2 |" in report
        server.clear_faults()
        resumed = _run(server, "--resume", str(out))
    assert resumed["n_checkpoints_infra_error"] == 0 and resumed["complete"] is True
    assert resumed["n_checkpoints"] == 1 and resumed["n_checkpoints_passed"] == 1
    assert not (out / PROBLEM / "trial_1" / "infra_error.json").exists()
    assert "Infrastructure errors" not in (out / "report.md").read_text()
