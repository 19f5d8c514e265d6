"""Whether a replayed request is the one recorded: both are normalised, then compared whole.

Normalising keeps what changes the answer (the model, messages, tools, settings, the stream
flag) and masks what varies between two runs of the same thing: the conversation's own folders
(`<workspace>`, `<run>`, from its header's `paths`; also spelled with a dash for every character
but letters and digits, as CLIs name folders of their own after them), temporary paths, UUIDs,
long hex ids, provider-style ids (`call_...`, `toolu_...`), dates, times and durations, a tool
output's own ids (`Chunk ID: ...`), and fields that only identify a session (`metadata`, `user`,
`prompt_cache_key`, `client_metadata`) or a moment (`*_at`, `*_ms`, `timestamp`). The first
difference is named by its path in the body (`messages[2].content`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

VOLATILE_KEYS = frozenset({"metadata", "user", "prompt_cache_key", "session_id",
                           "safety_identifier", "request_id", "client_metadata"})
# keys that hold a moment (`turn_started_at_unix_ms`, `created_at`, `timestamp`)
VOLATILE_KEY = re.compile(r"(?:_at|_unix_ms|_ms|timestamp|_time)$", re.IGNORECASE)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*"
MASKS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"/tmp/[^\s\"'\\`)]*"), "<tmp>"),
    (re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9a-fA-F])"), "<uuid>"),
    (re.compile(r"\b(?:call|toolu|chatcmpl|resp|msg|fc|req|ses|sess|prt)_[A-Za-z0-9_-]{6,}"),
     "<id>"),
    (re.compile(r"(?<![0-9a-f])[0-9a-f]{16,}(?![0-9a-f])"), "<hex>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                r"(?:Z|[+-]\d{2}:?\d{2})?)?"), "<time>"),
    (re.compile(rf"(?:{_DAY},? )?{_MONTH} \d{{1,2}},? \d{{4}}"), "<time>"),
    (re.compile(rf"{_DAY} {_MONTH} \d{{1,2}} \d{{4}}"), "<time>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?(?: ?[AP]M)?"), "<time>"),
    # a moment in epoch milliseconds (gemini's function-call ids: write_file_1795721539098_0)
    (re.compile(r"(?<![\d.])1[6-9]\d{11}(?![\d.])"), "<ms>"),
    # what a tool's output says of itself: how long it took, the id of its output
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:seconds|second|secs|sec|ms|s)\b"), "<duration>"),
    (re.compile(r"(?i)\b(chunk|session|request|trace|call|run|process)([ _-]?id: ?)[\w-]+"),
     r"\1\2<id>"),
    # a browser's tab ids (browser-use names each tab by four hex digits of its target id)
    (re.compile(r"\b((?:[Cc]urrent )?[Tt]ab:? )[0-9A-F]{4}\b"), r"\1<tab>"),
    # and its elements by the browser's node ids, which shift between browser sessions
    (re.compile(r"(?<![\w\]])\[\d+\](?=<)"), "[<node>]"),
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
        # a folder also appears as CLIs spell it in names of their own (claude: the working
        # folder's path with every other character a dash, for its project memory)
        pairs = {(form, mark) for mark, folder in paths.items() if folder
                 for form in (folder, re.sub(r"[^A-Za-z0-9]", "-", folder))}
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
            return {k: self.value(v) for k, v in value.items()
                    if k not in VOLATILE_KEYS and not VOLATILE_KEY.search(k)}
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
        return _dict_difference(recorded, got, where)
    if isinstance(recorded, list) and isinstance(got, list):
        return _list_difference(recorded, got, where)
    if recorded == got and type(recorded) is type(got):
        return None
    if isinstance(recorded, str) and isinstance(got, str) and max(len(recorded), len(got)) > 80:
        at = next((i for i, (a, b) in enumerate(zip(recorded, got, strict=False)) if a != b),
                  min(len(recorded), len(got)))
        return Difference(f"{where or '<body>'} (character {at})", _window(recorded, at),
                          _window(got, at))
    return Difference(where or "<body>", _short(recorded), _short(got))


def _dict_difference(recorded: dict[str, Any], got: dict[str, Any],
                     where: str) -> Difference | None:
    for key in [*recorded, *(k for k in got if k not in recorded)]:
        here = f"{where}.{key}" if where else str(key)
        if key not in recorded or key not in got:
            return Difference(here, _short(recorded.get(key, "<absent>")),
                              _short(got.get(key, "<absent>")))
        found = first_difference(recorded[key], got[key], here)
        if found is not None:
            return found
    return None


def _list_difference(recorded: list[Any], got: list[Any], where: str) -> Difference | None:
    for index, (old, new) in enumerate(zip(recorded, got, strict=False)):
        found = first_difference(old, new, f"{where}[{index}]")
        if found is not None:
            return found
    if len(recorded) != len(got):
        return Difference(f"{where} (length)", str(len(recorded)), str(len(got)))
    return None


def _window(text: str, at: int, before: int = 30, after: int = 50) -> str:
    """The text around position `at`, marked where it was cut."""
    start = max(0, at - before)
    return f"{'...' if start else ''}{text[start:at + after]}" \
        f"{'...' if at + after < len(text) else ''}"


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
