"""Runs of the `quick` problem (tests/fixtures/runs): an agent that only adds, and a run whose
agent sleeps until the test interrupts it, with the process tree it started."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.paths import FIXTURES
from tests.helpers.processes import ProcessTree, wait_for
from tests.helpers.tiers import starts

QUICK = FIXTURES / "runs"
ADD_ONLY = """cat > calc.py <<'PY'
import sys
print(int(sys.argv[2]) + int(sys.argv[3]) if sys.argv[1] == "add" else sys.exit(1))
PY
cat > seen_prompt.txt"""
SLEEP = ("sleep", f"120.{os.getpid()}")  # a command line no other test session runs


@dataclass
class SleepingRun:
    """`run coding` whose agents sleep, and every process it started (watched while it runs)."""

    proc: subprocess.Popen[str]
    tree: ProcessTree

    def agents(self) -> list[Any]:
        """The sleeping agents of this run that still run."""
        return self.tree.find(lambda argv: argv == SLEEP)


@starts("e2e")
@contextmanager
def sleeping_run(out: Path, **popen: Any) -> Iterator[SleepingRun]:
    """`run coding` whose agent is still working when the test interrupts it, however fast or
    slow this machine is (the block starts once an agent runs)."""
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", "run", "coding",
                             "--problems-dir", str(QUICK), "--trials", "2", "--workers", "2",
                             "--agent", "command", "--agent-command", " ".join(SLEEP),
                             "--out", str(out)], text=True, **popen)
    run = SleepingRun(proc, ProcessTree(proc.pid))
    try:
        with run.tree.watch():
            wait_for(lambda: bool(run.agents()) or proc.poll() is not None,
                     what="the agent to start")
            assert run.agents(), "the agent never started"
            yield run
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def assert_nothing_left(run: SleepingRun) -> None:
    """Every process the run started has ended (a wide limit: a loaded machine is slow)."""
    left = run.tree.wait_until_gone(timeout_s=120)
    assert left == [], "\n".join(f"{p.pid} {' '.join(p.argv)}" for p in left)
