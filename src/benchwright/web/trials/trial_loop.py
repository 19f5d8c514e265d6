"""One event loop, in a thread of its own, for every browser trial of the process.

browser-use keeps state that binds to the event loop it first ran on (its event buses and
watchdogs): agents run with `asyncio.run` in two threads at once end up waiting on futures of the
other loop ("attached to a different loop") and can hang. Trials that run at the same time (site
workers, and read-only trials of one site) are therefore tasks of this single loop; the calling
thread waits for its own trial's result.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_LOCK = threading.Lock()
_LOOP: asyncio.AbstractEventLoop | None = None


def trial_loop() -> asyncio.AbstractEventLoop:
    """The loop, started on first use (a daemon thread: it never holds the process open)."""
    global _LOOP
    with _LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="browser-trials", daemon=True).start()
            _LOOP = loop
        return _LOOP


def run_on_trial_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on the trial loop and wait for its result in this thread."""
    return asyncio.run_coroutine_threadsafe(coroutine, trial_loop()).result()
