"""Atomic file writes: a reader (or a resumed run) never sees half a file."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_text_atomic(path: Path, text: str, durable: bool = True) -> None:
    """Write `text` to `path` through a temporary file and a rename; fsync it if `durable`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, data: Any, durable: bool = True) -> None:
    """Write `data` as indented JSON, atomically."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", durable)
