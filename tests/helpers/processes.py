"""The processes a test started, followed through /proc: a test looks only at its own.

`ProcessTree(pid)` remembers every process seen below `pid` (pid and start time, so a reused pid
is not mistaken for one of ours), each time it is refreshed; `watch()` refreshes it in the
background, so a tree whose root is killed (and whose children are re-parented away) can still be
checked for leftovers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Process:
    """One process: its pid, its start time (clock ticks since boot) and its command line."""

    pid: int
    start: int
    argv: tuple[str, ...]


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) of a live process, None if it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[19]), fields[0]


def _argv(pid: int) -> tuple[str, ...]:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ()
    return tuple(part.decode(errors="replace") for part in raw.split(b"\0") if part)


def _children() -> dict[int, list[int]]:
    """Every live process's children, from one pass over /proc."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                children.setdefault(stat[0], []).append(int(entry.name))
    return children


def alive(process: Process) -> bool:
    """Still running (a zombie has finished: only its parent's wait is missing)."""
    stat = _stat(process.pid)
    return stat is not None and stat[1] == process.start and stat[2] != "Z"


class ProcessTree:
    """The processes started below one root process, as far as this test has seen them."""

    def __init__(self, root: int) -> None:
        self.seen: dict[tuple[int, int], Process] = {}
        self._lock = threading.Lock()
        stat = _stat(root)
        if stat is not None:
            self.seen[(root, stat[1])] = Process(root, stat[1], _argv(root))
        self.refresh()

    def refresh(self) -> list[Process]:
        """Look below every process seen so far that still runs (the root first)."""
        children = _children()
        with self._lock:
            todo = [p.pid for p in self.seen.values() if alive(p)]
            while todo:
                pid = todo.pop()
                for child in children.get(pid, []):
                    stat = _stat(child)
                    if stat is not None and (child, stat[1]) not in self.seen:
                        self.seen[(child, stat[1])] = Process(child, stat[1], _argv(child))
                        todo.append(child)
            return list(self.seen.values())

    def running(self) -> list[Process]:
        """The processes seen so far that still run, with their command lines of now (a process
        may have exec'd since it was first seen)."""
        with self._lock:
            return [Process(p.pid, p.start, _argv(p.pid)) for p in self.seen.values() if alive(p)]

    def find(self, match: Callable[[tuple[str, ...]], bool]) -> list[Process]:
        """The running processes of the tree whose command line matches."""
        self.refresh()
        return [p for p in self.running() if match(p.argv)]

    @contextmanager
    def watch(self, every_s: float = 0.1) -> Iterator[ProcessTree]:
        """Refresh in a background thread while the block runs."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every_s):
                self.refresh()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()

    def wait_until_gone(self, timeout_s: float = 120.0) -> list[Process]:
        """Wait for every process seen to end; the ones still running after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while (left := self.running()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left


def wait_for(condition: Callable[[], bool], timeout_s: float = 300.0, every_s: float = 0.1,
             what: str = "the condition") -> None:
    """Poll until `condition()` holds; wide limits: a loaded machine may be slow, never wrong."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(every_s)
