"""Issue 41 in a real browser (the system's Chromium through Playwright): a coding run's page
and a web run's page show their failures by cause (every cause of the closed set, counts,
examples, a crash's exception type), and, once `eval --repeat` measured it, the grading noise
with the flaky tests beside the agent's spread. Hostile text in a test's message or name stays
text."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.report_parts.failure_causes import CAUSES
from benchwright.report_parts.grading_noise import measure, save_noise
from tests.helpers import run_cli
from tests.helpers.coding_runs import write_run
from tests.helpers.view_runs import TITLE, XSS, Page, cut_off, rid, serving, settled

pytestmark = pytest.mark.browser
FAKE = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("causes-view") / "runs"
    write_run(root / "coding_b", {"a": ["SS"], "b": ["F"]}, n_failing=1)
    run = write_run(root / "coding", {"a": ["SF"], "b": ["F"]}, n_failing=1)
    grading = run / "b" / "trial_1" / "checkpoint_1" / "grading.json"
    evaluation = CheckpointEvaluation.model_validate_json(grading.read_text())
    crashed = evaluation.tests[0].model_copy(update={"message": f"KeyError: {XSS}"})
    grading.write_text(evaluation.model_copy(update={"tests": [crashed, *evaluation.tests[1:]]})
                       .model_dump_json())
    save_noise(run, measure({"a/trial_1/checkpoint_1": [True, True, True],
                             "a/trial_1/checkpoint_2": [False, True, False]},
                            {"a/trial_1/checkpoint_2": {XSS: [False, True, False],
                                                        "test_steady": [True, True, True]}}, 2))
    done = run_cli("run", "web", "--suite", "local", "--task-ids", "9001,9002", "--out",
                   str(root / "web"), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    (root / "web" / "tasks" / "9001" / "trial_1" / "agent_response.json").write_text(json.dumps(
        {"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": [1.0],
         "error_details": None}))
    assert run_cli("eval", str(root / "web"), env=FAKE).returncode == 0  # the answer changed
    assert run_cli("eval", str(root / "web"), "--repeat", "2", env=FAKE).returncode == 0
    return root


@pytest.fixture(scope="module")
def viewer(root: Path) -> Iterator[str]:
    with serving(root) as url:
        yield url


def _rows(tab: object, table: str) -> list[list[str]]:
    rows: list[list[str]] = tab.evaluate(  # type: ignore[attr-defined]
        f"[...document.querySelectorAll('#{table} tbody tr')].map(r => "
        "[...r.cells].map(c => c.innerText.trim()))")
    return rows


def test_a_coding_run_shows_causes_and_the_grading_noise(page: Page, viewer: str,
                                                         root: Path) -> None:
    tab = settled(page, f"{viewer}#/run/{rid(root / 'coding')}")
    rows = _rows(tab, "causes")
    assert [r[0].split(" (")[0] for r in rows] == [str(c) for c in CAUSES]
    counts = {r[0]: r[1] for r in rows}
    assert counts["crash (KeyError x1)"] == "1"
    assert counts["wrong output"] == "1"
    crash = next(r for r in rows if r[0].startswith("crash"))
    assert "b/trial_1/checkpoint_1" in crash[2] and XSS in crash[2]  # shown as text
    assert tab.inner_text("#noise-box .card:first-child .v") == "23.6 points"  # 50%, 100%, 50%
    assert tab.inner_text("#noise-box .card:nth-child(2) .v") == "unknown"  # one trial
    assert _rows(tab, "flaky") == [[XSS, "a/trial_1/checkpoint_2", "fail pass fail"]]
    assert _rows(tab, "changed") == [["a/trial_1/checkpoint_2", "fail pass fail"]]
    assert tab.title() == TITLE
    assert cut_off(tab) == []
    assert page.errors == []


def test_head_to_head_shows_how_the_causes_moved(page: Page, viewer: str, root: Path) -> None:
    tab = settled(page, f"{viewer}#/cmp/{rid(root / 'coding')}/{rid(root / 'coding_b')}")
    rows = {r[0]: r[1:4] for r in _rows(tab, "causes")}
    assert rows["crash (KeyError x1)"] == ["1", "0", "+1"]  # B's b/checkpoint_1 kept its message
    assert rows["wrong output"] == ["1", "1", "0"]
    assert cut_off(tab) == []
    assert page.errors == []


def test_a_web_run_shows_causes_and_the_scorings_noise(page: Page, viewer: str,
                                                       root: Path) -> None:
    tab = settled(page, f"{viewer}#/run/{rid(root / 'web')}")
    counts = {r[0]: r[1] for r in _rows(tab, "causes")}
    assert counts["wrong output"] == "1"
    assert sum(int(v) for v in counts.values()) == 1
    assert "task 9001 trial 1" in tab.inner_text("#causes")
    assert tab.inner_text("#noise-box .card:nth-child(3) .v") == "0"  # no flaky evaluator
    assert page.errors == []
