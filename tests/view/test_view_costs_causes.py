"""Issue 27 in a real browser (the system's Chromium through Playwright, 1,400 px wide): an unknown
cost is "unknown" on every page (never $0.0000), a web trial's POST body is text, a failing web
run's chart is by cause, and the overview draws the cost-accuracy frontier with labelled points,
the same frontier `report --frontier --json` and `benchwright.frontier` give. Screenshots are kept
with BENCHWRIGHT_SCREENSHOTS=DIR."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli
from tests.helpers.coding_runs import write_run
from tests.helpers.view_runs import Page, copy_screenshot, rid, settled

pytestmark = pytest.mark.browser
FAKE = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}


def _unpriced(run: Path) -> Path:
    """The run's every checkpoint at an unknown cost (a model with no price)."""
    for journal in run.glob("*/trial_*/journal.jsonl"):
        lines = [json.loads(line) for line in journal.read_text().splitlines() if line]
        for line in lines:
            line["agent"]["usage"]["cost_usd"] = None
        journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("costs") / "runs"
    write_run(root / "strong", {"a": ["SSS"], "b": ["SSS"], "c": ["SSF"]}, model="strong")
    write_run(root / "weak", {"a": ["SF"], "b": ["F"], "c": ["SF"]}, model="weak")
    _unpriced(write_run(root / "unpriced", {"a": ["SSS"], "b": ["SF"], "c": ["SSS"]},
                        model="no-price"))
    done = run_cli("run", "web", "--suite", "local", "--task-ids", "9001,9003", "--out",
                   str(root / "web"), env=FAKE)
    assert done.returncode == 0, done.stderr[-3000:]
    trial = root / "web" / "tasks" / "9001" / "trial_1"  # as a browser-use run at its limit
    (trial / "agent_response.json").write_text(json.dumps(
        {"task_type": "RETRIEVE", "status": "UNKNOWN_ERROR", "retrieved_data": None,
         "error_details": None}))
    metrics = json.loads((trial / "metrics.json").read_text())
    (trial / "metrics.json").write_text(json.dumps({**metrics, "trial_status": "step_limit"}))
    assert run_cli("eval", str(root / "web"), env=FAKE).returncode == 0
    return root


@pytest.fixture(scope="module")
def viewer(root: Path) -> Iterator[str]:
    from benchwright.view.server import serve_in_thread, start

    server = start([root])
    stop = serve_in_thread(server)
    yield server.url
    stop()


def _shot(tab: Any, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    tab.screenshot(path=str(path), full_page=True)
    copy_screenshot(path, name)
    return path


def _fits(tab: Any) -> None:
    """Nothing is wider than the 1,400 px window (no page-wide horizontal scroll)."""
    assert tab.evaluate("document.documentElement.scrollWidth") <= 1400


def test_unknown_costs_and_the_frontier(page: Page, viewer: str, root: Path,
                                        tmp_path: Path) -> None:
    import benchwright

    tab = settled(page, viewer + "#/")
    tab.wait_for_selector(".frontier-names", timeout=60_000)
    tab.wait_for_selector("h3:has-text('Cost-accuracy frontier') ~ .grid2 .js-plotly-plot",
                          timeout=60_000)
    text = tab.inner_text("main")
    row = tab.inner_text("table tr:has(a:text-is('unpriced'))")
    assert "unknown" in row and "$0.0000" not in row
    assert "+ unknown" in tab.inner_text(".cards")  # the total over every run
    expected = benchwright.frontier([root])
    names = tab.inner_text(".frontier-names")
    assert f"Cost frontier: {' → '.join(expected.cost)}" in names
    assert expected.cost_left_off == ["mini · no-price"]
    assert "Left off the cost chart (cost unknown" in text and "mini · no-price" in text
    labels = tab.inner_text("h3:has-text('Cost-accuracy frontier') ~ .grid2")
    assert "mini · strong" in labels and "mini · weak" in labels  # points are labelled
    _fits(tab)
    _shot(tab, tmp_path, "overview-frontier.png")
    unpriced = settled(page, viewer + f"#/run/{rid(root / 'unpriced')}")
    assert "$0.0000" not in unpriced.inner_text("main")
    assert page.errors == []
    report = json.loads(run_cli("report", str(root / "strong"), "--json", "--frontier",
                                str(root)).stdout)
    assert report["frontier"] == json.loads(expected.model_dump_json())


def test_a_post_body_is_text_and_failures_are_by_cause(page: Page, viewer: str, root: Path,
                                                       tmp_path: Path) -> None:
    web = rid(root / "web")
    tab = settled(page, viewer + f"#/run/{web}")
    tab.wait_for_selector("text=Outcome by cause", timeout=60_000)
    assert "step limit" in tab.inner_text("main")
    _fits(tab)
    _shot(tab, tmp_path, "web-failure-causes.png")
    trial = settled(page, viewer + f"#/run/{web}/t/9003/1")
    trial.click(".har tr:has-text('POST')")
    body = trial.wait_for_selector("#har-detail pre.har-body", timeout=30_000)
    assert body.inner_text() == "product=7&qty=2"
    assert "[object" not in trial.inner_text("#har-detail")
    assert "What each evaluator expected and got" in trial.inner_text("main")  # it passed
    _fits(trial)
    _shot(trial, tmp_path, "web-post-body.png")
    assert page.errors == []
