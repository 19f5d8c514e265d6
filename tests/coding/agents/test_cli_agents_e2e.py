"""The npm agent CLIs end to end against the fake LLM server: each real CLI, installed at its
pinned version, runs ledger_cli's first checkpoint in the sandbox; the scripted model calls the
CLI's own shell tool to write the reference solution; the checkpoint must pass, with usage and
cost recorded and no API key anywhere under the run directory."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.agents import toolchain
from benchwright.coding.agents.base import AgentContext, AgentStatus
from benchwright.coding.attempts.models import AgentSettings, RunConfig, RunResult
from benchwright.coding.attempts.runner import create_run, execute
from benchwright.executors.local import LocalExecutor
from benchwright.registry import CODING_AGENTS
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from benchwright.sandbox.interpreters import resolve_python
from benchwright.testing import FakeLLMServer, Script
from tests.helpers.cli_agents import (
    PROBLEM,
    has_node,
    solution_files,
    solving_script,
    write_solution_command,
)

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not has_node(),
                       reason="no Node.js >= 20 with npm (pip install 'benchwright[agents]')"),
]
FAKE_KEY = "sk-benchwright-fake-4d1e9b0c7a2f5e83"


@pytest.fixture(scope="session")
def installed() -> Callable[[toolchain.NpmTool], toolchain.InstalledTool]:
    """Install each CLI once per session (the tool folder is reused across sessions too)."""
    cache: dict[str, toolchain.InstalledTool] = {}

    def get(tool: toolchain.NpmTool) -> toolchain.InstalledTool:
        if tool.package not in cache:
            cache[tool.package] = toolchain.ensure_npm_tool(tool)
        return cache[tool.package]
    return get


def run_agent(problems: Path, out: Path, agent: str, model: str, base_url: str,
              **settings: Any) -> tuple[RunResult, dict[str, Any]]:
    """`benchwright run coding --agent AGENT` in-process; the run's result and its one record."""
    config = RunConfig(problems_dir=problems, problems=[PROBLEM], agent=agent, model=model,
                       agent_network=True, metrics=False,
                       agent_limits=Limits(wall_clock_s=300),
                       agent_settings=AgentSettings(base_url=base_url, **settings))
    create_run(config, out)
    result = execute(out, config, LocalExecutor(workers=1))
    lines = (out / "checkpoint_records.jsonl").read_text().splitlines()
    [record] = [json.loads(line) for line in lines]
    return result, record


def assert_passed_with_usage(result: RunResult, record: dict[str, Any],
                             out: Path) -> dict[str, Any]:
    """The checkpoint passed, its usage and cost are recorded, and the key leaked nowhere."""
    agent_dir = out / PROBLEM / "trial_1" / "checkpoint_1" / "agent"
    assert record["agent"]["status"] == "completed", record["agent"]
    assert result.n_checkpoints_passed == 1, record["verdicts"]
    usage = record["agent"]["usage"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0 and usage["steps"] >= 2
    assert usage["cost_usd"] > 0
    trajectory: dict[str, Any] = json.loads((agent_dir / "trajectory.json").read_text())
    assert trajectory["format"] == "benchwright.trajectory/1"
    assert trajectory["usage"] == usage
    assert any(c for s in trajectory["steps"] for c in s["tool_calls"])
    found = subprocess.run(["grep", "-rl", "--", FAKE_KEY, str(out)], capture_output=True,
                           text=True)
    assert found.stdout == "", f"the API key leaked into: {found.stdout}"
    return trajectory


def test_claude_code_solves_the_first_checkpoint(
        installed: Callable[[toolchain.NpmTool], toolchain.InstalledTool], problems_dir: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed(toolchain.CLAUDE_CODE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    script = solving_script([
        {"name": "Bash", "arguments": {"command": write_solution_command(problems_dir),
                                       "description": "Write ledger.py"}}])
    with FakeLLMServer(script) as server:
        result, record = run_agent(problems_dir, tmp_path / "run", "claude_code",
                                   "claude-sonnet-4-5", server.base_url, thinking_budget=2048)
        calls = server.model_calls
    trajectory = assert_passed_with_usage(result, record, tmp_path / "run")
    assert trajectory["cost_source"] == "agent"
    assert record["agent"]["usage"]["input_tokens"] == 11000
    assert [s["tool_calls"][0]["name"] for s in trajectory["steps"] if s["tool_calls"]] == ["Bash"]
    assert calls[0].path.startswith("/v1/messages")
    assert "Bash" in [t["name"] for t in calls[0].body["tools"]]
    assert calls[0].body["thinking"]["budget_tokens"] == 2048


def test_codex_solves_the_first_checkpoint(
        installed: Callable[[toolchain.NpmTool], toolchain.InstalledTool], problems_dir: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed(toolchain.CODEX)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    script = solving_script([
        {"name": "exec_command", "arguments": {"cmd": write_solution_command(problems_dir)}}])
    with FakeLLMServer(script) as server:
        result, record = run_agent(problems_dir, tmp_path / "run", "codex", "gpt-5",
                                   server.base_url, thinking_budget=32000)
        calls = server.model_calls
    trajectory = assert_passed_with_usage(result, record, tmp_path / "run")
    usage = record["agent"]["usage"]
    assert trajectory["cost_source"] == "price_table"
    assert (usage["input_tokens"], usage["output_tokens"]) == (11000, 920)
    assert usage["cost_usd"] == pytest.approx((11000 * 1.25 + 920 * 10.0) / 1e6)
    assert calls[0].path == "/v1/responses" and calls[0].body["reasoning"]["effort"] == "high"
    assert "exec_command" in [t.get("name") for t in calls[0].body["tools"]]


def test_gemini_solves_the_first_checkpoint(
        installed: Callable[[toolchain.NpmTool], toolchain.InstalledTool], problems_dir: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed(toolchain.GEMINI_CLI)
    monkeypatch.setenv("GEMINI_API_KEY", FAKE_KEY)
    # gemini's shell tool refuses the heredoc (it sees command substitution in the code)
    script = solving_script([
        {"name": "write_file", "arguments": {"file_path": f.name, "content": f.read_text()}}
        for f in solution_files(problems_dir)])
    with FakeLLMServer(script) as server:
        result, record = run_agent(problems_dir, tmp_path / "run", "gemini", "gemini-2.5-pro",
                                   server.base_url, thinking_budget=1024)
        calls = server.model_calls
    trajectory = assert_passed_with_usage(result, record, tmp_path / "run")
    usage = record["agent"]["usage"]
    assert trajectory["cost_source"] == "price_table" and usage["steps"] == 2
    assert (usage["input_tokens"], usage["output_tokens"]) == (11000, 920)
    assert usage["cost_usd"] == pytest.approx((11000 * 1.25 + 920 * 10.0) / 1e6)
    assert "gemini-2.5-pro:streamGenerateContent" in calls[0].path
    assert calls[0].body["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 1024
    declared = [d["name"] for t in calls[0].body["tools"] for d in t["functionDeclarations"]]
    assert "run_shell_command" in declared


def test_opencode_solves_the_first_checkpoint(
        installed: Callable[[toolchain.NpmTool], toolchain.InstalledTool], problems_dir: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed(toolchain.OPENCODE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    script = solving_script([
        {"name": "bash", "arguments": {"command": write_solution_command(problems_dir),
                                       "description": "Write ledger.py"}}],
        untooled="Ledger balances")
    with FakeLLMServer(script) as server:
        result, record = run_agent(problems_dir, tmp_path / "run", "opencode",
                                   "anthropic/claude-sonnet-4-5", server.base_url,
                                   thinking_budget=3000)
        calls = [c for c in server.model_calls if c.body.get("tools")]
    trajectory = assert_passed_with_usage(result, record, tmp_path / "run")
    usage = record["agent"]["usage"]
    assert trajectory["cost_source"] == "agent" and usage["steps"] == 2
    assert (usage["input_tokens"], usage["output_tokens"]) == (11000, 920)
    assert usage["cost_usd"] == pytest.approx((11000 * 3.0 + 920 * 15.0) / 1e6)
    assert calls[0].path == "/v1/messages" and calls[0].body["thinking"]["budget_tokens"] == 3000
    assert "bash" in [t["name"] for t in calls[0].body["tools"]]


INFRA_CASES = {  # agent: (tool, model, credential variable)
    "claude_code": (toolchain.CLAUDE_CODE, "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    "codex": (toolchain.CODEX, "gpt-5", "OPENAI_API_KEY"),
    "gemini": (toolchain.GEMINI_CLI, "gemini-2.5-pro", "GEMINI_API_KEY"),
    "opencode": (toolchain.OPENCODE, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
}


@pytest.mark.parametrize("agent", sorted(INFRA_CASES))
def test_429_on_every_call_is_an_infra_error(
        agent: str, installed: Callable[[toolchain.NpmTool], toolchain.InstalledTool],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool, model, variable = INFRA_CASES[agent]
    installed(tool)
    monkeypatch.setenv(variable, FAKE_KEY)
    script = Script.model_validate({"turns": [{"text": "Done."}], "untooled": {"text": "ok"},
                                    "fault_all": {"kind": "http_429", "retry_after": 0}})
    (tmp_path / "ws").mkdir()
    (tmp_path / "agent").mkdir()
    ctx = AgentContext(problem=PROBLEM, problem_dir=tmp_path, checkpoint="checkpoint_1", trial=1,
                       workspace=tmp_path / "ws", prompt="Write hello.py.",
                       prompt_file=tmp_path / "prompt.txt", is_continuation=False,
                       artifacts_dir=tmp_path / "agent")
    with FakeLLMServer(script) as server:
        cls = CODING_AGENTS.get(agent)
        settings = AgentSettings(base_url=server.base_url, llm_retries=1, retry_backoff_s=0)
        result = cls(model, settings, BwrapRuntime(), Limits(wall_clock_s=240),
                     resolve_python(None)).act(ctx)
        assert len(server.model_calls) >= 2  # the CLI retried
    assert result.status == AgentStatus.INFRA_ERROR, result.error
    assert result.error is not None and "provider" in result.error
    trajectory = json.loads((tmp_path / "agent" / "trajectory.json").read_text())
    assert trajectory["exit_status"] == "infra_error"


@pytest.mark.skipif(shutil.which("python3.12") is None and not any(
    Path("/root/.pyenv/versions").glob("3.12*")), reason="OpenHands needs Python 3.12")
def test_openhands_solves_the_first_checkpoint(
        problems_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_API_KEY", FAKE_KEY)
    script = Script.model_validate({"untooled": {"text": "ok"}, "turns": [
        {"text": "I will write the program.", "tool_calls": [
            {"name": "execute_bash", "arguments": {"command": write_solution_command(problems_dir),
                                                   "security_risk": "LOW"}}],
         "usage": {"input_tokens": 5000, "output_tokens": 900}},
        {"text": "Done.", "tool_calls": [{"name": "finish", "arguments": {
            "message": "ledger.py prints the balances."}}],
         "usage": {"input_tokens": 6000, "output_tokens": 20}}]})
    with FakeLLMServer(script) as server:
        result, record = run_agent(problems_dir, tmp_path / "run", "openhands", "openai/gpt-5",
                                   server.base_url)
        calls = server.model_calls
    trajectory = assert_passed_with_usage(result, record, tmp_path / "run")
    usage = record["agent"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (11000, 920)
    assert calls[0].path == "/v1/chat/completions"
    assert "execute_bash" in [t["function"]["name"] for t in calls[0].body["tools"]]
    assert trajectory["cost_source"] in ("agent", "price_table")
