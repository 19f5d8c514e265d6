"""The closed set of failure causes and the grading-noise figures, as values (the runs that
produce them: tests/coding/report/test_failure_causes_runs.py, tests/web/scorecard/
test_web_failure_causes.py, tests/coding/attempts/test_eval_repeat.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.report_parts.failure_causes import (
    CAUSES,
    FailedUnit,
    FailureCause,
    cause_lines,
    cause_table,
    exception_type,
)
from benchwright.report_parts.grading_noise import (
    NOISE_FILE,
    measure,
    noise_lines,
    read_noise,
    save_noise,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("AssertionError: Traceback (most recent call last):\n  File \"x\", line 1\n"
     "ValueError: boom", "ValueError"),
    ("E   json.decoder.JSONDecodeError: Expecting value", "JSONDecodeError"),
    ("AssertionError: assert '2' == '1'", None),
    ("Failed: Timeout (>3.0s) from pytest-timeout.", None),
    ("KeyError", "KeyError"),
    ("the agent gave up", None),
    (None, None),
])
def test_exception_type(text: str | None, expected: str | None) -> None:
    assert exception_type(text) == expected


def _unit(cause: FailureCause, n: int, exc: str | None = None) -> FailedUnit:
    return FailedUnit(unit=f"p/trial_1/checkpoint_{n}", cause=cause, exception=exc)


def test_every_cause_is_listed_with_counts_examples_and_the_baseline() -> None:
    units = [_unit(FailureCause.CRASH, i, "KeyError") for i in range(5)]
    units.append(_unit(FailureCause.WRONG_OUTPUT, 9))
    table = cause_table(units, [_unit(FailureCause.WRONG_OUTPUT, 1),
                                _unit(FailureCause.WRONG_OUTPUT, 2)])
    assert [r.cause for r in table.rows] == CAUSES
    crash = table.rows[CAUSES.index(FailureCause.CRASH)]
    assert (crash.count, crash.baseline, crash.exceptions) == (5, 0, {"KeyError": 5})
    assert len(crash.examples) == 3
    lines = cause_lines(table)
    assert "| crash (KeyError x5) | 5 | 0 | +5 | p/trial_1/checkpoint_0; " in "\n".join(lines)
    assert "| wrong output | 1 | 2 | -1 |" in "\n".join(lines)


def test_without_a_baseline_the_counts_are_not_made_up() -> None:
    table = cause_table([_unit(FailureCause.TIMEOUT, 1)])
    assert all(r.baseline is None for r in table.rows) and table.n_baseline_failed is None
    assert "| timeout | 1 | p/trial_1/checkpoint_1 |" in cause_lines(table)


def test_noise_names_flaky_tests_and_changed_verdicts(tmp_path: Path) -> None:
    noise = measure({"a": [True, False, True], "b": [True, True, True]},
                    {"a": {"test_flip": [True, False, True], "test_ok": [True, True, True]}}, 2)
    assert [c.unit for c in noise.changed] == ["a"]
    assert [(t.unit, t.test) for t in noise.flaky_tests] == [("a", "test_flip")]
    assert noise.rates == [1.0, 0.5, 1.0]
    assert noise.rate_std == pytest.approx(0.2357, abs=1e-4)
    text = "\n".join(noise_lines(noise, None, "checkpoint"))
    assert "| agent spread (std of the pass rate across trials) | unknown |" in text
    assert "- flaky: `test_flip` in a: pass fail pass" in text
    save_noise(tmp_path, noise)
    assert read_noise(tmp_path) == noise


def test_a_planted_noise_file_is_read_through_no_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    save_noise(tmp_path, measure({"a": [True]}, {}, 1))
    (tmp_path / NOISE_FILE).rename(elsewhere)
    (tmp_path / NOISE_FILE).symlink_to(elsewhere)
    assert read_noise(tmp_path) is None
    (tmp_path / NOISE_FILE).unlink()
    (tmp_path / NOISE_FILE).write_text("{not json")
    assert read_noise(tmp_path) is None
