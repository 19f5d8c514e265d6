"""Anthropic Messages: `POST /v1/messages`, plain JSON or SSE events (what the claude CLI speaks).

A stream goes: message_start (usage with the input tokens), per content block
content_block_start, content_block_delta (text_delta, or input_json_delta for a tool_use), and
content_block_stop; then message_delta (stop_reason and output tokens) and message_stop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from benchwright.testing.wire import Reply, Tokens, pieces, sse, usage_fields

_ERROR_TYPES = {429: "rate_limit_error", 500: "api_error", 400: "invalid_request_error"}


class AnthropicMessages:
    """The Messages dialect."""

    def declares_tools(self, body: dict[str, Any]) -> bool:
        return bool(body.get("tools"))

    def reply(self, reply: Reply) -> dict[str, Any]:
        return {**_message(reply, _blocks(reply)), "stop_reason": _stop(reply),
                "usage": _usage(reply, reply.output_tokens)}

    def stream(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        start = {**_message(reply, []), "stop_reason": None, "usage": _usage(reply, 1)}
        yield _event("message_start", message=start)
        yield _event("ping")
        for index, block in enumerate(_blocks(reply)):
            yield from _block_events(index, block)
        yield _event("message_delta", delta={"stop_reason": _stop(reply), "stop_sequence": None},
                     usage={"output_tokens": reply.output_tokens})
        yield _event("message_stop")

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"type": "error",
                "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}

    def usage(self, payloads: list[Any]) -> Tokens:
        # a body's `usage`; a stream's message_start (input) then message_delta (output)
        return usage_fields(payloads, lambda p: p.get("usage") or (p.get("message") or {})
                            .get("usage"), ("input_tokens", "output_tokens"))


def _event(kind: str, **fields: Any) -> bytes:
    return sse({"type": kind, **fields}, event=kind)


def _message(reply: Reply, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": f"msg_{reply.id}", "type": "message", "role": "assistant",
            "model": reply.model, "content": content, "stop_sequence": None}


def _stop(reply: Reply) -> str:
    return "tool_use" if reply.calls else "end_turn"


def _usage(reply: Reply, output_tokens: int) -> dict[str, Any]:
    return {"input_tokens": reply.input_tokens, "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks = [{"type": "text", "text": reply.text}] if reply.text else []
    return blocks + [{"type": "tool_use", "id": c.id.replace("call_", "toolu_"), "name": c.name,
                      "input": c.arguments} for c in reply.calls]


def _block_events(index: int, block: dict[str, Any]) -> Iterator[bytes]:
    if block["type"] == "text":
        yield _event("content_block_start", index=index, content_block={**block, "text": ""})
        for piece in pieces(block["text"]):
            yield _event("content_block_delta", index=index,
                         delta={"type": "text_delta", "text": piece})
    else:
        yield _event("content_block_start", index=index, content_block={**block, "input": {}})
        for piece in pieces(json.dumps(block["input"])):
            yield _event("content_block_delta", index=index,
                         delta={"type": "input_json_delta", "partial_json": piece})
    yield _event("content_block_stop", index=index)
