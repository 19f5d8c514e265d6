"""OpenAI Chat Completions: `POST /v1/chat/completions`, as JSON or SSE chunks ending in [DONE]."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from benchwright.testing.wire import Call, Reply, Tokens, pieces, sse, usage_fields

_ERROR_TYPES = {429: ("requests", "rate_limit_exceeded"), 500: ("server_error", None),
                400: ("invalid_request_error", "fake_script_exhausted")}


class OpenAIChat:
    """The Chat Completions dialect."""

    def declares_tools(self, body: dict[str, Any]) -> bool:
        return bool(body.get("tools") or body.get("functions"))

    def reply(self, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None,
                                   "refusal": None}
        if reply.calls:
            message["tool_calls"] = [_tool_call(c) for c in reply.calls]
        choice = {"index": 0, "message": message, "logprobs": None,
                  "finish_reason": _finish(reply)}
        return {**_head(reply, "chat.completion"), "choices": [choice], "usage": _usage(reply)}

    def stream(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        yield _chunk(reply, {"role": "assistant", "content": ""}, with_usage)
        for piece in pieces(reply.text):
            yield _chunk(reply, {"content": piece}, with_usage)
        for index, call in enumerate(reply.calls):
            yield from _call_chunks(reply, index, call, with_usage)
        yield _chunk(reply, {}, with_usage, finish=_finish(reply))
        if with_usage:
            yield sse({**_head(reply, "chat.completion.chunk"), "choices": [],
                       "usage": _usage(reply)})
        yield sse("[DONE]")

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind, code = _ERROR_TYPES.get(status, ("server_error", None))
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def usage(self, payloads: list[Any]) -> Tokens:
        return usage_fields(payloads, lambda p: p.get("usage"),
                            ("prompt_tokens", "completion_tokens"))


def _head(reply: Reply, obj: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-{reply.id}", "object": obj, "created": reply.created,
            "model": reply.model, "system_fingerprint": "fp_fake"}


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.calls else "stop"


def _usage(reply: Reply) -> dict[str, Any]:
    usage = {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
             "total_tokens": reply.total_tokens,
             "prompt_tokens_details": {"cached_tokens": 0},
             "completion_tokens_details": {"reasoning_tokens": 0}}
    # OpenRouter's figure, when the script gives one
    return usage if reply.cost_usd is None else {**usage, "cost": reply.cost_usd}


def _tool_call(call: Call) -> dict[str, Any]:
    return {"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json}}


def _chunk(reply: Reply, delta: dict[str, Any], with_usage: bool,
           finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    extra = {"usage": None} if with_usage else {}
    return sse({**_head(reply, "chat.completion.chunk"), "choices": [choice], **extra})


def _call_chunks(reply: Reply, index: int, call: Call, with_usage: bool) -> Iterator[bytes]:
    opening = {"index": index, "id": call.id, "type": "function",
               "function": {"name": call.name, "arguments": ""}}
    yield _chunk(reply, {"tool_calls": [opening]}, with_usage)
    for piece in pieces(call.arguments_json):
        part = {"index": index, "function": {"arguments": piece}}
        yield _chunk(reply, {"tool_calls": [part]}, with_usage)
