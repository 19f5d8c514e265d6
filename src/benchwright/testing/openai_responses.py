"""OpenAI Responses: `POST /v1/responses`, JSON or typed SSE events (the codex CLI uses it).

A stream goes: response.created, response.in_progress; per output item output_item.added, its
deltas (output_text.delta inside content_part.added/done, or function_call_arguments.delta/done),
output_item.done; then response.completed carrying the whole response and its usage.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from benchwright.testing.openai_chat import OpenAIChat
from benchwright.testing.wire import Call, Reply, Tokens, pieces, sse, usage_fields


class OpenAIResponses:
    """The Responses dialect."""

    def declares_tools(self, body: dict[str, Any]) -> bool:
        return bool(body.get("tools"))

    def reply(self, reply: Reply) -> dict[str, Any]:
        return _response(reply, "completed", _items(reply))

    def stream(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        events = _Events()
        yield events.emit("response.created", response=_response(reply, "in_progress", []))
        yield events.emit("response.in_progress", response=_response(reply, "in_progress", []))
        for index, item in enumerate(_items(reply)):
            yield from _item_events(events, index, item)
        yield events.emit("response.completed", response=self.reply(reply))

    def error(self, status: int, message: str) -> dict[str, Any]:
        return OpenAIChat().error(status, message)

    def usage(self, payloads: list[Any]) -> Tokens:
        # a body carries `usage`; a stream's response.completed carries the whole response
        return usage_fields(payloads, lambda p: p.get("usage") or (p.get("response") or {})
                            .get("usage"), ("input_tokens", "output_tokens"))


class _Events:
    """Numbers events in order, as the API does."""

    def __init__(self) -> None:
        self.number = 0

    def emit(self, kind: str, **fields: Any) -> bytes:
        self.number += 1
        return sse({"type": kind, "sequence_number": self.number, **fields}, event=kind)


def _response(reply: Reply, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    done = status == "completed"
    return {"id": f"resp_{reply.id}", "object": "response", "created_at": reply.created,
            "status": status, "completed_at": reply.created if done else None, "error": None,
            "incomplete_details": None, "instructions": None, "max_output_tokens": None,
            "model": reply.model, "output": output, "parallel_tool_calls": True,
            "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
            "store": False, "temperature": 1.0, "text": {"format": {"type": "text"}},
            "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
            "usage": _usage(reply) if done else None, "metadata": {}}


def _usage(reply: Reply) -> dict[str, Any]:
    return {"input_tokens": reply.input_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.total_tokens}


def _items(reply: Reply) -> list[dict[str, Any]]:
    items = [_message(reply, reply.text)] if reply.text else []
    return items + [_function_call(c) for c in reply.calls]


def _message(reply: Reply, text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    return {"type": "message", "id": f"msg_{reply.id}", "status": "completed",
            "role": "assistant", "content": content}


def _function_call(call: Call) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id,
            "name": call.name, "arguments": call.arguments_json, "status": "completed"}


def _item_events(events: _Events, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    if item["type"] == "message":
        yield from _message_events(events, index, item)
    else:
        yield from _call_events(events, index, item)
    yield events.emit("response.output_item.done", output_index=index, item=item)


def _message_events(events: _Events, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    text: str = item["content"][0]["text"]
    where = {"item_id": item["id"], "output_index": index}
    opened = {**item, "status": "in_progress", "content": []}
    yield events.emit("response.output_item.added", output_index=index, item=opened)
    empty = {"type": "output_text", "text": "", "annotations": []}
    yield events.emit("response.content_part.added", **where, content_index=0, part=empty)
    for piece in pieces(text):
        yield events.emit("response.output_text.delta", **where, content_index=0, delta=piece,
                          logprobs=[])
    yield events.emit("response.output_text.done", **where, content_index=0, text=text,
                      logprobs=[])
    yield events.emit("response.content_part.done", **where, content_index=0,
                      part=item["content"][0])


def _call_events(events: _Events, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    where = {"item_id": item["id"], "output_index": index}
    opened = {**item, "arguments": "", "status": "in_progress"}
    yield events.emit("response.output_item.added", output_index=index, item=opened)
    for piece in pieces(item["arguments"]):
        yield events.emit("response.function_call_arguments.delta", **where, delta=piece)
    yield events.emit("response.function_call_arguments.done", **where, name=item["name"],
                      arguments=item["arguments"])
