"""The mini agent's parts without the run loop: limits, retries, keys, prices and redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.coding.agents.base import AgentContext, AgentStatus
from benchwright.coding.agents.chat_client import ChatClient, resolve_target
from benchwright.coding.agents.settings import AgentSettings
from benchwright.errors import PrerequisiteError, ProviderUnavailable
from benchwright.files.redaction import Redactor, is_secret_name
from benchwright.llm.pricing import price_of
from benchwright.sandbox.bwrap import Limits, UnsafeLocalRuntime
from benchwright.sandbox.interpreters import resolve_python
from benchwright.testing import FakeLLMServer, Script

openai = pytest.importorskip("openai")
LOOP = "turns:\n" + ("  - {text: again, tool_calls: [{name: bash, arguments: "
                     "{command: 'echo hi'}}]}\n") * 5


def _agent(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, **settings: object):  # type: ignore[no-untyped-def]
    from benchwright.coding.agents.mini import MiniAgent

    monkeypatch.setenv("OPENAI_API_KEY", "sk-unit-test-key")
    config = AgentSettings(base_url=f"{server.base_url}/v1", retry_backoff_s=0, **settings)
    return MiniAgent("fake", config, UnsafeLocalRuntime(), Limits(), resolve_python(None))


def _ctx(tmp_path: Path) -> AgentContext:
    (tmp_path / "ws").mkdir()
    (tmp_path / "agent").mkdir()
    return AgentContext(problem="p", problem_dir=tmp_path, checkpoint="checkpoint_1", trial=1,
                        workspace=tmp_path / "ws", prompt="do it", prompt_file=tmp_path / "p.txt",
                        is_continuation=False, artifacts_dir=tmp_path / "agent")


def test_step_limit_stops_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer(Script.from_yaml(LOOP)) as server:
        result = _agent(server, monkeypatch, step_limit=2).act(_ctx(tmp_path))
    assert result.status is AgentStatus.ERROR and "step limit (2" in (result.error or "")
    assert result.usage.steps == 2
    steps = json.loads((tmp_path / "agent" / "trajectory.json").read_text())["steps"]
    assert steps[3]["tool_results"][0]["output"] == "exit code 0\nhi\n"


def test_cost_limit_stops_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = LOOP.replace("command: 'echo hi'}}]}", "command: 'echo hi'}}], "
                          "usage: {input_tokens: 1000000, output_tokens: 0}}")
    with FakeLLMServer(Script.from_yaml(script)) as server:
        agent = _agent(server, monkeypatch, cost_limit_usd=2.5, input_price_per_mtok=1.0,
                           output_price_per_mtok=0.0)
        result = agent.act(_ctx(tmp_path))
    assert "cost limit" in (result.error or "") and result.usage.cost_usd == 3.0


def test_persistent_500s_are_an_infra_error(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer(Script.from_yaml("fault_all: http_500\nturns: []\n")) as server:
        result = _agent(server, monkeypatch, llm_retries=1).act(_ctx(tmp_path))
        assert len(server.model_calls) == 2
    assert result.status is AgentStatus.INFRA_ERROR and "HTTP 500" in (result.error or "")


def test_a_refused_call_is_an_agent_error(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer(Script.from_yaml("turns: []\n")) as server:
        result = _agent(server, monkeypatch).act(_ctx(tmp_path))
        assert len(server.model_calls) == 1  # a 400 is not retried
    assert result.status is AgentStatus.ERROR and "refused" in (result.error or "")


def test_retry_waits_honour_retry_after() -> None:
    script = Script.from_yaml("turns:\n  - {text: ok, fault: {kind: http_429, times: 2, "
                              "retry_after: 5}}\n")
    waits: list[float] = []
    with FakeLLMServer(script) as server:
        client = ChatClient(resolve_target("fake", f"{server.base_url}/v1"),
                            AgentSettings(retry_backoff_s=1), environ={"OPENAI_API_KEY": "k"},
                            sleep=waits.append)
        assert client.complete([{"role": "user", "content": "hi"}], []).choices[0].message \
            .content == "ok"
    assert waits == [5.0, 5.0]
    with FakeLLMServer(Script.from_yaml("fault_all: http_429\n")) as server, \
            pytest.raises(ProviderUnavailable, match="after 3 attempts"):
        ChatClient(resolve_target("fake", f"{server.base_url}/v1"),
                   AgentSettings(llm_retries=2), environ={"OPENAI_API_KEY": "k"},
                   sleep=lambda _s: None).complete([], [])


def test_a_stalled_call_times_out_and_is_retried() -> None:
    script = Script.from_yaml("turns:\n  - {text: ok, fault: {kind: stall, seconds: 30}}\n")
    with FakeLLMServer(script) as server:
        client = ChatClient(resolve_target("fake", f"{server.base_url}/v1"),
                            AgentSettings(request_timeout_s=0.5, retry_backoff_s=0),
                            environ={"OPENAI_API_KEY": "k"})
        reply = client.complete([{"role": "user", "content": "hi"}], [])
        assert reply.choices[0].message.content == "ok" and len(server.model_calls) == 2


def test_thinking_budget_becomes_reasoning_effort() -> None:
    with FakeLLMServer(Script.from_yaml("turns:\n  - {text: ok}\n  - {text: ok}\n")) as server:
        for budget, effort in ((None, None), (8000, "medium")):
            ChatClient(resolve_target("fake", f"{server.base_url}/v1"),
                       AgentSettings(thinking_budget=budget), environ={"OPENAI_API_KEY": "k"}
                       ).complete([{"role": "user", "content": "hi"}], [])
            assert server.model_calls[-1].body.get("reasoning_effort") == effort


def test_providers_keys_and_prices() -> None:
    target = resolve_target("anthropic/claude-sonnet-4-5", None)
    assert (target.model, target.key_env) == ("claude-sonnet-4-5", "ANTHROPIC_API_KEY")
    assert target.base_url == "https://api.anthropic.com/v1/"
    assert resolve_target("gpt-4.1", "http://127.0.0.1:9/v1").base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(PrerequisiteError, match="export GEMINI_API_KEY"):
        ChatClient(resolve_target("gemini/gemini-2.5-pro", None), AgentSettings(), environ={})
    assert price_of("openai/gpt-4.1-mini-2025-04-14") == price_of("gpt-4.1-mini")
    assert price_of("claude-sonnet-4-5-20250929").input == 3.0  # type: ignore[union-attr]
    assert price_of("fake") is None


def test_redactor(tmp_path: Path) -> None:
    redactor = Redactor.from_environ({"OPENAI_API_KEY": "sk-abcdefgh12345",
                                      "MY_TOKEN": "tok-9876543", "HOME": "/root/longer-than-8",
                                      "SHORT_TOKEN": "abc"})
    assert is_secret_name("my_service_api_key") and not is_secret_name("HOME")
    assert redactor.text("key sk-abcdefgh12345, abc") == "key <redacted:OPENAI_API_KEY>, abc"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "log.bin").write_bytes(b"\x00tok-9876543\xff")
    (tmp_path / "clean.txt").write_text("/root/longer-than-8")
    (tmp_path / "link").symlink_to(tmp_path / "d" / "log.bin")
    assert redactor.tree(tmp_path) == 1
    assert (tmp_path / "d" / "log.bin").read_bytes() == b"\x00<redacted:MY_TOKEN>\xff"
    assert (tmp_path / "link").is_symlink()


def test_a_value_several_variables_hold_is_marked_by_all_its_names() -> None:
    key = "AIza-shared-key-123456"
    marks = {Redactor.from_environ(dict(order)).text(f"k={key}") for order in (
        [("GOOGLE_API_KEY", key), ("GEMINI_API_KEY", key)],
        [("GEMINI_API_KEY", key), ("GOOGLE_API_KEY", key)])}
    assert marks == {"k=<redacted:GEMINI_API_KEY,GOOGLE_API_KEY>"}
