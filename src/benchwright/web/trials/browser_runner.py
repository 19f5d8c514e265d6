"""The real trial runner: `benchwright.web.browser.trial.run_trial` with one shared Chromium per
site worker (the browser track), run on the process's one trial loop (see trial_loop.py).
Imported only when a run uses it."""

from __future__ import annotations

import importlib
from typing import Any

from benchwright.web.browser.imports import missing_web
from benchwright.web.trials.models import TrialOutcome, TrialRequest
from benchwright.web.trials.trial_loop import run_on_trial_loop


def _trial_module() -> Any:
    try:
        return importlib.import_module("benchwright.web.browser.trial")
    except ImportError as exc:
        raise missing_web(f"the browser trial runner is not available ({exc})") from None


class BrowserTrialRunner:
    """`TrialRunner` driving browser-use in Chromium; the browser is kept across trials."""

    def __init__(self) -> None:
        self._trial = _trial_module()
        self._browser: Any = None

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        """One browser trial; the request and outcome are the browser track's own models."""
        if self._browser is None:
            self._browser = self._trial.SharedBrowser()
        self._browser.running()  # launched from this thread, as before (it dies with it)
        outcome: TrialOutcome = run_on_trial_loop(
            self._trial.run_trial_async(request, browser=self._browser))
        return outcome

    def close(self) -> None:
        """Close the shared browser."""
        if self._browser is not None:
            self._browser.close()
        self._browser = None

