"""Issue 37 in a real browser: a test the problem set's grading leaves out of the counts (SCBench
v1.0: skipped) is shown apart on its checkpoint's page, neither failing nor passing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.coding_runs import write_run
from tests.helpers.view_runs import Page, rid, serving, settled

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = write_run(tmp_path_factory.mktemp("left-out") / "runs" / "skips", {"a": ["SF"]})
    grading = run / "a" / "trial_1" / "checkpoint_2" / "grading.json"
    data = json.loads(grading.read_text())
    data["tests"][0].update(outcome="skipped", counted=False, message="Skipped: no server here")
    grading.write_text(json.dumps(data))
    return run


@pytest.fixture(scope="module")
def viewer(run: Path) -> Iterator[str]:
    with serving(run.parent) as url:
        yield url


def test_a_left_out_test_is_neither_failing_nor_passing(page: Page, viewer: str,
                                                        run: Path) -> None:
    grading = json.loads((run / "a" / "trial_1" / "checkpoint_2" / "grading.json").read_text())
    tests = grading["tests"]
    failing = sum(t["outcome"] not in ("passed", "xpassed") and t["counted"] for t in tests)
    tab = settled(page, f"{viewer}#/run/{rid(run)}/cp/a/1/checkpoint_2")
    summary = tab.inner_text("main .tests-summary")
    assert summary == (f"{failing} of {len(tests) - 1} tests did not pass (failing first). "
                       "1 more left out of the counts.")
    elsewhere = tab.evaluate("[...document.querySelectorAll('#tests details.test')]"
                             ".filter(e => !e.closest('details.left-out'))"
                             ".map(e => e.querySelector('summary').textContent)")
    assert len(elsewhere) == len(tests) - 1
    assert not any("test_case_0" in s for s in elsewhere)
    left_out = tab.evaluate("document.querySelector('#tests details.left-out').textContent")
    assert "1 test(s) left out of the counts" in left_out and "test_case_0" in left_out
    assert page.errors == []


def test_a_checkpoint_without_left_out_tests_says_nothing_of_them(page: Page, viewer: str,
                                                                  run: Path) -> None:
    tab = settled(page, f"{viewer}#/run/{rid(run)}/cp/a/1/checkpoint_1")
    assert "left out" not in tab.inner_text("main .tests-summary")
    assert tab.query_selector("#tests details.left-out") is None
    assert page.errors == []
