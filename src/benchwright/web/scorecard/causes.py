"""The cause of every web attempt that did not pass (`report_parts/failure_causes.py`'s closed set),
by deterministic rules from its evaluator verdict and the trial's metrics.json, the most telling
first: an evaluator or infrastructure error -> environment error; a request the harness refused
(a host none of the sites': the browser resolves only theirs; a page not http(s): its policy
refuses those) -> refused action; the trial's
time ran out ->
timeout; the step limit (or a cost limit the agent named) -> step or cost limit; no final answer
(none written, or an invalid one) -> no answer; an agent error naming an exception -> crash
(with its type); another agent error -> agent error; else (an answer the evaluator did not
accept) wrong output.
"""

from __future__ import annotations

from benchwright.report_parts.failure_causes import (
    CauseTable,
    FailedUnit,
    FailureCause,
    cause_table,
    exception_type,
)
from benchwright.web.evaluation.outcomes import Cause
from benchwright.web.evaluation.scoring import TaskRow, WebEvalSummary

_NO_RESPONSE = ("(missing)", "(none)", "(unparseable)")
_NO_ANSWER_WORDS = ("invalid final response", "without an answer", "no final response")
Found = tuple[FailureCause, str | None, str | None]


def summary_failures(summary: WebEvalSummary) -> list[FailedUnit]:
    """Every attempt scored below 1, with its cause."""
    return [attempt_failure(row) for row in sorted(summary.tasks,
                                                  key=lambda r: (r.task_id, r.trial))
            if row.cause is not Cause.PASSED]


def summary_causes(summary: WebEvalSummary,
                   baseline: WebEvalSummary | None = None) -> CauseTable:
    """The attempts' failures by cause, against the baseline's when given."""
    before = summary_failures(baseline) if baseline is not None else None
    return cause_table(summary_failures(summary), before)


def attempt_failure(row: TaskRow) -> FailedUnit:
    """One failed attempt's cause."""
    cause, detail, exc = _cause(row)
    text = " ".join(detail.split()) if detail else None
    return FailedUnit(unit=f"task {row.task_id} trial {row.trial}", cause=cause,
                      detail=text[:200] if text else None, exception=exc)


def _cause(row: TaskRow) -> Found:
    agent_error = row.metrics.agent_error if row.metrics else None
    status = row.metrics.trial_status if row.metrics else None
    if row.cause in (Cause.EVALUATOR_ERROR, Cause.INFRASTRUCTURE):
        return FailureCause.ENVIRONMENT, row.error_msg or agent_error or str(row.cause), None
    refused = row.metrics.refused_requests if row.metrics else []
    if refused:
        return FailureCause.REFUSED, (f"the harness refused {len(refused)} request(s) off the "
                                      f"sites, first {refused[0]}"), None
    if status == "timeout":
        return FailureCause.TIMEOUT, agent_error or "the trial's wall-clock limit ran out", None
    if row.cause is Cause.STEP_LIMIT or "cost limit" in (agent_error or "").lower():
        return FailureCause.LIMIT, agent_error or "the agent used every step", None
    if row.agent_status in _NO_RESPONSE or any(
            w in (agent_error or "").lower() for w in _NO_ANSWER_WORDS):
        return FailureCause.NO_ANSWER, agent_error or f"agent response {row.agent_status}", None
    exc = exception_type(agent_error)
    if exc is not None:
        return FailureCause.CRASH, agent_error, exc
    if row.cause is Cause.AGENT_ERROR:
        return FailureCause.AGENT_ERROR, agent_error or f"agent status {row.agent_status}", None
    return FailureCause.WRONG_OUTPUT, _mismatch(row), None


def _mismatch(row: TaskRow) -> str | None:
    for m in row.mismatches:
        return f"{m.field or m.evaluator}: expected {m.expected}, got {m.got}"
    return row.error_msg
