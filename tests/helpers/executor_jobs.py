"""A job for the executor's event test: module level, so spawned workers can import it."""

from __future__ import annotations

from benchwright.executors.local import emit

EVENTS_PER_JOB = 2000


def emit_many(job: int) -> int:
    """Report many events, the last ones right before returning."""
    for _ in range(EVENTS_PER_JOB):
        emit(job)
    return job


def die_on_one(job: int) -> int:
    """Job 1 kills its own worker with SIGKILL once it has started; the others take a while."""
    import os
    import signal
    import time

    time.sleep(0.5)
    if job == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(1.0)
    return job
