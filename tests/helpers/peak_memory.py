"""A process's own peak resident memory, measured so that nothing else's counts.

`getrusage(RUSAGE_SELF).ru_maxrss` is the wrong figure for this: Linux carries it across
`execve` from the address space being replaced, and a child that Python starts with vfork replaces
its parent's. A harness started from a pytest worker that had grown to 540 MB then reports 540 MB
whatever it used itself (CI saw exactly that). `VmHWM` belongs to the address space alone, and
writing 5 to `clear_refs` resets it, so a test can also measure what one call grew by.
"""

from __future__ import annotations

import inspect
from pathlib import Path


def peak_rss_mb() -> float:
    """This process's peak resident memory since it started (or since `reset_peak`), in MiB."""
    # self-contained (no Path): PROBE_SOURCE is this function, run in a bare interpreter
    with open("/proc/self/status") as status:  # noqa: PTH123
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


PROBE_SOURCE = inspect.getsource(peak_rss_mb)
"""peak_rss_mb as source, for a probe that runs in a fresh interpreter (see output_flood)."""


def reset_peak() -> float:
    """Start the peak afresh from what is resident now; returns that, in MiB."""
    Path("/proc/self/clear_refs").write_text("5")
    return peak_rss_mb()
