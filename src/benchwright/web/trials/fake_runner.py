"""A trial runner without a browser, for tests of the run machinery (and `bench/`).

It answers what the task expects (an error status for unachievable tasks), writes a HAR with the
navigation to the task's start URL plus the requests the task's network checks look for (where
`benchwright.web.evaluation.synthetic` can build them), and a one-step history. The HAR is written
in two steps, so a kill can catch a trial half-written. `BENCHWRIGHT_FAKE_TRIAL_DELAY_S` makes each
trial take that long (between the two steps).
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_json_atomic
from benchwright.web.evaluation.scoring import HISTORY, NETWORK_HAR
from benchwright.web.evaluation.synthetic import har, right_network, start_entry
from benchwright.web.evaluation.tasks import TaskType, WebTask
from benchwright.web.sites.config import Site, SiteConfig, WebEnvConfig
from benchwright.web.trials.models import TrialOutcome, TrialRequest, TrialStatus

DELAY_ENV = "BENCHWRIGHT_FAKE_TRIAL_DELAY_S"


MAX_DELAY_S = 3600.0


def delay_s() -> float:
    """$BENCHWRIGHT_FAKE_TRIAL_DELAY_S as seconds: a finite number from 0 to an hour, checked
    before a run starts (web node checks) as an option would be."""
    raw = os.environ.get(DELAY_ENV) or "0"
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= MAX_DELAY_S):
        raise UserInputError(f"{DELAY_ENV}={raw!r}: give seconds from 0 to {MAX_DELAY_S:g}",
                             hint=f"or unset {DELAY_ENV}")
    return value


class FakeTrialRunner:
    """`TrialRunner` that fakes a correct agent."""

    def __init__(self) -> None:
        self.delay_s = delay_s()
        self.requests: list[TrialRequest] = []

    def run_trial(self, request: TrialRequest) -> TrialOutcome:
        """Write the trial's files and report a correct answer."""
        started = time.monotonic()
        self.requests.append(request)
        config = _config(request.site_urls)
        entries = _entries(request.task, config)
        har_path = request.trial_dir / NETWORK_HAR
        har_path.write_text(json.dumps(har(entries[:1])), encoding="utf-8")
        time.sleep(self.delay_s)
        har_path.write_text(json.dumps(har(entries)), encoding="utf-8")
        text, success = answer(request.task)
        write_json_atomic(request.trial_dir / HISTORY, {
            "steps": [{"done": text}], "cookies": [cookie["name"] for cookie in request.cookies]})
        return TrialOutcome(status=TrialStatus.COMPLETED, final_text=text, agent_success=success,
                            steps=len(entries), input_tokens=100, output_tokens=10,
                            duration_s=time.monotonic() - started)

    def close(self) -> None:
        """Nothing to release."""


def answer(task: WebTask) -> tuple[str, bool]:
    """The final text a correct agent gives, and its success flag."""
    expected = task.expected_response
    if task.expected_status != "SUCCESS":
        return f"{task.expected_status}: the task cannot be done", False
    if task.task_type is TaskType.RETRIEVE:
        return json.dumps(_first_alternatives(expected.get("retrieved_data") or [])), True
    return "Done.", True


def _first_alternatives(data: list[Any]) -> list[Any]:
    """Expected items may list alternatives (a nested list); a real answer picks one."""
    return [item[0] if isinstance(item, list) and item else item for item in data]


def _config(site_urls: dict[str, str]) -> WebEnvConfig:
    sites = {site: SiteConfig(urls=[url]) for name, url in site_urls.items()
             if (site := Site.parse(name)) is not None}
    return WebEnvConfig(sites=sites)


def _entries(task: WebTask, config: WebEnvConfig) -> list[dict[str, Any]]:
    return right_network(task, config) or [start_entry(task, config)]
