"""The closed set of trial outcomes every page, report and frame shows: one cause per attempt.

An attempt the evaluator scored 1 passed, whatever the trial's own status said (an agent that
correctly answered NOT_FOUND_ERROR passed); otherwise the cause is the first that holds of an
evaluator error, how the trial ended (step limit, the infrastructure, the agent's own error) and,
for an agent that finished with an answer, a wrong answer.
"""

from __future__ import annotations

from enum import StrEnum


class Cause(StrEnum):
    """Why an attempt scored what it did."""

    PASSED = "passed"
    """The evaluator scored it 1."""
    WRONG_ANSWER = "wrong answer"
    """The agent finished with an answer (or actions) the evaluator did not accept."""
    STEP_LIMIT = "step limit"
    """The agent used every step it was allowed without finishing."""
    AGENT_ERROR = "agent error"
    """The agent broke off: failed steps, an invalid final response, its time ran out."""
    EVALUATOR_ERROR = "evaluator error"
    """The evaluator could not score the attempt."""
    INFRASTRUCTURE = "infrastructure"
    """Not the agent's doing: the model endpoint, the browser, the harness, missing files."""


CAUSES: list[Cause] = list(Cause)
"""Every cause, in the order pages and reports list them."""
_BY_TRIAL_STATUS: dict[str, Cause] = {
    "step_limit": Cause.STEP_LIMIT, "failed": Cause.AGENT_ERROR, "timeout": Cause.AGENT_ERROR,
    "agent_error": Cause.AGENT_ERROR, "model_error": Cause.INFRASTRUCTURE,
    "crashed": Cause.INFRASTRUCTURE, "infra_error": Cause.INFRASTRUCTURE}


def cause_of(score: float, error_origin: str | None, trial_status: str | None,
             agent_status: str | None) -> Cause:
    """The attempt's cause, from the evaluator's score and error origin, the trial's status
    (None: logs not written by benchwright) and the status the agent reported."""
    if score >= 1.0:
        return Cause.PASSED
    if error_origin == "evaluator":
        return Cause.EVALUATOR_ERROR
    if trial_status in _BY_TRIAL_STATUS:
        return _BY_TRIAL_STATUS[trial_status]
    if error_origin == "layout":
        return Cause.INFRASTRUCTURE
    if trial_status is None and agent_status == "UNKNOWN_ERROR":
        return Cause.AGENT_ERROR
    return Cause.WRONG_ANSWER


def cause_counts(causes: list[Cause]) -> dict[str, int]:
    """How many attempts had each cause, every cause listed (in CAUSES order)."""
    return {str(c): sum(x is c for x in causes) for c in CAUSES}
