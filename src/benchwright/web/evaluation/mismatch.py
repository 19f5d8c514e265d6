"""What the evaluator expected and what it got, read from its per-evaluator results, so a
report can say why a task failed without opening eval_result.json."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

MAX_VALUE = 200
"""Characters kept of one expected or got value."""
MAX_MISMATCHES = 5
"""Mismatches kept per attempt."""


class Mismatch(BaseModel):
    """One difference the evaluator found."""

    evaluator: str
    """The evaluator that failed (AgentResponseEvaluator, NetworkEventEvaluator, ...)."""
    field: str | None = None
    """The field that differs (retrieved_data, status, ...), when both sides are objects."""
    expected: str
    """The expected value, as compact JSON (shortened)."""
    got: str
    """What the evaluator got, normalised, as compact JSON (shortened)."""
    message: str | None = None
    """The evaluator's own assertion messages, shortened."""
    passed: bool = False
    """The evaluator accepted it (`expectations` lists those too: expected vs got on every
    trial, passing ones included)."""


def compact(value: Any, limit: int = MAX_VALUE) -> str:
    """A value as one line of JSON, at most `limit` characters, printable only."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mismatches(evaluators_results: list[dict[str, Any]]) -> list[Mismatch]:
    """The differences of every evaluator that did not succeed (at most MAX_MISMATCHES)."""
    found: list[Mismatch] = []
    for result in evaluators_results:
        if isinstance(result, dict) and result.get("status") != "success":
            found += _of(result)
    return found[:MAX_MISMATCHES]


def expectations(evaluators_results: list[dict[str, Any]]) -> list[Mismatch]:
    """Every evaluator's expected and got, passing ones too (a passing one whole, a failing
    one by differing field)."""
    found: list[Mismatch] = []
    for result in evaluators_results:
        if not isinstance(result, dict):
            continue
        if result.get("status") != "success":
            found += _of(result)
            continue
        got = result.get("actual_normalized", result.get("actual"))
        found.append(Mismatch(evaluator=str(result.get("evaluator_name") or "evaluator"),
                              expected=compact(result.get("expected")), got=compact(got),
                              passed=True))
    return found[:MAX_MISMATCHES * 2]


def _of(result: dict[str, Any]) -> list[Mismatch]:
    name = str(result.get("evaluator_name") or "evaluator")
    expected = result.get("expected")
    got = result.get("actual_normalized", result.get("actual"))
    message = _messages(result)
    if isinstance(expected, dict) and isinstance(got, dict):
        differing = [k for k in expected if expected[k] != got.get(k)]
        if differing:
            return [Mismatch(evaluator=name, field=str(k), expected=compact(expected[k]),
                             got=compact(got.get(k)), message=message) for k in differing]
    return [Mismatch(evaluator=name, expected=compact(expected), got=compact(got),
                     message=message)]


def _messages(result: dict[str, Any]) -> str | None:
    texts = [str(m) for a in result.get("assertions") or [] if isinstance(a, dict)
             and a.get("status") != "success" for m in a.get("assertion_msgs") or []]
    if result.get("error_msg"):
        texts.append(str(result["error_msg"]))
    return compact("; ".join(texts)).strip('"') if texts else None
