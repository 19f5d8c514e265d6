"""What the judge model answers: a JSON object of flags, asked for through a JSON schema and
checked with pydantic (SCBench parses free text with regexes and reads a wrong shape as "no
flags").

A reply that is not JSON or not of the schema's shape is invalid (the request is retried once,
then the checkpoint is a judge error). A well-formed flag that names an item not asked in that
request, a file not in the batch, or lines outside the file is dropped and counted.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

DropReason = Literal["unknown_criterion", "unknown_file", "outside_lines"]
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```\s*$", re.DOTALL)


class Flag(BaseModel):
    """One occurrence of a rubric item, as the model reports it (SCBench's fields)."""

    criteria: str
    """The item's name."""
    file_name: str
    """The file, as named in the request."""
    start: int
    """First line (numbered from 1)."""
    end: int
    """Last line."""
    confidence: int = Field(ge=1, le=5)
    """1 (a guess) to 5 (certain)."""
    explanation: str | None = None
    """One sentence on why."""


class Reply(BaseModel):
    """The whole answer to one request."""

    flags: list[Flag]
    """Every occurrence found (an empty list: none)."""


class InvalidReply(Exception):
    """A reply that is not JSON of the schema's shape."""


@dataclass
class Checked:
    """A reply's flags that hold, and how many were dropped and why."""

    flags: list[Flag]
    dropped: Counter[str] = field(default_factory=Counter)


def reply_schema(criteria: list[str], files: list[str]) -> dict[str, Any]:
    """The JSON schema of a reply to one request: items and files as enums, every field
    required (OpenAI's strict mode), `explanation` nullable."""
    flag = {"type": "object", "additionalProperties": False,
            "required": ["criteria", "file_name", "start", "end", "confidence", "explanation"],
            "properties": {
                "criteria": {"type": "string", "enum": criteria},
                "file_name": {"type": "string", "enum": files},
                "start": {"type": "integer"}, "end": {"type": "integer"},
                "confidence": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
                "explanation": {"type": ["string", "null"]}}}
    return {"type": "object", "additionalProperties": False, "required": ["flags"],
            "properties": {"flags": {"type": "array", "items": flag}}}


def parse_payload(payload: str | dict[str, Any] | None) -> Reply:
    """The reply, from JSON text (one ```json fence tolerated) or an already decoded object."""
    if payload is None:
        raise InvalidReply("the reply holds no answer")
    if isinstance(payload, str):
        text = payload.strip()
        fenced = _FENCE.match(text)
        try:
            payload = json.loads(fenced.group(1) if fenced else text)
        except json.JSONDecodeError as exc:
            raise InvalidReply(f"the reply is not JSON ({exc.msg} at character {exc.pos})"
                               ) from None
    try:
        return Reply.model_validate(payload)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "reply"
        raise InvalidReply(f"the reply does not fit the schema: {where}: {error['msg']}"
                           ) from None


def check_flags(reply: Reply, criteria: set[str], file_lines: dict[str, int]) -> Checked:
    """Keep the flags that name an asked item, a batch file and lines inside it."""
    checked = Checked(flags=[])
    for flag in reply.flags:
        reason = _drop_reason(flag, criteria, file_lines)
        if reason is None:
            checked.flags.append(flag)
        else:
            checked.dropped[reason] += 1
    return checked


def _drop_reason(flag: Flag, criteria: set[str], file_lines: dict[str, int]) -> DropReason | None:
    if flag.criteria not in criteria:
        return "unknown_criterion"
    if flag.file_name not in file_lines:
        return "unknown_file"
    if not 1 <= flag.start <= flag.end <= file_lines[flag.file_name]:
        return "outside_lines"
    return None
