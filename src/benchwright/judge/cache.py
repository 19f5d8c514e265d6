"""Verdicts kept by what was asked, so judging an unchanged snapshot again makes no request.

The key is a SHA-256 over everything a request sends (model, protocol, endpoint, temperature,
output cap, the rendered prefix with the batch's files, the rendered criteria with the rubric's
items, the reply schema) and the sample's index: a changed template, rubric, file or setting is
a new key. One JSON file per key, written atomically; only replies that validated are kept. A
file that does not read back as an entry counts as a miss.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from benchwright.files.atomic import write_text_atomic
from benchwright.judge.models import CostSource, TokenUsage

MAX_ENTRY_BYTES = 64 * 2**20


class CacheEntry(BaseModel):
    """One validated reply."""

    format: Literal["benchwright.judge-cache/1"] = "benchwright.judge-cache/1"
    """The entry's format and version."""
    key: str
    """Its key."""
    payload: str | dict[str, Any]
    """The answer as the model gave it (validated again on every read)."""
    raw: list[dict[str, Any]]
    """The raw responses behind it (an invalid first reply, then the valid one)."""
    usage: TokenUsage
    """Tokens of those responses."""
    cost_usd: float
    """What they cost when they were made."""
    cost_source: CostSource
    """Where that cost came from."""


def request_key(parts: dict[str, Any], sample: int) -> str:
    """The key of one request's `sample`-th answer."""
    text = json.dumps({"request": parts, "sample": sample}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class VerdictCache:
    """A folder of entries (`<key[:2]>/<key>.json`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CacheEntry | None:
        """The entry, or None (absent, unreadable, or not an entry of this key)."""
        path = self.path(key)
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_ENTRY_BYTES:
                return None
            entry = CacheEntry.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            return None
        return entry if entry.key == key else None

    def put(self, entry: CacheEntry, text: str) -> None:
        """Store an entry; `text` is its JSON as it should land on disk (redacted). Not fsynced:
        an entry lost with the machine's power is only a miss."""
        write_text_atomic(self.path(entry.key), text, durable=False)
