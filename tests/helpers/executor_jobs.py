"""A job for the executor's event test: module level, so spawned workers can import it."""

from __future__ import annotations

from benchwright.executors.local import emit

EVENTS_PER_JOB = 2000


def emit_many(job: int) -> int:
    """Report many events, the last ones right before returning."""
    for _ in range(EVENTS_PER_JOB):
        emit(job)
    return job
