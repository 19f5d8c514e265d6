"""A readers-writer lock per site: read-only trials share a site, a MUTATE trial or a reset has
it alone.

Writers are preferred: once a writer waits, new readers wait behind it, so a MUTATE trial is not
starved by a stream of read-only ones. Locks are always taken in one global order (sorted site
names), so workers holding several sites cannot deadlock.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class SiteLock:
    """Shared for readers, exclusive for one writer."""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def hold(self, exclusive: bool) -> Iterator[None]:
        """Hold the lock, shared or exclusive, for the block."""
        if exclusive:
            self._acquire_write()
        else:
            self._acquire_read()
        try:
            yield
        finally:
            self._release(exclusive)

    def held_exclusively(self) -> bool:
        """True while a writer holds the lock."""
        with self._state:
            return self._writer

    def _acquire_read(self) -> None:
        with self._state:
            self._state.wait_for(lambda: not self._writer and not self._writers_waiting)
            self._readers += 1

    def _acquire_write(self) -> None:
        with self._state:
            self._writers_waiting += 1
            try:
                self._state.wait_for(lambda: not self._writer and not self._readers)
            finally:
                self._writers_waiting -= 1
            self._writer = True

    def _release(self, exclusive: bool) -> None:
        with self._state:
            if exclusive:
                self._writer = False
            else:
                self._readers -= 1
            self._state.notify_all()
