"""What every protocol module of the fake server shares: a resolved reply, SSE framing, errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchwright.testing.script import ToolCall, Turn


@dataclass(frozen=True)
class Call:
    """A scripted tool call with its id and both encodings of its arguments."""

    id: str
    name: str
    arguments: dict[str, Any]
    arguments_json: str


@dataclass(frozen=True)
class Reply:
    """One scripted turn, made concrete for one request."""

    id: str
    model: str
    text: str
    calls: list[Call] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    created: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Tokens:
    """The usage a response reports."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    """The provider's own figure (OpenRouter's `usage.cost`), when it gives one."""


class Dialect(Protocol):
    """One provider's wire format."""

    def declares_tools(self, body: dict[str, Any]) -> bool:
        """Whether the request offers the model any tool."""
        ...

    def reply(self, reply: Reply) -> dict[str, Any]:
        """The non-streaming response body."""
        ...

    def stream(self, reply: Reply, body: dict[str, Any]) -> Iterator[bytes]:
        """The streaming response, as SSE frames."""
        ...

    def error(self, status: int, message: str) -> dict[str, Any]:
        """The provider's error body for an HTTP status."""
        ...

    def usage(self, payloads: list[Any]) -> Tokens:
        """The tokens a response reports: its body, or a stream's event payloads in order."""
        ...


def sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def pieces(text: str, parts: int = 3) -> list[str]:
    """`text` cut into up to `parts` pieces, so clients must join deltas."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i:i + size] for i in range(0, len(text), size)]


def estimate_tokens(text: str) -> int:
    """About four characters a token, at least one."""
    return max(1, len(text) // 4)


def make_reply(turn: Turn, number: int, model: str, body: dict[str, Any],
               created: int) -> Reply:
    """The concrete reply to `body` for the `number`-th served turn."""
    calls = [_call(c, number, i) for i, c in enumerate(turn.tool_calls)]
    cost = turn.usage.cost_usd if turn.usage is not None else None
    if turn.usage is not None:
        tokens = (turn.usage.input_tokens, turn.usage.output_tokens)
    else:
        generated = turn.text + "".join(c.name + c.arguments_json for c in calls)
        tokens = (estimate_tokens(json.dumps(body)), estimate_tokens(generated))
    return Reply(id=f"fake{number}", model=model, text=turn.text, calls=calls,
                 input_tokens=tokens[0], output_tokens=tokens[1], created=created, cost_usd=cost)


def _call(call: ToolCall, number: int, index: int) -> Call:
    if isinstance(call.arguments, str):
        raw = call.arguments
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = {}
        mapping = parsed if isinstance(parsed, dict) else {}
    else:
        mapping, raw = call.arguments, json.dumps(call.arguments)
    return Call(id=f"call_fake{number}_{index}", name=call.name, arguments=mapping,
                arguments_json=raw)


def request_text(body: Any) -> str:
    """Every string in a request body, one per line: what a script's rules match against."""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        return "\n".join(request_text(v) for v in body.values())
    if isinstance(body, list):
        return "\n".join(request_text(v) for v in body)
    return ""


MALFORMED_JSON = b'{"id": "fake-malformed", "choices": [{"index": 0, "mess'
"""A body cut off mid-object: what a client gets from a broken proxy."""


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_fields(payloads: list[Any], find: Any, names: tuple[str, str]) -> Tokens:
    """The last usage object `find(payload)` gives among `payloads`, read by its two token
    field names (cost from its `cost`); the input count kept from an earlier one if a later
    one lacks it (Anthropic's streams report input and output in separate events)."""
    found_in, found_out, cost = 0, 0, None
    for payload in payloads:
        usage = find(payload) if isinstance(payload, dict) else None
        if not isinstance(usage, dict):
            continue
        found_in = _number(usage.get(names[0])) or found_in
        found_out = _number(usage.get(names[1])) or found_out
        raw_cost = usage.get("cost")
        cost = float(raw_cost) if isinstance(raw_cost, int | float) else cost
    return Tokens(found_in, found_out, cost)
