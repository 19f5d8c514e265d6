"""Per-step model usage (TrialOutcome.step_usage, the ATIF step metrics): each model call is
counted in the step whose time window holds its answer; a call without usage makes that step's
tokens and cost unknown; an unpriced model's cost stays unknown; steps without timing are left
out."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from benchwright.web.browser.outcome import step_usage


def _history(*windows: tuple[float, float] | None) -> Any:
    items = [SimpleNamespace(metadata=None if w is None else SimpleNamespace(
        step_start_time=w[0], step_end_time=w[1])) for w in windows]
    return SimpleNamespace(history=items)


def _usage(prompt: int, cached: int | None, completion: int) -> Any:
    return SimpleNamespace(prompt_tokens=prompt, prompt_cached_tokens=cached,
                           completion_tokens=completion)


def test_calls_are_counted_in_the_step_they_answered() -> None:
    history = _history((0.0, 1.0), (1.0, 2.0), None, (3.0, 4.0), (4.0, 5.0))
    calls = [(0.5, _usage(100, None, 10)), (1.2, _usage(200, 50, 20)),
             (1.9, _usage(10, 0, 1)), (3.5, None), (3.6, _usage(5, 0, 1)), (9.0, _usage(1, 0, 1))]
    priced = step_usage(history, calls, lambda p, c, o: (p - c) * 0.001 + c * 0.0005 + o * 0.002)
    assert [u.step for u in priced] == [1, 2, 4, 5]  # step 3 has no timing
    first, second, fourth, fifth = priced
    assert (first.calls, first.input_tokens, first.cached_input_tokens,
            first.output_tokens) == (1, 100, 0, 10)
    assert (second.calls, second.input_tokens, second.cached_input_tokens,
            second.output_tokens) == (2, 210, 50, 21)
    assert second.cost_usd == (160 * 0.001 + 50 * 0.0005 + 21 * 0.002)
    assert (fourth.calls, fourth.input_tokens, fourth.cost_usd) == (2, None, None)
    assert (fifth.calls, fifth.input_tokens, fifth.cost_usd) == (0, None, None)


def test_an_unpriced_model_keeps_tokens_and_an_unknown_cost() -> None:
    [only] = step_usage(_history((0.0, 1.0)), [(0.5, _usage(7, 0, 3))], lambda p, c, o: None)
    assert (only.input_tokens, only.output_tokens, only.cost_usd) == (7, 3, None)


def test_a_failed_model_call_is_a_call_with_unknown_usage() -> None:
    import asyncio

    from benchwright.web.browser.trial_agent import TimedModel

    class Inner:
        model = provider = name = "m"

        def __init__(self) -> None:
            self.fail = False

        async def ainvoke(self, messages: Any, output_format: Any = None, **_: Any) -> Any:
            if self.fail:
                raise RuntimeError("503 from the provider")
            return SimpleNamespace(usage=_usage(9, 0, 2))

    inner = Inner()
    timed = TimedModel(inner)
    asyncio.run(timed.ainvoke([]))
    inner.fail = True
    with pytest.raises(RuntimeError):
        asyncio.run(timed.ainvoke([]))
    assert [u is None for _, u in timed.calls] == [False, True]
    start = timed.calls[0][0] - 1
    [step] = step_usage(_history((start, timed.calls[1][0] + 1)), timed.calls,
                        lambda p, c, o: 0.0)
    assert (step.calls, step.input_tokens, step.cost_usd) == (2, None, None)
