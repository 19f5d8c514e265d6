"""The price rule every agent applies: the table, with a run's overrides each in its own place."""

from __future__ import annotations

import pytest

from benchwright.llm.pricing import Price, price_of, run_price

LISTED = "openai/gpt-4.1"  # 2.0 in, 8.0 out


def test_no_override_is_the_table() -> None:
    assert run_price(LISTED, None, None) == price_of(LISTED) == Price(input=2.0, output=8.0)
    assert run_price("fake", None, None) is None
    assert run_price(None, None, None) is None


@pytest.mark.parametrize(("given", "expected"), [
    ((5.0, None), Price(input=5.0, output=8.0)),
    ((None, 20.0), Price(input=2.0, output=20.0)),
    ((5.0, 20.0), Price(input=5.0, output=20.0)),
    ((0.0, None), Price(input=0.0, output=8.0)),
])
def test_an_override_replaces_only_its_own_price(given: tuple[float | None, float | None],
                                                 expected: Price) -> None:
    assert run_price(LISTED, *given) == expected


@pytest.mark.parametrize("given", [(5.0, None), (None, 20.0)])
def test_an_unlisted_model_with_one_price_given_has_no_price(
        given: tuple[float | None, float | None]) -> None:
    # the price not given is unknown, never a made-up 0 (issue 27.1)
    assert run_price("my-local-model", *given) is None
