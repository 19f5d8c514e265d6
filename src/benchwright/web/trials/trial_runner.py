"""The interface a web trial runner implements (`browser`, `fake`; see `benchwright.registry`)."""

from __future__ import annotations

from typing import Protocol

from benchwright.web.browser.trial_models import TrialOutcome, TrialRequest


class TrialRunner(Protocol):
    """Runs web trials one at a time (one runner per site worker, so it may keep a browser)."""

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        """Attempt `request.task`; write network.har and history.json into `request.trial_dir`."""
        ...

    def close(self) -> None:
        """Release what the runner holds (a shared browser)."""
        ...
