"""Which provider protocol a request speaks, read from its path and body: the fake server
answers by it, and the recording proxy (`benchwright.llm`) reads usage and shapes errors by it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from benchwright.testing.anthropic_messages import AnthropicMessages
from benchwright.testing.gemini import Gemini
from benchwright.testing.openai_chat import OpenAIChat
from benchwright.testing.openai_responses import OpenAIResponses
from benchwright.testing.wire import Dialect

_GEMINI = re.compile(r"/v1(?:beta)?/models/([^/:]+):(generateContent|streamGenerateContent"
                     r"|countTokens)$")
_DIALECTS: dict[str, Dialect] = {"/v1/chat/completions": OpenAIChat(),
                                 "/v1/responses": OpenAIResponses(),
                                 "/v1/messages": AnthropicMessages()}


@dataclass(frozen=True)
class Call:
    """A model call: its dialect, model name and whether it streams."""

    dialect: Dialect
    model: str
    stream: bool
    sse: bool = True


def route(path: str, raw_path: str, body: Any, prefix: str = "") -> Call | None:
    """The call `path` (query left out; `raw_path` with it) makes, or None when it is no model
    call; `prefix` is a path the endpoint sits under (`/api` of `https://host/api/v1`)."""
    path = path.removeprefix(prefix) if prefix and path.startswith(prefix) else path
    streams = isinstance(body, dict) and body.get("stream") is True
    model = str(body.get("model") or "fake") if isinstance(body, dict) else "fake"
    if path in _DIALECTS:
        return Call(_DIALECTS[path], model, streams)
    found = _GEMINI.search(path)
    if found is None or not path.startswith("/v1"):
        return None
    alt_sse = dict(parse_qsl(urlsplit(raw_path).query)).get("alt") == "sse"
    return Call(Gemini(), found.group(1), found.group(2) == "streamGenerateContent", alt_sse)


def dialect_of(path: str) -> Dialect | None:
    """The dialect of a request path, wherever the endpoint's own prefix puts it."""
    for suffix, dialect in _DIALECTS.items():
        if path.split("?")[0].endswith(suffix):
            return dialect
    return Gemini() if _GEMINI.search(path.split("?")[0]) else None
