"""network.har on disk, always a complete HAR: rewritten atomically as entries arrive.

Each entry is serialised once and kept as text; a flush writes header + entries + trailer to a
temporary file and renames it over network.har, so a reader (or a trial killed with SIGKILL)
only ever sees a whole document. Flushes are throttled (at most one per `interval_s`, the last
one scheduled), which bounds the rewrite cost on long trials; `close()` writes the final file.
Entries are kept in request start order: the evaluator takes the *last* navigation in file order.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import time
from pathlib import Path
from typing import Any

from benchwright.files.atomic import write_bytes_atomic
from benchwright.web.browser.har import har_log


class HarWriter:
    """The entries of one trial and the file they are flushed to."""

    def __init__(self, path: Path, interval_s: float = 0.2, browser_version: str = "") -> None:
        self.path = path
        self.interval_s = interval_s
        self.browser_version = browser_version
        self._keys: list[tuple[float, int]] = []
        self._texts: list[str] = []
        self._last_flush = 0.0
        self._scheduled: asyncio.TimerHandle | None = None
        self.flushes = 0
        self.flush_seconds = 0.0
        path.parent.mkdir(parents=True, exist_ok=True)
        self.flush()

    def __len__(self) -> int:
        return len(self._texts)

    def add(self, entry: dict[str, Any], start_key: float) -> None:
        """Keep an entry (ordered by `start_key`) and flush now or soon."""
        key = (start_key, len(self._texts))
        at = bisect.bisect(self._keys, key)
        self._keys.insert(at, key)
        self._texts.insert(at, json.dumps(entry, ensure_ascii=False))
        self._request_flush()

    def _request_flush(self) -> None:
        wait = self._last_flush + self.interval_s - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self._scheduled is None:
            self._scheduled = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush(self) -> None:
        """Write the whole HAR now, atomically."""
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        started = time.monotonic()
        text = har_log(",\n".join(self._texts), self.browser_version)
        # fileio's write gives the umask's mode (0644), as every other file of a run has;
        # a bare mkstemp + rename left network.har 0600.
        write_bytes_atomic(self.path, text.encode("utf-8"), durable=False)
        self._last_flush = time.monotonic()
        self.flushes += 1
        self.flush_seconds += self._last_flush - started

    def close(self) -> None:
        """The final write, synced to disk."""
        self.flush()
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
