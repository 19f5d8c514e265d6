"""The cassette's files as pydantic models (format `benchwright.cassette/1`, docs/cassettes.md).

A cassette is a folder: `cassette.json` (this header) and one gzip-compressed JSON-lines file
per conversation under `conversations/` (an attempt at a checkpoint, a web trial, a judging):
its first line a `ConversationHeader`, then one `Exchange` per request, in the order they came.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

CASSETTE_FORMAT: Literal["benchwright.cassette/1"] = "benchwright.cassette/1"
CONVERSATION_FORMAT: Literal["benchwright.cassette-conversation/1"] = \
    "benchwright.cassette-conversation/1"


class TrafficMode(StrEnum):
    """What the proxy does with a model call."""

    RECORD = "record"
    """Forward it to the real endpoint and write both sides into the cassette."""
    REPLAY = "replay"
    """Answer it from the cassette; nothing leaves the machine."""


class LlmTraffic(BaseModel):
    """A run's model traffic setting (`--llm-record DIR` or `--llm-replay DIR`)."""

    mode: TrafficMode
    """Record or replay."""
    cassette: Path
    """The cassette folder (absolute)."""

    def describe(self) -> str:
        """One line for reports: where the model calls went."""
        if self.mode is TrafficMode.REPLAY:
            return f"replayed from {self.cassette} (usage and cost are the recording's)"
        return f"recorded into {self.cassette}"


class CassetteHeader(BaseModel):
    """`cassette.json`: what the folder is."""

    format: Literal["benchwright.cassette/1"] = CASSETTE_FORMAT
    """The format and its version; a newer one is refused."""
    created: str
    """When recording began (UTC, ISO 8601)."""
    benchwright: str
    """The version that recorded it."""


class StreamEvent(BaseModel):
    """One event of a streamed response (an SSE event, or a raw chunk of another stream)."""

    t: float = Field(ge=0)
    """Seconds from the request's start to the event's arrival."""
    data: str
    """The event as sent, framing included (`event: ...\\ndata: ...\\n\\n`)."""


class Exchange(BaseModel):
    """One request and the response it got."""

    index: int = Field(ge=0)
    """Its position in the conversation, from 0."""
    method: str
    """The HTTP method."""
    path: str
    """The path and query as the agent sent them (credential query values redacted)."""
    request_headers: dict[str, str] = Field(default_factory=dict)
    """The request headers that shape the answer (content type, API versions); never a
    credential."""
    request: Any = None
    """The body: JSON, or text when it is not JSON, None when empty."""
    status: int
    """The HTTP status the endpoint answered with."""
    response_headers: dict[str, str] = Field(default_factory=dict)
    """The response headers a client reads (content type, retry-after)."""
    response: Any = None
    """A whole body: JSON, or text; None for a stream."""
    events: list[StreamEvent] | None = None
    """A streamed body, event by event with its timing; None when the body came whole."""
    started: float = Field(default=0.0, ge=0)
    """Seconds from the conversation's start to the request."""
    duration_s: float = Field(default=0.0, ge=0)
    """Seconds from the request to the response's last byte."""
    model: str | None = None
    """The model the request named (from the body or a Gemini path)."""
    input_tokens: int = Field(default=0, ge=0)
    """Prompt tokens the response reported (0: none reported)."""
    output_tokens: int = Field(default=0, ge=0)
    """Generated tokens the response reported."""
    cost_usd: float | None = None
    """The provider's own cost figure, when it reported one."""


class ConversationHeader(BaseModel):
    """The first line of a conversation file."""

    format: Literal["benchwright.cassette-conversation/1"] = CONVERSATION_FORMAT
    """The format and its version."""
    key: str
    """Which conversation: `coding/PROBLEM/trial_N/CHECKPOINT/attempt_K`, `web/TASK/trial_N`,
    `judge`."""
    agent: str
    """Who talked: the agent's registered name, or `judge`."""
    model: str | None = None
    """The model the run named."""
    upstream: str
    """The endpoint recorded (scheme, host and port; no credential)."""
    paths: dict[str, str] = Field(default_factory=dict)
    """Placeholders for this conversation's own folders (`<workspace>` -> its path): they
    differ between runs and are matched as the placeholder."""
    started: str
    """When the conversation began (UTC, ISO 8601)."""
    exchanges: int = Field(default=0, ge=0)
    """How many exchanges follow."""
