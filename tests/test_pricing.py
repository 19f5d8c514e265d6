"""pricing.py: an unknown price is unknown (None), never 0; sums say what they leave out."""

from __future__ import annotations

import pytest

from benchwright.llm.pricing import CostSum, Price, cost_of, format_cost, run_price


def test_a_model_without_a_price_has_no_cost_unless_nothing_was_spent() -> None:
    assert run_price("fake-unpriced", None, None) is None
    assert cost_of(None, 1000, 10) is None
    assert cost_of(None, 0, 0) == 0.0
    assert cost_of(Price(input=2.0, output=8.0), 1_000_000, 0) == pytest.approx(2.0)


def test_one_override_keeps_the_other_listed_price_and_never_invents_one() -> None:
    assert run_price("gpt-5", 2.0, None) == Price(input=2.0, output=10.0)
    assert run_price("my-model", 2.0, None) is None  # its output price is not known
    assert run_price("my-model", 2.0, 0.0) == Price(input=2.0, output=0.0)


@pytest.mark.parametrize(("costs", "text", "usd"), [
    ([1.2, 0.0], "$1.2000", 1.2),
    ([1.2, None], "$1.2000 + unknown", None),
    ([None, None], "unknown", None),
    ([0.0, None], "unknown", None),  # never "$0.0000 + unknown"
    ([], "$0.0000", 0.0),
])
def test_sums_with_unknown_parts(costs: list[float | None], text: str, usd: float | None) -> None:
    total = CostSum.of(costs)
    assert total.text() == text and total.usd == usd


def test_format_cost() -> None:
    assert format_cost(None) == "unknown"
    assert format_cost(0.5, dollar=False) == "0.5000"
    assert format_cost(0.5, True, digits=2) == "$0.50 + unknown"
