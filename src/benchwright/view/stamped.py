"""What the viewer keeps of a run between pages: values stamped with when their source last
changed, made again when the stamp differs. Thread-safe (the server answers on many threads)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class StampedCache(Generic[K, V]):
    """Values by key, each with its source's stamp; emptied when `limit` keys are kept."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self._kept: dict[K, tuple[Hashable, V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, stamp: Hashable | None, make: Callable[[], V]) -> V:
        """The value kept under `key` if its stamp is `stamp`, else `make()` (kept with the
        stamp; a None stamp, a source being written, keeps nothing)."""
        if stamp is None:
            return make()
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        value = make()
        with self._lock:
            if self.limit is not None and len(self._kept) >= self.limit:
                self._kept.clear()
            self._kept[key] = (stamp, value)
        return value
