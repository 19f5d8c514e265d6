"""Browser trials in a child process of their own: how read-only trials of a site run side by
side (`--concurrency-per-site N` > 1).

browser-use serializes the events of every browser session of a process behind one global lock
(its event bus library, bubus, holds a process-wide lock while any handler runs, including a
click's fixed wait for a download), so two agents in one process take turns at every action. A
`ProcessTrialRunner` therefore keeps one child process (with its own Chromium, kept across its
trials as `BrowserTrialRunner` keeps one) and sends it one trial at a time:
requests as JSON lines on the child's stdin, outcomes as JSON lines on a pipe of their own (the
child's stdout and stderr are browser-use's logs, passed through). The child dies with its parent
(PR_SET_PDEATHSIG) and ends when its stdin closes.

    python -m benchwright.web.trials.trial_process RESULT_FD
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import IO

from benchwright.web.trials.models import TrialOutcome, TrialRequest

CLOSE_TIMEOUT_S = 30.0


class ProcessTrialRunner:
    """`TrialRunner` that runs each trial in its long-lived child process."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[str] | None = None
        self._results: IO[str] | None = None

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        """Send the request to the child and wait for its outcome."""
        child, results = self._running()
        assert child.stdin is not None
        child.stdin.write(request.model_dump_json() + "\n")
        child.stdin.flush()
        line = results.readline()
        if not line:
            code = child.wait()
            self._child = None
            raise RuntimeError(f"the trial process died (exit code {code})")
        return TrialOutcome.model_validate_json(line)

    def _running(self) -> tuple[subprocess.Popen[str], IO[str]]:
        if self._child is None or self._child.poll() is not None or self._results is None:
            self.close()
            self._child, self._results = _start_child()
        return self._child, self._results

    def close(self) -> None:
        """End the child: its input closes, it closes its browser and exits."""
        child, self._child = self._child, None
        if child is not None:
            if child.stdin is not None:
                child.stdin.close()
            try:
                child.wait(timeout=CLOSE_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        if self._results is not None:
            self._results.close()
            self._results = None


def _start_child() -> tuple[subprocess.Popen[str], IO[str]]:
    from benchwright.web.browser.launch import _die_with_parent

    read_fd, write_fd = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "benchwright.web.trials.trial_process", str(write_fd)],
            stdin=subprocess.PIPE, stdout=sys.stderr.fileno(), text=True, pass_fds=(write_fd,),
            preexec_fn=_die_with_parent)
    finally:
        os.close(write_fd)
    return child, os.fdopen(read_fd, "r", encoding="utf-8")


def serve(result_fd: int) -> None:
    """The child: one trial per request line, until stdin closes."""
    from benchwright.web.trials.browser_runner import BrowserTrialRunner
    from benchwright.web.trials.trial import attempt

    # Ctrl-C reaches the whole process group; the parent decides (it lets running trials finish)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    runner = BrowserTrialRunner()
    with os.fdopen(result_fd, "w", encoding="utf-8") as results:
        try:
            for line in sys.stdin:
                outcome = attempt(runner, TrialRequest.model_validate_json(line))
                results.write(outcome.model_dump_json() + "\n")
                results.flush()
        finally:
            runner.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
