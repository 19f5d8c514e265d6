"""Issue 36 in a real browser: a checkpoint whose grading fired a rule (grading.json's
`rules_fired`) says so on its page, beside where tampering is shown; a rule's text stays text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradingRule, RuleFired
from tests.helpers.coding_runs import write_run
from tests.helpers.view_runs import TITLE, XSS, Page, rid, serving, settled

pytestmark = pytest.mark.browser
NOT_RUN = RuleFired(rule=GradingRule.NOT_RUN,
                    detail="1 of the checkpoint's tests did not run (deselected or missing)",
                    items=[".evaluation_tests/test_checkpoint_2.py::test_x", XSS])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = write_run(tmp_path_factory.mktemp("rules") / "runs" / "fired", {"a": ["SF"]})
    grading = run / "a" / "trial_1" / "checkpoint_2" / "grading.json"
    evaluation = CheckpointEvaluation.model_validate_json(grading.read_text())
    grading.write_text(evaluation.model_copy(update={"rules_fired": [NOT_RUN]})
                       .model_dump_json())
    return run


@pytest.fixture(scope="module")
def viewer(run: Path) -> Iterator[str]:
    with serving(run.parent) as url:
        yield url


def test_a_fired_rule_is_shown_on_the_checkpoints_page(page: Page, viewer: str,
                                                       run: Path) -> None:
    tab = settled(page, f"{viewer}#/run/{rid(run)}/cp/a/1/checkpoint_2")
    shown = tab.inner_text("main .error .rule-fired")
    assert shown == (f"Rule not_run: {NOT_RUN.detail} "
                     f"(.evaluation_tests/test_checkpoint_2.py::test_x, {XSS})")
    assert tab.title() == TITLE
    assert tab.evaluate("[...document.scripts].every(s => !s.text.includes('pwned'))")
    assert page.errors == []


def test_a_checkpoint_without_a_rule_shows_none(page: Page, viewer: str, run: Path) -> None:
    tab = settled(page, f"{viewer}#/run/{rid(run)}/cp/a/1/checkpoint_1")
    assert tab.query_selector("main .rule-fired") is None
    assert page.errors == []
