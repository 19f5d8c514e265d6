"""Reading a browser-use run: status, steps, tokens and every error, failed actions included.

`AgentHistoryList.errors()` keeps one error per step and misses actions that failed without an
`error` (a click on an index that is gone is reported only in the result's text), so the results'
texts are scanned as well. Model endpoint failures are told apart from the agent's own failures:
an agent that never got an answer from its model is not scored as having failed the task.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from benchwright.web.browser.trial_models import StepUsage, TrialStatus

Pricer = Callable[[int, int, int], float | None]
"""(prompt, cached, completion tokens) -> dollars, None when the model has no price."""

MISSED_FAILURES = re.compile(
    r"^(Element index \d+ not (available|found)|Text '.*' not found or not visible|"
    r"No element|Failed to )", re.IGNORECASE)
MODEL_FAILURES = re.compile(
    r"(ModelProviderError|ModelRateLimitError|RateLimit|APIConnectionError|APITimeoutError|"
    r"AuthenticationError|Connection error|status_code=(4\d\d|5\d\d)|LLM call timed out|"
    # the OpenAI client's own message for an HTTP error ("Error code: 500 - {...}")
    r"Error code: (4\d\d|5\d\d))",
    re.IGNORECASE)


def step_errors(history: Any) -> list[str]:
    """Every failure of every step, in order: errors and failed actions' messages."""
    found: list[str] = []
    for number, item in enumerate(history.history, start=1):
        for result in item.result:
            if result.error:
                found.append(f"step {number}: {result.error.strip()}")
            elif result.extracted_content and MISSED_FAILURES.search(result.extracted_content):
                found.append(f"step {number}: {result.extracted_content.strip()}")
    return found


def trial_status(history: Any, max_steps: int, errors: list[str]) -> TrialStatus:
    """How the run ended."""
    if history.is_done() and history.is_successful():
        return TrialStatus.COMPLETED
    if history.number_of_steps() >= max_steps:  # on its last step browser-use forces `done`
        return TrialStatus.STEP_LIMIT
    if history.is_done():  # an answer that the task cannot be done (NOT_FOUND_ERROR) is an answer
        return TrialStatus.AGENT_ERROR if errors or not history.final_result() \
            else TrialStatus.COMPLETED
    if errors and _model_failed(history):
        return TrialStatus.MODEL_ERROR
    return TrialStatus.FAILED


def _model_failed(history: Any) -> bool:
    """True when the last steps failed because the model endpoint did."""
    last = history.history[-1] if history.history else None
    if last is None:
        return False
    return any(r.error and MODEL_FAILURES.search(r.error) for r in last.result)


def token_counts(history: Any) -> tuple[int, int, int]:
    """(prompt, cached prompt, completion) tokens of the run."""
    usage = getattr(history, "usage", None)
    if usage is None:
        return 0, 0, 0
    return (int(usage.total_prompt_tokens), int(usage.total_prompt_cached_tokens),
            int(usage.total_completion_tokens))


def visited_urls(history: Any) -> list[str]:
    """The page URL at each step."""
    return [u for u in history.urls() if u]


def step_usage(history: Any, calls: list[tuple[float, Any]], price: Pricer) -> list[StepUsage]:
    """Each step's model calls: those answered between the step's start and end (browser-use
    times its steps in epoch seconds). A call that reported no usage makes the step's tokens and
    cost unknown; steps without timing are left out."""
    found = []
    for number, item in enumerate(history.history, start=1):
        meta = getattr(item, "metadata", None)
        if meta is None:
            continue
        usages = [u for ended, u in calls if meta.step_start_time <= ended <= meta.step_end_time]
        found.append(_summed(number, usages, price))
    return found


def _summed(number: int, usages: list[Any], price: Pricer) -> StepUsage:
    if not usages or any(u is None for u in usages):
        return StepUsage(step=number, calls=len(usages))
    prompt = sum(int(u.prompt_tokens) for u in usages)
    cached = sum(int(u.prompt_cached_tokens or 0) for u in usages)
    completion = sum(int(u.completion_tokens) for u in usages)
    return StepUsage(step=number, calls=len(usages), input_tokens=prompt,
                     cached_input_tokens=cached, output_tokens=completion,
                     cost_usd=price(prompt, cached, completion))
