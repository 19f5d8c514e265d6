"""Whether a replayed request is the one recorded: both are normalised, then compared whole.

Normalising keeps what changes the answer (the model, messages, tools, settings, the stream
flag) and masks what varies between two runs of the same thing: the conversation's own folders
(`<workspace>`, `<run>`, from its header's `paths`), temporary paths, UUIDs, long hex ids,
provider-style ids (`call_...`, `toolu_...`), dates and times, and fields that only identify a
session (`metadata`, `user`, `prompt_cache_key`). The first difference is named by its path in
the body (`messages[2].content`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

VOLATILE_KEYS = frozenset({"metadata", "user", "prompt_cache_key", "session_id",
                           "safety_identifier", "request_id"})
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*"
MASKS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"/tmp/[^\s\"'\\`)]*"), "<tmp>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                r"[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\b(?:call|toolu|chatcmpl|resp|msg|fc|req|ses|sess|prt)_[A-Za-z0-9_-]{6,}"),
     "<id>"),
    (re.compile(r"\b[0-9a-f]{16,}\b"), "<hex>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                r"(?:Z|[+-]\d{2}:?\d{2})?)?"), "<time>"),
    (re.compile(rf"(?:{_DAY},? )?{_MONTH} \d{{1,2}},? \d{{4}}"), "<time>"),
    (re.compile(rf"{_DAY} {_MONTH} \d{{1,2}} \d{{4}}"), "<time>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?(?: ?[AP]M)?"), "<time>"),
]


@dataclass(frozen=True)
class Difference:
    """Where two requests first differ."""

    field: str
    """The path in the request (`path`, `method`, `body.messages[2].content`)."""
    recorded: str
    """The recorded value there, shortened."""
    got: str
    """The value the replayed request has there, shortened."""


class Normaliser:
    """Masks a conversation's varying parts; `paths` maps each placeholder to its folder."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        pairs = [(folder, mark) for mark, folder in paths.items() if folder]
        self.pairs = sorted(pairs, key=lambda pair: -len(pair[0]))

    def text(self, value: str) -> str:
        for folder, mark in self.pairs:
            value = value.replace(folder, mark)
        for pattern, mark in MASKS:
            value = pattern.sub(mark, value)
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._embedded(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items() if k not in VOLATILE_KEYS}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def _embedded(self, value: str) -> Any:
        """A string holding JSON (tool arguments) compared as its value, masked inside."""
        if value[:1] in "{[" and value[-1:] in "}]":
            try:
                return {"<json>": self.value(json.loads(value))}
            except ValueError:
                pass
        return self.text(value)

    def request(self, method: str, path: str, body: Any) -> dict[str, Any]:
        """What is compared of one request."""
        return {"method": method.upper(), "path": self.text(urlsplit(path).path),
                "body": self.value(body)}


def first_difference(recorded: Any, got: Any, where: str = "") -> Difference | None:
    """The first place (depth first, in the recorded order) where the two values differ."""
    if isinstance(recorded, dict) and isinstance(got, dict):
        for key in [*recorded, *(k for k in got if k not in recorded)]:
            here = f"{where}.{key}" if where else str(key)
            if key not in recorded or key not in got:
                return Difference(here, _short(recorded.get(key, "<absent>")),
                                  _short(got.get(key, "<absent>")))
            found = first_difference(recorded[key], got[key], here)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(got, list):
        for index, (old, new) in enumerate(zip(recorded, got, strict=False)):
            found = first_difference(old, new, f"{where}[{index}]")
            if found is not None:
                return found
        if len(recorded) != len(got):
            return Difference(f"{where} (length)", str(len(recorded)), str(len(got)))
        return None
    if recorded == got and type(recorded) is type(got):
        return None
    return Difference(where or "<body>", _short(recorded), _short(got))


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
