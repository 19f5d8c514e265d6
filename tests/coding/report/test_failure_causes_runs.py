"""Issue 41, point 5 on the coding track: every failed checkpoint of real runs (the `command`
agent over tests/fixtures/failure_causes, and `mini` against the fake LLM server stopped at its
step limit) gets its cause from the closed set; the report prints them with counts, examples and
the move against a baseline run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchwright.report_parts.failure_causes import CAUSES, FailureCause
from tests.helpers import FIXTURES, run_cli
from tests.helpers.mini_runs import FAKE_KEY

pytestmark = pytest.mark.sandbox
CAUSES_DIR = FIXTURES / "failure_causes"
AGENT = (CAUSES_DIR / "agent.sh").read_text()
EXPECTED = {"wrong": ("wrong output", None), "crash": ("crash", "ValueError"),
            "slow": ("timeout", None), "empty": ("no answer", None),
            "agent_error": ("agent error", None), "link": ("refused action", None),
            "broken_tests": ("environment error", None)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("causes")
    done = run_cli("run", "coding", "--problems-dir", str(CAUSES_DIR), "--agent", "command",
                   "--agent-command", AGENT, "--no-metrics", "--out", str(root / "causes"))
    assert done.returncode == 0, done.stderr[-3000:]
    done = run_cli("run", "coding", "--problems-dir", str(CAUSES_DIR), "--agent", "oracle",
                   "--no-metrics", "--out", str(root / "oracle"))
    assert done.returncode == 0, done.stderr[-3000:]
    return {"causes": root / "causes", "oracle": root / "oracle", "limit": _mini(root)}


def _mini(root: Path) -> Path:
    """`mini` stopped at its step limit (1 model call) after writing a wrong tool.py."""
    pytest.importorskip("openai")
    from benchwright.testing import FakeLLMServer, Script

    write = {"name": "bash", "arguments": {"command": "echo 'print(2)' > tool.py"}}
    script = Script.model_validate({"turns": [{"text": "Writing.", "tool_calls": [write]},
                                              {"text": "Done."}]})
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY}
    with FakeLLMServer(script) as server:
        done = run_cli("run", "coding", "--agent", "mini", "--model", "fake", "--problems-dir",
                       str(CAUSES_DIR), "--problem", "wrong", "--step-limit", "1",
                       "--base-url", f"{server.base_url}/v1", "--no-metrics",
                       "--out", str(root / "limit"), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "limit"


def _report(run: Path, *extra: str) -> dict[str, Any]:
    done = run_cli("report", str(run), "--json", *extra)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_every_failed_checkpoint_has_its_cause(runs: dict[str, Path]) -> None:
    table = _report(runs["causes"])["failure_causes"]
    found = {u["unit"].split("/")[0]: (u["cause"], u["exception"]) for u in table["units"]}
    assert found == EXPECTED
    assert [r["cause"] for r in table["rows"]] == [str(c) for c in CAUSES]
    crash = next(r for r in table["rows"] if r["cause"] == "crash")
    assert crash["exceptions"] == {"ValueError": 1}
    assert "ValueError: boom" in crash["examples"][0]["detail"]


def test_the_step_limit_is_a_cause(runs: dict[str, Path]) -> None:
    [unit] = _report(runs["limit"])["failure_causes"]["units"]
    assert unit["cause"] == "step or cost limit"
    assert "step limit" in unit["detail"]


def test_together_the_runs_produce_every_cause(runs: dict[str, Path]) -> None:
    seen = {u["cause"] for name in ("causes", "limit")
            for u in _report(runs[name])["failure_causes"]["units"]}
    assert seen == {str(c) for c in FailureCause}


def test_report_md_shows_counts_examples_and_the_move_against_a_baseline(
        runs: dict[str, Path]) -> None:
    table = _report(runs["causes"], "--baseline", str(runs["oracle"]))["failure_causes"]
    rows = {r["cause"]: (r["count"], r["baseline"]) for r in table["rows"]}
    assert rows["environment error"] == (1, 1)  # the oracle meets the broken tests too
    assert rows["wrong output"] == (1, 0)
    assert table["n_baseline_failed"] == 1
    done = run_cli("report", str(runs["causes"]), "--baseline", str(runs["oracle"]))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "## Failures by cause" in done.stdout
    assert "| crash (ValueError x1) | 1 | 0 | +1 | crash/trial_1/checkpoint_1: test_prints_one: " \
           "ValueError: boom |" in done.stdout
    assert "| environment error | 1 | 1 | +0 |" in done.stdout
    assert "## Failures by cause" in (runs["causes"] / "report.md").read_text()
