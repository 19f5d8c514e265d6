"""The npm agent CLIs recorded and replayed through `benchwright run coding`: each real CLI, in
the sandbox behind the egress proxy, solves ledger_cli's first checkpoint against the fake LLM
server acting as the real endpoint (through the recording proxy); the server is stopped and the
run replayed with no key: the same record, usage and cost. No key in the cassette."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.agents import toolchain
from benchwright.testing import FakeLLMServer
from tests.helpers import run_cli
from tests.helpers.cli_agents import (
    has_node,
    solution_files,
    solving_script,
    write_solution_command,
)

KEY = "sk-benchwright-cassette-3b8e1f6a90d2c457"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "BENCHWRIGHT_LLM_API_KEY")

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e,
              pytest.mark.skipif(not has_node(), reason="no Node.js >= 20 with npm")]


AGENTS = {  # model, key variable, npm CLI, the tool calls that write the solution
    "claude_code": ("claude-sonnet-4-5", "ANTHROPIC_API_KEY", toolchain.CLAUDE_CODE, lambda p: [
        {"name": "Bash", "arguments": {"command": write_solution_command(p),
                                       "description": "Write it"}}]),
    "codex": ("gpt-5", "OPENAI_API_KEY", toolchain.CODEX, lambda p: [
        {"name": "exec_command", "arguments": {"cmd": write_solution_command(p)}}]),
    # gemini's shell tool refuses the heredoc (it sees command substitution in the code)
    "gemini": ("gemini-2.5-pro", "GEMINI_API_KEY", toolchain.GEMINI_CLI, lambda p: [
        {"name": "write_file", "arguments": {"file_path": f.name, "content": f.read_text()}}
        for f in solution_files(p)]),
    "opencode": ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", toolchain.OPENCODE,
                 lambda p: [{"name": "bash", "arguments": {
                     "command": write_solution_command(p), "description": "Write it"}}]),
}
UNTOOLED = {"opencode": "Ledger balances"}  # its session title


def run_agent(agent: str, problems: Path, out: Path, base_url: str, env: dict[str, str],
              *traffic: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", "coding", "--agent", agent, "--model", AGENTS[agent][0],
                   "--problems-dir", str(problems), "--base-url", base_url, "--agent-network",
                   "--no-metrics", "--out", str(out), "-A", "infra_retries=0", *traffic,
                   "--json", env=env)


def record_of(run_dir: Path) -> dict[str, Any]:
    [line] = (run_dir / "checkpoint_records.jsonl").read_text().splitlines()
    record: dict[str, Any] = json.loads(line)
    return record


def without_keys(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in KEYS}, **extra}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_cli_agent_replays_with_no_server_and_no_key(
        agent: str, problems_dir: Path, tmp_path: Path) -> None:
    _model, key_env, tool, calls = AGENTS[agent]
    toolchain.ensure_npm_tool(tool)
    cassette = tmp_path / "cassette"
    script = solving_script(calls(problems_dir), UNTOOLED.get(agent, "ok"))
    with FakeLLMServer(script) as server:
        first = run_agent(agent, problems_dir, tmp_path / "first", server.base_url,
                          without_keys(**{key_env: KEY}), "--llm-record", str(cassette))
        base_url = server.base_url
    assert first.returncode == 0, first.stderr
    before = record_of(tmp_path / "first")
    assert before["passed"] and before["agent"]["usage"]["cost_usd"] > 0, before["agent"]
    again = run_agent(agent, problems_dir, tmp_path / "again", base_url, without_keys(),
                      "--llm-replay", str(cassette))
    assert again.returncode == 0, again.stderr
    after = record_of(tmp_path / "again")
    for field in ("passed", "solved", "verdicts", "counts"):
        assert after[field] == before[field], field
    assert after["agent"]["usage"] == before["agent"]["usage"]
    assert after["agent"]["status"] == before["agent"]["status"] == "completed"
    leaked = [p for p in cassette.rglob("*.gz")
              if subprocess.run(["zgrep", "-q", "--", KEY, str(p)]).returncode == 0]
    assert leaked == []
    stats = json.loads(run_cli("llm", "cassette", "stats", str(cassette), "--json").stdout)
    [row] = stats["agents"]
    assert row["agent"] == agent and row["calls"] >= 2 and row["errors"] == 0
