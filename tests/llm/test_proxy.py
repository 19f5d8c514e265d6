"""The recording proxy on its own: calls in the four protocols recorded against the fake LLM
server (whole and streamed), replayed with the server gone, matched despite varying ids, times
and folders, and a changed request named by its first differing field."""

from __future__ import annotations

import gzip
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import UserInputError
from benchwright.llm.cassette import (
    conversation_path,
    conversation_rel,
    read_conversation,
    require_local,
    traffic_setting,
)
from benchwright.llm.matching import Normaliser, first_difference
from benchwright.llm.models import LlmTraffic, TrafficMode
from benchwright.llm.proxy import LlmProxy
from benchwright.llm.stats import cassette_stats
from benchwright.testing import FakeLLMServer, Script

KEY = "sk-proxy-test-secret-7c1d9e"
KEY_KEY = "CASSETTE_TEST_API_KEY"
CONVERSATION = "coding/p/trial_1/checkpoint_1/attempt_1"
TURNS = [{"text": "chat whole", "usage": {"input_tokens": 11, "output_tokens": 3}},
         {"text": "chat streamed", "usage": {"input_tokens": 12, "output_tokens": 4}},
         {"text": "anthropic streamed", "usage": {"input_tokens": 13, "output_tokens": 5}},
         {"text": "responses streamed", "usage": {"input_tokens": 14, "output_tokens": 6}},
         {"text": "gemini streamed", "usage": {"input_tokens": 15, "output_tokens": 7}}]


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None
         ) -> tuple[int, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
        "content-type": "application/json", "authorization": f"Bearer {KEY}",
        "x-api-key": KEY, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def conversation(root: str, folder: str) -> list[tuple[int, bytes]]:
    """Five calls, one per protocol and way of answering; the prompt names a folder, a temp
    path, a time and an id that differ between runs."""
    user = {"role": "user", "content": f"work in {folder} and /tmp/x1 at 2026-01-02T03:04:05Z"}
    meta = {"metadata": {"user_id": "session-1234"}}
    return [
        post(f"{root}/v1/chat/completions", {"model": "gpt-5", "messages": [user], **meta}),
        post(f"{root}/v1/chat/completions", {"model": "gpt-5", "messages": [user],
                                             "stream": True,
                                             "stream_options": {"include_usage": True}}),
        post(f"{root}/v1/messages", {"model": "claude-haiku-4-5", "max_tokens": 9,
                                     "messages": [user], "stream": True}),
        post(f"{root}/v1/responses", {"model": "gpt-5", "input": user["content"],
                                      "stream": True}),
        post(f"{root}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key={KEY}",
             {"contents": [{"parts": [{"text": user["content"]}]}]}),
    ]


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
             ) -> tuple[Path, list[tuple[int, bytes]]]:
    monkeypatch.setenv(KEY_KEY, KEY)
    cassette = tmp_path / "cassette"
    with FakeLLMServer(Script.model_validate({"turns": TURNS})) as server, \
            LlmProxy(LlmTraffic(mode=TrafficMode.RECORD, cassette=cassette), server.base_url,
                     "mini", "gpt-5") as proxy:
        proxy.begin(CONVERSATION, {"<workspace>": "/work/a1"})
        answers = conversation(proxy.url_for(server.base_url), "/work/a1")
        assert proxy.end() is None
    return cassette, answers


def test_every_protocol_is_recorded_with_usage_and_no_key(
        recorded: tuple[Path, list[tuple[int, bytes]]]) -> None:
    cassette, answers = recorded
    assert [status for status, _ in answers] == [200] * 5
    path = conversation_path(cassette, CONVERSATION)
    assert KEY not in gzip.decompress(path.read_bytes()).decode()
    found = read_conversation(cassette, conversation_rel(CONVERSATION))
    assert found is not None
    header, exchanges = found
    assert header.paths == {"<workspace>": "/work/a1"} and header.exchanges == 5
    assert [(e.input_tokens, e.output_tokens) for e in exchanges] == \
        [(11, 3), (12, 4), (13, 5), (14, 6), (15, 7)]
    assert [e.model for e in exchanges] == ["gpt-5", "gpt-5", "claude-haiku-4-5", "gpt-5",
                                            "gemini-2.5-flash"]
    assert exchanges[0].events is None and all(e.events for e in exchanges[1:])
    assert "authorization" not in exchanges[0].request_headers
    assert "key=%3Credacted%3E" in exchanges[4].path
    [agent] = cassette_stats(cassette).agents
    assert (agent.agent, agent.calls, agent.input_tokens, agent.output_tokens) == \
        ("mini", 5, 65, 25)


def test_a_replay_answers_the_same_with_no_server(
        recorded: tuple[Path, list[tuple[int, bytes]]]) -> None:
    cassette, answers = recorded
    with LlmProxy(traffic_setting(None, cassette), None, "mini") as proxy:  # type: ignore[arg-type]
        proxy.begin(CONVERSATION, {"<workspace>": "/elsewhere/b2"})
        again = conversation(proxy.url_for("http://gone.invalid"), "/elsewhere/b2")
        assert proxy.end() is None
    assert again == answers


def test_a_changed_request_diverges_naming_its_index_and_field(
        recorded: tuple[Path, list[tuple[int, bytes]]]) -> None:
    cassette, _ = recorded
    with LlmProxy(LlmTraffic(mode=TrafficMode.REPLAY, cassette=cassette), None, "mini") as proxy:
        proxy.begin(CONVERSATION, {"<workspace>": "/work/a1"})
        root = proxy.url_for(None)
        post(f"{root}/v1/chat/completions", {"model": "gpt-5", "messages": [
            {"role": "user", "content": "work in /work/a1 and /tmp/x1 at 2026-01-02T03:04:05Z"}],
            "metadata": {"user_id": "other"}})
        status, body = post(f"{root}/v1/chat/completions", {"model": "gpt-4.1", "messages": [
            {"role": "user", "content": "hi"}], "stream": True})
        diverged = proxy.end()
    assert status == 400 and json.loads(body)["error"]["code"] == "replay_diverged"
    assert diverged is not None and diverged.exit_code == 3
    assert f"replay diverged in {CONVERSATION}: request 1" in diverged.message
    assert "at body.model: recorded 'gpt-5', got 'gpt-4.1'" in diverged.message


def test_masks_keep_what_changes_the_answer() -> None:
    norm = Normaliser({"<run>": "/runs/r1"})
    same = norm.value({"a": "/runs/r1/x 2026-11-26 call_abc123def id "
                            "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "user": "u1"})
    assert same == {"a": "<run>/x <time> <id> id <uuid>"}
    assert norm.value('{"path": "/runs/r1/y"}') == {"<json>": {"path": "<run>/y"}}
    diff = first_difference({"m": [1, {"t": 0.2}]}, {"m": [1, {"t": 0.7}]})
    assert diff is not None and diff.field == "m[1].t"


def test_bad_settings_and_folders_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="exclude each other"):
        traffic_setting(tmp_path, tmp_path)
    with pytest.raises(UserInputError, match="no cassette here"):
        traffic_setting(None, tmp_path)
    (tmp_path / "cassette.json").write_text('{"format": "benchwright.cassette/9"}')
    with pytest.raises(UserInputError, match="newer benchwright"):
        traffic_setting(None, tmp_path)
    with pytest.raises(UserInputError, match="not a conversation name"):
        conversation_path(tmp_path, "../escape")


def test_a_recorded_429_replays_without_the_wait(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette"
    script = Script.model_validate({"turns": [
        {"text": "fine", "fault": {"kind": "http_429", "retry_after": 30}}]})
    body = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}
    with FakeLLMServer(script) as server, \
            LlmProxy(LlmTraffic(mode=TrafficMode.RECORD, cassette=cassette), server.base_url,
                     "mini") as proxy:
        proxy.begin(CONVERSATION, {})
        first = post(f"{proxy.url_for(server.base_url)}/v1/chat/completions", body)
        proxy.end()
    assert first[0] == 429
    with LlmProxy(LlmTraffic(mode=TrafficMode.REPLAY, cassette=cassette), None, "mini") as proxy:
        proxy.begin(CONVERSATION, {})
        request = urllib.request.Request(f"{proxy.url_for(None)}/v1/chat/completions",
                                         json.dumps(body).encode(), method="POST",
                                         headers={"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert proxy.end() is None
    assert refused.value.code == 429 and refused.value.headers["retry-after"] == "0"


def test_a_cassette_needs_the_local_executor(tmp_path: Path) -> None:
    traffic = LlmTraffic(mode=TrafficMode.RECORD, cassette=tmp_path)
    require_local(traffic, "local")
    require_local(None, "ray")
    with pytest.raises(UserInputError, match="--llm-record needs --executor local"):
        require_local(traffic, "ray")
