"""Where the suite's time went, printed after pytest's 20 slowest tests: the test files that took
the most time (setup, call and teardown of all their tests, summed), each xdist worker's busy
time and end, so an unbalanced run (a worker busy long after the others stopped) shows in the CI
log, and how busy the machine's cores were meanwhile (/proc/stat: near 100% says more workers
would not help; far below, that the tests wait more than they compute).

A pytest plugin, loaded by scripts/check (`-p tests.helpers.timeline`); with TEST_TIMES_FILE set,
every phase of every test is also written there as JSON lines (nodeid, phase, worker, start,
stop in epoch seconds) for a closer look.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import pytest

TOP_FILES = 10


class Phase(NamedTuple):
    """One phase (setup, call, teardown) of one test, as the controller heard of it."""

    nodeid: str
    when: str
    worker: str
    start: float
    stop: float


_PHASES: list[Phase] = []
_CPU_AT_START: list[tuple[int, int]] = []


def cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) clock ticks of every core since boot; None where /proc/stat is not."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return sum(fields) - idle, sum(fields)


def busy_share(start: tuple[int, int], end: tuple[int, int]) -> float | None:
    """The share of the cores' time spent busy between two `cpu_ticks`; None if no time."""
    total = end[1] - start[1]
    return (end[0] - start[0]) / total if total > 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    ticks = cpu_ticks()
    if ticks is not None:
        _CPU_AT_START.append(ticks)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    node = getattr(report, "node", None)  # set by xdist on the controller: the worker
    worker = node.gateway.id if node is not None else "main"
    _PHASES.append(Phase(report.nodeid, report.when, worker, report.start, report.stop))


def by_file(phases: list[Phase]) -> list[tuple[float, str, int]]:
    """(seconds, file, tests) per test file, the largest first."""
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for phase in phases:
        path = phase.nodeid.split("::")[0]
        seconds[path] += phase.stop - phase.start
        tests[path].add(phase.nodeid)
    return sorted(((s, p, len(tests[p])) for p, s in seconds.items()), reverse=True)


def by_worker(phases: list[Phase]) -> list[tuple[str, float, float]]:
    """(worker, busy seconds, end since the first test started) per worker."""
    if not phases:
        return []
    first = min(p.start for p in phases)
    busy: dict[str, float] = defaultdict(float)
    end: dict[str, float] = defaultdict(float)
    for phase in phases:
        busy[phase.worker] += phase.stop - phase.start
        end[phase.worker] = max(end[phase.worker], phase.stop - first)
    return [(w, busy[w], end[w]) for w in sorted(busy)]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not _PHASES:  # an xdist worker: the controller prints
        return
    write = terminalreporter.write_line
    terminalreporter.section(f"test files taking the most time (top {TOP_FILES})")
    for seconds, path, count in by_file(_PHASES)[:TOP_FILES]:
        write(f"{seconds:8.1f}s  {path} ({count} tests)")
    write("workers: " + "; ".join(f"{w} busy {busy:.0f} s, done at {end:.0f} s"
                                  for w, busy, end in by_worker(_PHASES)))
    now = cpu_ticks()
    share = busy_share(_CPU_AT_START[0], now) if _CPU_AT_START and now else None
    write(f"the machine's {os.cpu_count()} cores were busy "
          + ("an unknown share" if share is None else f"{share:.0%}")
          + " of the time meanwhile (every process of the machine counts)")
    target = os.environ.get("TEST_TIMES_FILE")
    if target:
        Path(target).write_text("".join(json.dumps(p._asdict()) + "\n" for p in _PHASES))
        write(f"every test's phases: {target}")
