"""The fake LLM server against the real provider SDKs: every protocol, streaming and not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script

SCRIPT = """
turns:
  - text: "I'll write the file."
    tool_calls:
      - name: bash
        arguments: {command: "printf 'x = 1\\n' > main.py"}
    usage: {input_tokens: 120, output_tokens: 30}
  - text: "All done, the file is written."
"""
COMMAND = "printf 'x = 1\n' > main.py"  # YAML turns the escaped \n into a newline
FAKE_KEY = "sk-fake-0123456789abcdef"
OPENAI_TOOLS = [{"type": "function", "function": {
    "name": "bash", "description": "run a command",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
RESPONSES_TOOLS = [{"type": "function", "name": "bash", "description": "run a command",
                    "parameters": OPENAI_TOOLS[0]["function"]["parameters"]}]  # type: ignore[index]
ANTHROPIC_TOOLS = [{"name": "bash", "description": "run a command",
                    "input_schema": OPENAI_TOOLS[0]["function"]["parameters"]}]  # type: ignore[index]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(Script.from_yaml(SCRIPT)) as fake:
        yield fake


def _openai(server: FakeLLMServer):  # type: ignore[no-untyped-def]
    openai = pytest.importorskip("openai")
    return openai.OpenAI(api_key=FAKE_KEY, base_url=f"{server.base_url}/v1", max_retries=0)


def test_openai_chat_completions(server: FakeLLMServer) -> None:
    client = _openai(server)
    first = client.chat.completions.create(model="fake", tools=OPENAI_TOOLS,
                                           messages=[{"role": "user", "content": "go"}])
    message = first.choices[0].message
    assert message.content == "I'll write the file."
    assert first.choices[0].finish_reason == "tool_calls"
    call = message.tool_calls[0]
    assert call.function.name == "bash"
    assert json.loads(call.function.arguments) == {"command": COMMAND}
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (120, 30)
    second = client.chat.completions.create(model="fake", tools=OPENAI_TOOLS,
                                            messages=[{"role": "user", "content": "go"}])
    assert second.choices[0].message.content == "All done, the file is written."
    assert second.choices[0].message.tool_calls is None
    assert second.usage.completion_tokens > 0


def test_openai_chat_completions_streaming(server: FakeLLMServer) -> None:
    client = _openai(server)
    stream = client.chat.completions.create(
        model="fake", tools=OPENAI_TOOLS, messages=[{"role": "user", "content": "go"}],
        stream=True, stream_options={"include_usage": True})
    text, arguments, names, usage, finish = "", "", [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                names += [call.function.name] if call.function.name else []
                arguments += call.function.arguments or ""
    assert text == "I'll write the file." and names == ["bash"] and finish == "tool_calls"
    assert json.loads(arguments) == {"command": COMMAND}
    assert usage is not None and usage.total_tokens == 150


def test_openai_chat_stream_without_usage_option(server: FakeLLMServer) -> None:
    chunks = list(_openai(server).chat.completions.create(
        model="fake", tools=OPENAI_TOOLS, messages=[{"role": "user", "content": "go"}],
        stream=True))
    assert all(c.usage is None for c in chunks) and all(c.choices for c in chunks)


def test_openai_responses(server: FakeLLMServer) -> None:
    client = _openai(server)
    first = client.responses.create(model="fake", input="go", tools=RESPONSES_TOOLS)
    calls = [item for item in first.output if item.type == "function_call"]
    assert first.output_text == "I'll write the file."
    assert calls[0].name == "bash" and json.loads(calls[0].arguments) == {"command": COMMAND}
    assert first.usage is not None and first.usage.input_tokens == 120
    second = client.responses.create(model="fake", input="go", tools=RESPONSES_TOOLS)
    assert second.output_text == "All done, the file is written." and second.status == "completed"


def test_openai_responses_streaming(server: FakeLLMServer) -> None:
    client = _openai(server)
    with client.responses.stream(model="fake", input="go", tools=RESPONSES_TOOLS) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_response()
    assert events[:3] == ["response.created", "response.in_progress",
                          "response.output_item.added"]
    assert "response.output_text.delta" in events
    assert "response.function_call_arguments.delta" in events
    assert events[-1] == "response.completed"
    call = next(item for item in final.output if item.type == "function_call")
    assert json.loads(call.arguments) == {"command": COMMAND}
    assert final.usage is not None and final.usage.output_tokens == 30


def _anthropic(server: FakeLLMServer):  # type: ignore[no-untyped-def]
    anthropic = pytest.importorskip("anthropic")
    return anthropic.Anthropic(api_key=FAKE_KEY, base_url=server.base_url, max_retries=0)


def test_anthropic_messages(server: FakeLLMServer) -> None:
    client = _anthropic(server)
    first = client.messages.create(model="fake", max_tokens=500, tools=ANTHROPIC_TOOLS,
                                   messages=[{"role": "user", "content": "go"}])
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert first.content[1].input == {"command": COMMAND} and first.stop_reason == "tool_use"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (120, 30)
    second = client.messages.create(model="fake", max_tokens=500, tools=ANTHROPIC_TOOLS,
                                    messages=[{"role": "user", "content": "go"}])
    assert second.stop_reason == "end_turn"


def test_anthropic_messages_streaming(server: FakeLLMServer) -> None:
    client = _anthropic(server)
    with client.messages.stream(model="fake", max_tokens=500, tools=ANTHROPIC_TOOLS,
                                messages=[{"role": "user", "content": "go"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "I'll write the file."
    tool = next(b for b in final.content if b.type == "tool_use")
    assert tool.name == "bash" and tool.input == {"command": COMMAND}
    assert (final.usage.input_tokens, final.usage.output_tokens) == (120, 30)


def test_gemini_generate_content(server: FakeLLMServer) -> None:
    genai = pytest.importorskip("google.genai")
    types = genai.types
    client = genai.Client(api_key=FAKE_KEY,
                          http_options=types.HttpOptions(base_url=server.base_url))
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(
        name="bash", parameters={"type": "object",
                                 "properties": {"command": {"type": "string"}}})])
    config = types.GenerateContentConfig(
        tools=[tool], automatic_function_calling=types.AutomaticFunctionCallingConfig(
            disable=True))
    first = client.models.generate_content(model="gemini-fake", contents="go", config=config)
    assert first.function_calls[0].name == "bash"
    assert first.function_calls[0].args == {"command": COMMAND}
    assert first.usage_metadata.prompt_token_count == 120
    chunks = list(client.models.generate_content_stream(model="gemini-fake", contents="go",
                                                        config=config))
    assert "".join(c.text or "" for c in chunks) == "All done, the file is written."
    assert chunks[-1].usage_metadata.candidates_token_count > 0


def test_requests_recorded_without_credentials(server: FakeLLMServer) -> None:
    _openai(server).chat.completions.create(model="fake", tools=OPENAI_TOOLS,
                                            messages=[{"role": "user", "content": "go"}])
    _anthropic(server).messages.create(model="fake", max_tokens=10, tools=ANTHROPIC_TOOLS,
                                       messages=[{"role": "user", "content": "go"}])
    assert [r.turn for r in server.requests] == [0, 1]
    assert server.requests[0].body["messages"][0]["content"] == "go"
    assert server.requests[0].headers["authorization"].startswith("<redacted:")
    dumped = json.dumps([r.model_dump(mode="json") for r in server.requests])
    assert FAKE_KEY not in dumped


def test_rules_answer_by_content_with_latency_and_a_scripted_cost() -> None:
    script = Script.model_validate({"latency_s": 0.05, "rules": [
        {"match": ["apples"], "replies": [{"text": "first"}, {"text": "then", "usage": {
            "input_tokens": 7, "output_tokens": 3, "cost_usd": 0.25}}]},
        {"match": [], "replies": [{"text": "anything else"}]}]})
    with FakeLLMServer(script) as fake:
        client = _openai(fake)

        def ask(text: str) -> Any:
            return client.chat.completions.create(
                model="fake", messages=[{"role": "user", "content": text}],
                response_format={"type": "json_schema", "json_schema": {
                    "name": "x", "strict": True, "schema": {"type": "object"}}})

        assert ask("pears").choices[0].message.content == "anything else"
        assert ask("two apples").choices[0].message.content == "first"
        last = ask("apples again")
        assert last.choices[0].message.content == "then"
        assert last.model_dump()["usage"]["cost"] == 0.25
        assert ask("apples, the last reply repeats").choices[0].message.content == "then"
        assert fake.model_calls[0].body["response_format"]["type"] == "json_schema"
