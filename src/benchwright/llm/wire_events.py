"""A recorded response read with the fake server's knowledge of each protocol
(`benchwright.testing.routes`): streamed events split and parsed, usage and model read."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from benchwright.llm.models import StreamEvent
from benchwright.testing.routes import dialect_of
from benchwright.testing.wire import Tokens

_BOUNDARY = re.compile(rb"\r?\n\r?\n")
_GEMINI_MODEL = re.compile(r"/models/([^/:]+):")


def split_events(buffer: bytes, sse: bool) -> tuple[list[bytes], bytes]:
    """Whole events of `buffer` (framing kept) and the rest; a stream that is not SSE (Gemini's
    JSON array) comes as its chunks."""
    if not sse:
        return ([buffer] if buffer else []), b""
    events, start = [], 0
    for found in _BOUNDARY.finditer(buffer):
        events.append(buffer[start:found.end()])
        start = found.end()
    return events, buffer[start:]


def payloads_of(response: Any, events: list[StreamEvent] | None) -> list[Any]:
    """The JSON values a response carries: its body, or each event's data."""
    if events is None:
        return [response] if isinstance(response, dict) else []
    text = "".join(e.data for e in events)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return _parsed_all(data or [text])  # not SSE: one JSON array, in chunks


def _parsed_all(pieces: list[str]) -> list[Any]:
    found: list[Any] = []
    for piece in pieces:
        try:
            value = json.loads(piece)
        except ValueError:
            continue
        found += value if isinstance(value, list) else [value]
    return found


def usage_of(path: str, request: Any, payloads: list[Any]) -> tuple[Tokens, str | None]:
    """The tokens the response reported and the model the request named."""
    dialect = dialect_of(path)
    tokens = dialect.usage(payloads) if dialect is not None else Tokens()
    model = request.get("model") if isinstance(request, dict) else None
    if not isinstance(model, str):
        found = _GEMINI_MODEL.search(unquote(urlsplit(path).path))
        model = found.group(1) if found else None
    return tokens, model
