"""The CLI agents' shared part without npm, Node or a sandbox: a stub runtime records what the
agent would run and prints a canned log, and the npm install is replaced by a fake tool folder."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pytest

from benchwright.coding.agents import cli_agent, toolchain
from benchwright.coding.agents.base import AgentContext
from benchwright.coding.agents.codex import CodexAgent
from benchwright.coding.agents.opencode import OpencodeAgent
from benchwright.coding.attempts.models import AgentSettings, RunConfig
from benchwright.coding.attempts.runner import create_run, execute
from benchwright.coding.grading import grader as grading
from benchwright.errors import PrerequisiteError
from benchwright.executors.local import LocalExecutor
from benchwright.sandbox.bwrap import ExecResult, Limits, Mount
from benchwright.sandbox.interpreters import resolve_python

KEY = "AIza-benchwright-fake-0c5d7e19b3"
CODEX_LOG = [{"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
             {"type": "turn.completed",
              "usage": {"input_tokens": 1_000_000, "output_tokens": 100_000}}]


class StubRuntime:
    """Records each call and writes `log` (JSON lines) as the command's stdout."""

    name = "stub"

    def __init__(self, log: list[dict[str, Any]]) -> None:
        self.log = log
        self.calls: list[dict[str, Any]] = []

    def run(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
            mounts: Sequence[Mount], limits: Limits, network: bool = False,
            stdin: bytes | None = None, stdout: IO[bytes] | int | None = None,
            stderr: IO[bytes] | int | None = None) -> ExecResult:
        self.calls.append({"argv": list(argv), "env": dict(env), "mounts": list(mounts)})
        assert not isinstance(stdout, int) and stdout is not None
        stdout.write("".join(json.dumps(e) + "\n" for e in self.log).encode())
        return ExecResult(argv=list(argv), exit_code=0, duration_s=0.0)


@pytest.fixture
def installs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[toolchain.NpmTool]:
    """Fake npm installs: each tool gets a folder under tmp_path (Node for Node-run ones)."""
    done: list[toolchain.NpmTool] = []

    def fake(tool: toolchain.NpmTool) -> toolchain.InstalledTool:
        done.append(tool)
        node = tmp_path / "node" / "bin" if tool.min_node else None
        return toolchain.InstalledTool(tool=tool, path=tmp_path / "tools" / tool.bin,
                                       node_bin=node)
    monkeypatch.setattr(cli_agent, "ensure_npm_tool", fake)
    return done


def _ctx(tmp_path: Path, checkpoint: str = "checkpoint_1") -> AgentContext:
    (tmp_path / "ws").mkdir(exist_ok=True)
    artifacts = tmp_path / checkpoint / "agent"
    artifacts.mkdir(parents=True)
    return AgentContext(problem="p", problem_dir=tmp_path, checkpoint=checkpoint, trial=1,
                        workspace=tmp_path / "ws", prompt="do it",
                        prompt_file=tmp_path / "prompt.txt", is_continuation=False,
                        artifacts_dir=artifacts)


def _agent(cls: type[cli_agent.CliAgent], model: str, runtime: StubRuntime,
           **settings: Any) -> cli_agent.CliAgent:
    config = AgentSettings(base_url="http://127.0.0.1:9", **settings)
    return cls(model, config, runtime, Limits(), resolve_python(None))


def test_a_node_run_cli_gets_its_folder_and_node(
        tmp_path: Path, installs: list[toolchain.NpmTool]) -> None:
    runtime = StubRuntime(CODEX_LOG)
    _agent(CodexAgent, "gpt-5", runtime).act(_ctx(tmp_path))
    [call] = runtime.calls
    assert call["argv"][:2] == [str(tmp_path / "tools/codex/node_modules/.bin/codex"), "exec"]
    assert call["env"]["PATH"].startswith(f"{tmp_path / 'node' / 'bin'}:")
    paths = [m.path for m in call["mounts"]]
    assert tmp_path / "tools" / "codex" in paths and tmp_path / "node" in paths
    assert installs == [toolchain.CODEX]


def test_a_native_cli_gets_its_folder_and_no_node(
        tmp_path: Path, installs: list[toolchain.NpmTool]) -> None:
    runtime = StubRuntime([])
    _agent(OpencodeAgent, "anthropic/claude-sonnet-4-5", runtime).act(_ctx(tmp_path))
    [call] = runtime.calls
    assert call["argv"][0].startswith(str(tmp_path / "tools/opencode/node_modules/opencode-linux-"))
    assert not call["env"]["PATH"].startswith(str(tmp_path))
    assert tmp_path / "tools" / "opencode" in [m.path for m in call["mounts"]]
    assert tmp_path / "node" not in [m.path for m in call["mounts"]]


@pytest.mark.parametrize(("model", "override", "cost"), [
    ("gpt-5", {"input_price_per_mtok": 2.0}, 2.0 + 1.0),  # output stays the table's 10.0
    ("gpt-5", {"output_price_per_mtok": 1.0}, 1.25 + 0.1),
    # unlisted with one price: the other is not known, so neither is the cost (never 0)
    ("my-model", {"input_price_per_mtok": 2.0}, None),
    ("my-model", {"input_price_per_mtok": 2.0, "output_price_per_mtok": 0.0}, 2.0),
])
def test_a_cli_agent_honours_one_price_override(
        tmp_path: Path, installs: list[toolchain.NpmTool], model: str,
        override: dict[str, float], cost: float | None) -> None:
    result = _agent(CodexAgent, model, StubRuntime(CODEX_LOG), **override).act(_ctx(tmp_path))
    trajectory = json.loads((tmp_path / "checkpoint_1/agent/trajectory.json").read_text())
    if cost is None:
        assert result.usage.cost_usd is None
        assert trajectory["cost_source"] == "unknown"
        return
    assert result.usage.cost_usd == pytest.approx(cost)
    assert trajectory["cost_source"] == "price_table"


def test_the_cli_is_installed_once_per_agent(
        tmp_path: Path, installs: list[toolchain.NpmTool]) -> None:
    runtime = StubRuntime(CODEX_LOG)
    agent = _agent(CodexAgent, "gpt-5", runtime)
    for checkpoint in ("checkpoint_1", "checkpoint_2"):
        agent.act(_ctx(tmp_path, checkpoint))
    assert installs == [toolchain.CODEX]
    assert [c["argv"][0] for c in runtime.calls] == \
        [str(tmp_path / "tools/codex/node_modules/.bin/codex")] * 2
    assert all(c["env"]["PATH"] == runtime.calls[0]["env"]["PATH"] for c in runtime.calls)


def test_a_failed_install_is_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         installs: list[toolchain.NpmTool]) -> None:
    works = cli_agent.ensure_npm_tool

    def fail_once(tool: toolchain.NpmTool) -> toolchain.InstalledTool:
        monkeypatch.setattr(cli_agent, "ensure_npm_tool", works)
        raise PrerequisiteError("no Node.js")
    monkeypatch.setattr(cli_agent, "ensure_npm_tool", fail_once)
    agent = _agent(CodexAgent, "gpt-5", StubRuntime(CODEX_LOG))
    with pytest.raises(PrerequisiteError):
        agent.act(_ctx(tmp_path, "checkpoint_1"))
    assert agent.act(_ctx(tmp_path, "checkpoint_2")).status == "completed"
    assert installs == [toolchain.CODEX]


ECHO_KEYS = """#!/bin/sh
printf '{"type":"error","error":{"data":{"message":"my key is %s"}}}\\n' \\
    "$GOOGLE_GENERATIVE_AI_API_KEY"
echo "GEMINI_API_KEY=$GEMINI_API_KEY" >&2
"""


def test_the_run_loop_redacts_what_a_cli_echoes(
        tmp_path: Path, problems_dir: Path, monkeypatch: pytest.MonkeyPatch,
        installs: list[toolchain.NpmTool]) -> None:
    """opencode gets the Gemini key under a second name too; the sweep still labels it by the
    variable the user set, and it is nowhere in the run directory, not even while grading."""
    fake = toolchain.entry_point(toolchain.OPENCODE, tmp_path / "tools" / "opencode")
    fake.parent.mkdir(parents=True)
    fake.write_text(ECHO_KEYS)
    fake.chmod(0o755)
    for name in ("GOOGLE_GENERATIVE_AI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    out = tmp_path / "run"
    config = RunConfig(problems_dir=problems_dir, problems=["ledger_cli"], agent="opencode",
                       model="google/gemini-2.5-pro", unsafe_no_sandbox=True, metrics=False,
                       agent_settings=AgentSettings(infra_retries=0))
    create_run(config, out)
    leaked_while_grading: list[Path] = []
    grade = grading.grade_checkpoint  # the registered grader, read at each call

    def grade_and_look(*args: Any, **kwargs: Any) -> Any:
        leaked_while_grading.extend(_holding(out, KEY))
        return grade(*args, **kwargs)

    monkeypatch.setattr(grading, "grade_checkpoint", grade_and_look)
    execute(out, config, LocalExecutor(workers=1))
    assert leaked_while_grading == []
    agent_dir = out / "ledger_cli" / "trial_1" / "checkpoint_1" / "agent"
    assert "my key is <redacted:GEMINI_API_KEY>" in (agent_dir / "agent.jsonl").read_text()
    assert (agent_dir / "agent.stderr.txt").read_text() == \
        "GEMINI_API_KEY=<redacted:GEMINI_API_KEY>\n"
    assert _holding(out, KEY) == []


def _holding(folder: Path, secret: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
