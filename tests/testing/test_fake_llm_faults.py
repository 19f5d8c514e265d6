"""Faults the fake LLM server injects, its script rules, its control routes and its CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.testing import FakeLLMServer, FaultKind, Script

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
MESSAGES = [{"role": "user", "content": "go"}]


def _client(server: FakeLLMServer, retries: int = 0, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    return openai.OpenAI(api_key="sk-fake", base_url=f"{server.base_url}/v1",
                         max_retries=retries, timeout=timeout)


def _ask(server: FakeLLMServer, retries: int = 0, stream: bool = False) -> str:
    client = _client(server, retries)
    if stream:
        chunks = client.chat.completions.create(model="fake", messages=MESSAGES, tools=TOOLS,
                                                stream=True)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reply = client.chat.completions.create(model="fake", messages=MESSAGES, tools=TOOLS)
    return str(reply.choices[0].message.content)


def test_429_on_a_turn_carries_retry_after_then_the_turn_is_served() -> None:
    script = Script.from_yaml("turns:\n  - text: one\n    fault: {kind: http_429, times: 2,"
                              " retry_after: 7}\n  - text: two\n")
    with FakeLLMServer(script) as server:
        for _ in range(2):
            with pytest.raises(openai.RateLimitError) as caught:
                _ask(server)
            assert caught.value.response.headers["retry-after"] == "7"
            assert caught.value.body["code"] == "rate_limit_exceeded"
        assert _ask(server) == "one" and _ask(server) == "two"
        assert [(r.turn, r.fault) for r in server.requests] == [
            (0, FaultKind.HTTP_429), (0, FaultKind.HTTP_429), (0, None), (1, None)]


def test_sdk_retries_through_a_fault_only_turn() -> None:
    script = Script.from_yaml("turns:\n  - fault: {kind: http_500, retry_after: 0}\n"
                              "  - text: after the error\n")
    with FakeLLMServer(script) as server:
        assert _ask(server, retries=2) == "after the error"
        assert len(server.requests) == 2


def test_500_in_anthropic_format() -> None:
    with FakeLLMServer(Script.from_yaml("turns:\n  - {text: hi, fault: http_500}\n")) as server:
        client = anthropic.Anthropic(api_key="sk-ant-fake", base_url=server.base_url,
                                     max_retries=0)
        with pytest.raises(anthropic.InternalServerError) as caught:
            client.messages.create(model="fake", max_tokens=10, messages=MESSAGES)
        assert caught.value.body["error"]["type"] == "api_error"


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_bodies_break_the_client(stream: bool) -> None:
    with FakeLLMServer(Script.from_yaml("turns:\n  - {text: hi, fault: malformed}\n")) as server:
        with pytest.raises((openai.APIError, json.JSONDecodeError)):
            _ask(server, stream=stream)
        assert _ask(server, stream=stream) == "hi"


def test_stall_makes_the_client_time_out() -> None:
    script = Script.from_yaml("turns:\n  - {text: hi, fault: {kind: stall, seconds: 30}}\n")
    with FakeLLMServer(script) as server, pytest.raises(openai.APITimeoutError):
        _client(server, timeout=0.5).chat.completions.create(model="fake", messages=MESSAGES)


def test_fault_all_until_cleared() -> None:
    script = Script.from_yaml("fault_all: {kind: http_429, retry_after: 0}\n"
                              "turns:\n  - text: finally\n")
    with FakeLLMServer(script) as server:
        for _ in range(3):
            with pytest.raises(openai.RateLimitError):
                _ask(server)
        server.clear_faults()
        assert _ask(server) == "finally"
        server.set_fault_all(FaultKind.HTTP_500)
        with pytest.raises(openai.InternalServerError):
            _ask(server)


def test_untooled_calls_do_not_use_turns_and_the_end_is_an_error() -> None:
    script = Script.from_yaml("untooled: {text: a title}\nturns:\n  - text: real\n")
    with FakeLLMServer(script) as server:
        client = _client(server)
        side = client.chat.completions.create(model="fake", messages=MESSAGES)
        assert side.choices[0].message.content == "a title"
        assert _ask(server) == "real"
        with pytest.raises(openai.BadRequestError, match="1 turns are all used"):
            _ask(server)


def test_control_routes_for_a_server_in_another_process() -> None:
    script = Script.from_yaml("fault_all: http_429\nturns:\n  - text: hi\n")
    with FakeLLMServer(script) as server:
        request = urllib.request.Request(f"{server.base_url}/_fake/clear_faults", data=b"{}",
                                         method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.load(response) == {"cleared": True}
        assert _ask(server) == "hi"
        with urllib.request.urlopen(f"{server.base_url}/_fake/requests", timeout=10) as response:
            assert json.load(response)[0]["turn"] == 0


def test_bad_scripts_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match=r"turns\.0\.fault\.kind"):
        Script.from_yaml("turns:\n  - fault: {kind: http_418}\n")
    with pytest.raises(UserInputError, match="no such file"):
        Script.from_yaml(tmp_path / "missing.yaml")


def test_cli_serves_a_script_file(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text("turns:\n  - text: from the command line\n")
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", "testing", "fake-llm",
                             "--script", str(path), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().split()[3]
        client = openai.OpenAI(api_key="sk-fake", base_url=f"{base_url}/v1", max_retries=0)
        reply = client.chat.completions.create(model="fake", messages=MESSAGES)
        assert reply.choices[0].message.content == "from the command line"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
