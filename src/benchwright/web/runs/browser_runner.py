"""The real trial runner: `benchwright.web.browser.trial.run_trial` with one shared Chromium per
site worker (the browser track). Imported only when a run uses it."""

from __future__ import annotations

import importlib
from typing import Any

from benchwright.errors import PrerequisiteError
from benchwright.web.runs.models import TrialOutcome, TrialRequest, TrialStatus


def _trial_module() -> Any:
    try:
        return importlib.import_module("benchwright.web.browser.trial")
    except ImportError as exc:
        raise PrerequisiteError(f"the browser trial runner is not available ({exc})",
                                hint="pip install 'benchwright[web]'") from None


class BrowserTrialRunner:
    """`TrialRunner` driving browser-use in Chromium; the browser is kept across trials."""

    def __init__(self) -> None:
        self._trial = _trial_module()
        self._browser: Any = None

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        """One browser trial, through the browser track's request and outcome models."""
        if self._browser is None and hasattr(self._trial, "SharedBrowser"):
            self._browser = self._trial.SharedBrowser()
        native = self._trial.TrialRequest.model_validate(request.model_dump())
        outcome = self._trial.run_trial(native, browser=self._browser)
        return as_outcome(outcome.model_dump(mode="json"))

    def close(self) -> None:
        """Close the shared browser."""
        if self._browser is not None and hasattr(self._browser, "close"):
            self._browser.close()
        self._browser = None


def as_outcome(data: dict[str, Any]) -> TrialOutcome:
    """The browser track's outcome in our terms; a status we do not know is an agent error."""
    if data.get("status") not in {s.value for s in TrialStatus}:
        data = {**data, "status": TrialStatus.AGENT_ERROR,
                "errors": [*data.get("errors", []), f"trial status {data.get('status')!r}"]}
    return TrialOutcome.model_validate(data)
