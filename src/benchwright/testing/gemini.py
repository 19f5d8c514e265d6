"""Gemini: `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`.

What the gemini CLI speaks. Function calls arrive whole (Gemini does not stream arguments); text
arrives in pieces; the last chunk carries the finish reason and `usageMetadata`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from benchwright.testing.wire import Reply, Tokens, pieces, sse, usage_fields

_STATUS = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 400: "INVALID_ARGUMENT"}


class Gemini:
    """The generateContent dialect."""

    def declares_tools(self, body: dict[str, Any]) -> bool:
        return any(t.get("functionDeclarations") or t.get("function_declarations")
                   for t in body.get("tools") or [])

    def reply(self, reply: Reply) -> dict[str, Any]:
        return _chunk(reply, _parts(reply), last=True)

    def stream(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        texts = [{"text": p} for p in pieces(reply.text)]
        calls = _parts(reply)[1 if reply.text else 0:]
        parts = [[t] for t in texts[:-1]] + [texts[-1:] + calls]
        for index, chunk_parts in enumerate(parts):
            yield sse(_chunk(reply, chunk_parts, last=index == len(parts) - 1))

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message,
                          "status": _STATUS.get(status, "INTERNAL")}}

    def usage(self, payloads: list[Any]) -> Tokens:
        return usage_fields(payloads, lambda p: p.get("usageMetadata"),
                            ("promptTokenCount", "candidatesTokenCount"))


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    return parts + [{"functionCall": {"name": c.name, "args": c.arguments}} for c in reply.calls]


def _chunk(reply: Reply, parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": reply.model,
                            "responseId": reply.id}
    if last:
        candidate["finishReason"] = "STOP"
        body["usageMetadata"] = {"promptTokenCount": reply.input_tokens,
                                 "candidatesTokenCount": reply.output_tokens,
                                 "totalTokenCount": reply.total_tokens}
    return body
