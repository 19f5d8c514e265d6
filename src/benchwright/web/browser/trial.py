"""One trial: a task, an agent, a browser; network.har and history.json in the trial folder.

```python
outcome = run_trial(TrialRequest(task=..., trial_dir=..., site_urls=..., agent=AgentSpec(...)),
                    browser=shared)            # shared: SharedBrowser | None (None: own Chromium)
```
Order: the browser is reset (one blank tab, no state), cookies are injected and live logins done,
then the recorder attaches (so logins stay out of the HAR), then browser-use connects its own
session and the agent runs. network.har exists from the recorder's start and is complete at
every moment; history.json is browser-use's own history format. The trial's browser files
(trial_dir/browser: downloads, agent files, browser-use config, and the profile when the trial
launched its own Chromium) are removed unless `keep_browser_files`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.errors import BenchwrightError, UserInputError
from benchwright.web.browser.answer_watch import WatchedModel
from benchwright.web.browser.auth import login_with_form
from benchwright.web.browser.cdp import CdpConnection
from benchwright.web.browser.cookies import inject_cookies
from benchwright.web.browser.har_writer import HarWriter
from benchwright.web.browser.imports import agent_construction, browser_use_module
from benchwright.web.browser.outcome import (
    step_errors,
    step_usage,
    token_counts,
    trial_status,
    visited_urls,
)
from benchwright.web.browser.prompts import uses_schema
from benchwright.web.browser.recorder import NetworkRecorder
from benchwright.web.browser.shared_browser import SharedBrowser
from benchwright.web.browser.trial_agent import (
    agent_options,
    build_model,
    cost_usd,
    price_table,
    task_prompt,
)
from benchwright.web.browser.trial_models import (
    AgentSpec,
    LiveLogin,
    TrialOutcome,
    TrialRequest,
    TrialStatus,
)
from benchwright.web.browser.web_agents import web_agent
from benchwright.web.evaluation.final_response import INVALID_RESPONSE, FinalResponse
from benchwright.web.evaluation.scoring import HISTORY, NETWORK_HAR

BROWSER_DIR = "browser"
_TEMPDIR_LOCK = threading.Lock()

__all__ = ["AgentSpec", "LiveLogin", "SharedBrowser", "TrialOutcome", "TrialRequest",
           "TrialStatus", "run_trial", "run_trial_async"]


@dataclass
class _Run:
    """What a trial gathers while it runs."""

    request: TrialRequest
    started: float = field(default_factory=time.perf_counter)
    model: WatchedModel | None = None
    agent: Any = None
    history: Any = None
    recorder: NetworkRecorder | None = None
    status: TrialStatus | None = None
    errors: list[str] = field(default_factory=list)
    own_s: float = 0.0
    """Seconds in benchwright's own set-up and wrap-up (see TrialOutcome.harness_s)."""

    @property
    def browser_dir(self) -> Path:
        return self.request.trial_dir / BROWSER_DIR


def run_trial(request: TrialRequest, browser: SharedBrowser | None = None) -> TrialOutcome:
    """Run one trial to its end (in a fresh event loop); see the module docstring."""
    return asyncio.run(run_trial_async(request, browser))


async def run_trial_async(request: TrialRequest,
                          browser: SharedBrowser | None = None) -> TrialOutcome:
    """`run_trial` for callers that have an event loop."""
    run = _Run(request)
    request.trial_dir.mkdir(parents=True, exist_ok=True)
    shared = browser or SharedBrowser(request.browser, workdir=run.browser_dir,
                                      site_urls=list(request.site_urls.values()))
    try:
        await _attempt(run, shared)
    finally:
        await _wrap_up(run, shared, own_browser=browser is None)
    return _outcome(run)


async def _attempt(run: _Run, shared: SharedBrowser) -> None:
    request = run.request
    os.environ["BROWSER_USE_CONFIG_DIR"] = str(run.browser_dir / "config")
    run.model = WatchedModel(build_model(request.agent, request.site_urls, request.task),
                             request.task.task_type)
    try:
        await asyncio.wait_for(_drive(run, shared), request.timeout_s)
    except TimeoutError:
        run.status = TrialStatus.TIMEOUT
        run.errors.append(f"the trial ran out of its {request.timeout_s:.0f} s")
    except UserInputError:
        raise
    except (BenchwrightError, OSError) as exc:  # the harness's (HAR writer, CDP, a module)
        run.status = TrialStatus.INFRA_ERROR
        run.errors.append(f"harness: {type(exc).__name__}: {exc}")
    except (RuntimeError, ValueError) as exc:  # browser-use broke with the browser
        run.status = TrialStatus.CRASHED
        run.errors.append(f"harness: {exc}")


async def _drive(run: _Run, shared: SharedBrowser) -> None:
    request = run.request
    if shared.site_urls == [] and request.site_urls:
        shared.site_urls = list(request.site_urls.values())
    started = time.perf_counter()
    await shared.reset()
    await _prepare_state(shared.running().ws_url, request)
    run.recorder = await NetworkRecorder.start(shared.running().ws_url,
                                               request.trial_dir / NETWORK_HAR, request.recorder,
                                               request.extra_headers)
    run.own_s += time.perf_counter() - started
    options = agent_options(request.agent, run.browser_dir / "agent")
    session = _browser_session(shared.running().http_url, run,
                               blind=options.get("use_vision") is False)
    try:
        run.agent = _agent(run, session, options)
        run.history = await run.agent.run(max_steps=request.max_steps)
    finally:
        await session.stop()


async def _prepare_state(ws_url: str, request: TrialRequest) -> None:
    connection = await CdpConnection.open(ws_url)
    try:
        await inject_cookies(connection, request.cookies)
        for login in request.live_logins:
            await login_with_form(connection, login)
    finally:
        await connection.close()


def _browser_session(cdp_url: str, run: _Run, blind: bool) -> Any:
    bu = browser_use_module()
    settings = run.request.browser
    profile = bu.BrowserProfile(
        cdp_url=cdp_url, enable_default_extensions=False,
        user_data_dir=str(run.browser_dir / "session-profile"),  # unused over CDP; not in /tmp
        downloads_path=str(run.browser_dir / "downloads"),
        wait_between_actions=settings.wait_between_actions)
    session_class = _blind_session_class() if blind else bu.BrowserSession
    return session_class(browser_profile=profile)


@functools.cache
def _blind_session_class() -> Any:
    """A browser-use session whose page states carry no screenshot. browser-use's Agent asks for
    one at every step even when its model never sees one (for its cloud sync, off here); the
    screenshot went to a folder the trial then deletes. Measured: ~1/3 of Chromium's CPU in
    12 scripted trials."""
    session_class = browser_use_module().BrowserSession

    class BlindSession(session_class):  # type: ignore[misc,valid-type]
        async def get_browser_state_summary(self, include_screenshot: bool = True,
                                            **options: Any) -> Any:
            return await super().get_browser_state_summary(False, **options)

    return BlindSession


def _agent(run: _Run, session: Any, options: dict[str, Any]) -> Any:
    request = run.request
    actions = web_agent(request.agent).initial_actions(request.task, request.site_urls)
    if actions:
        options["initial_actions"] = actions
    agent_class = browser_use_module().Agent
    # browser-use puts its agent folder (screenshots) under tempfile.gettempdir(); the
    # constructor runs without awaiting, so pointing that at the trial folder is contained.
    if uses_schema(request.agent.prompt):
        options["output_model_schema"] = FinalResponse
    prompt = task_prompt(request.task, request.site_urls, request.agent.prompt)
    with _TEMPDIR_LOCK, agent_construction():  # trials of a site may start side by side
        saved, tempfile.tempdir = tempfile.tempdir, str(run.browser_dir)
        try:
            return agent_class(task=prompt, llm=run.model, browser_session=session, **options)
        finally:
            tempfile.tempdir = saved


async def _wrap_up(run: _Run, shared: SharedBrowser, own_browser: bool) -> None:
    started = time.perf_counter()
    har = run.request.trial_dir / NETWORK_HAR
    if run.recorder is not None:
        await run.recorder.stop()
        shared.remember(run.recorder.origins)
    elif not har.exists():
        HarWriter(har).close()
    if run.history is None and run.agent is not None:
        run.history = run.agent.history
    if run.history is not None:
        run.history.save_to_file(run.request.trial_dir / HISTORY)
    if own_browser:
        shared.close()
    if not run.request.keep_browser_files:
        shutil.rmtree(run.browser_dir, ignore_errors=True)
    run.own_s += time.perf_counter() - started


def _outcome(run: _Run) -> TrialOutcome:
    request, history = run.request, run.history
    errors = list(run.errors)
    inner = run.model.inner if run.model is not None else None
    errors += getattr(inner, "failures", [])
    if history is None:
        return _empty_outcome(run, errors)
    errors = step_errors(history) + errors
    prompt, cached, completion = token_counts(history)
    prices = price_table(request.agent.pricing_file)
    cost = cost_usd(prices, request.agent.model, prompt, cached, completion)
    if cost is None and prompt + completion == 0:
        cost = 0.0  # nothing spent: no price needed
    answer = final_answer(run, history, errors)
    return TrialOutcome(
        status=run.status or answer.status or trial_status(history, request.max_steps, errors),
        final_text=answer.text, agent_success=answer.success,
        structured_response=answer.structured,
        steps=history.number_of_steps(), input_tokens=prompt, output_tokens=completion,
        cached_input_tokens=cached,
        cost_usd=cost, duration_s=time.perf_counter() - run.started,
        model_time_s=run.model.seconds if run.model else 0.0, harness_s=run.own_s,
        errors=errors, har_entries=len(run.recorder.writer) if run.recorder else 0,
        refused_requests=run.recorder.refused if run.recorder else [],
        urls=visited_urls(history), step_usage=step_usage(
            history, run.model.calls if run.model else [],
            lambda p, c, o: cost_usd(prices, request.agent.model, p, c, o)))


@dataclass
class _Answer:
    """The trial's final answer, from whichever path gave it."""

    text: str | None
    success: bool | None
    structured: dict[str, Any] | None = None
    status: TrialStatus | None = None
    """Overrides the status read from the history (an invalid final response)."""


def final_answer(run: _Run, history: Any, errors: list[str]) -> _Answer:
    """The validated final response, or a free-text answer for the adapter; an agent that
    finished without a valid response is an agent error naming what was wrong."""
    model = run.model
    if model is not None and model.prose is not None:
        return _Answer(text=model.prose.text, success=model.prose.success)
    answer = _Answer(text=history.final_result(), success=history.is_successful())
    if not uses_schema(run.request.agent.prompt):
        return answer
    if history.is_done() and answer.text:
        try:
            answer.structured = FinalResponse.model_validate_json(answer.text).model_dump(
                mode="json")
            return answer
        except ValueError as exc:
            errors.append(f"{INVALID_RESPONSE}: {exc}")
    invalid = model.invalid if model is not None else []
    if invalid:
        errors.extend(dict.fromkeys(invalid))
        answer.status = TrialStatus.AGENT_ERROR
    return answer


def _empty_outcome(run: _Run, errors: list[str]) -> TrialOutcome:
    return TrialOutcome(
        status=run.status or TrialStatus.CRASHED, final_text=None, agent_success=None, steps=0,
        input_tokens=0, output_tokens=0, cost_usd=0.0,
        duration_s=time.perf_counter() - run.started, model_time_s=0.0, harness_s=run.own_s,
        errors=errors,
        har_entries=len(run.recorder.writer) if run.recorder else 0, urls=[])
