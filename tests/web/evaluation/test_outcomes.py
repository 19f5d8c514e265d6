"""The closed set of web trial outcomes: one cause per attempt, the same in the report, the
viewer's data and the frames."""

from __future__ import annotations

import pytest

from benchwright.web.evaluation.mismatch import expectations
from benchwright.web.evaluation.outcomes import CAUSES, Cause, cause_counts, cause_of


@pytest.mark.parametrize(("score", "origin", "trial", "agent", "cause"), [
    (1.0, None, "agent_error", "NOT_FOUND_ERROR", Cause.PASSED),  # a right NOT_FOUND answer
    (1.0, None, None, "SUCCESS", Cause.PASSED),
    (0.0, None, "completed", "SUCCESS", Cause.WRONG_ANSWER),
    (0.0, None, "step_limit", "UNKNOWN_ERROR", Cause.STEP_LIMIT),  # not UNKNOWN_ERROR
    (0.0, None, "failed", "UNKNOWN_ERROR", Cause.AGENT_ERROR),
    (0.0, None, "agent_error", "SUCCESS", Cause.AGENT_ERROR),
    (0.0, None, "timeout", "UNKNOWN_ERROR", Cause.AGENT_ERROR),
    (0.0, "evaluator", "completed", "SUCCESS", Cause.EVALUATOR_ERROR),
    (0.0, None, "model_error", "UNKNOWN_ERROR", Cause.INFRASTRUCTURE),
    (0.0, None, "crashed", "(missing)", Cause.INFRASTRUCTURE),
    (0.0, "layout", None, "(missing)", Cause.INFRASTRUCTURE),
    (0.0, None, None, "UNKNOWN_ERROR", Cause.AGENT_ERROR),  # logs benchwright did not write
    (0.0, None, None, "SUCCESS", Cause.WRONG_ANSWER),
])
def test_each_attempt_has_one_cause(score: float, origin: str | None, trial: str | None,
                                    agent: str, cause: Cause) -> None:
    assert cause_of(score, origin, trial, agent) is cause


def test_the_set_is_closed_and_counted_in_order() -> None:
    assert [str(c) for c in CAUSES] == ["passed", "wrong answer", "step limit", "agent error",
                                        "evaluator error", "infrastructure"]
    assert cause_counts([Cause.STEP_LIMIT, Cause.PASSED, Cause.STEP_LIMIT]) == {
        "passed": 1, "wrong answer": 0, "step limit": 2, "agent error": 0,
        "evaluator error": 0, "infrastructure": 0}


def test_a_passing_evaluator_shows_its_expected_and_got() -> None:
    results = [{"evaluator_name": "AgentResponseEvaluator", "status": "success", "score": 1.0,
                "expected": {"status": "success", "retrieved_data": ["51.95"]},
                "actual_normalized": {"status": "success", "retrieved_data": ["51.95"]}},
               {"evaluator_name": "NetworkEventEvaluator", "status": "failure", "score": 0.0,
                "expected": {"url": "/a"}, "actual": {"url": "/b"}}]
    passing, failing = expectations(results)
    assert passing.passed and '"51.95"' in passing.expected and '"51.95"' in passing.got
    assert not failing.passed and (failing.field, failing.expected, failing.got) == (
        "url", '"/a"', '"/b"')
