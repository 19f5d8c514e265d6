"""The viewer in a real browser (Debian's Chromium through Playwright), served on loopback and as
a bundle over file://: every page of a coding run, a web run and a head-to-head renders with no
console error; the numbers shown are result.json's and the report's; a failing test's output
and a HAR request are a few clicks from the overview; planted scripts stay text."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli
from tests.helpers.view_runs import (
    TITLE,
    XSS,
    Page,
    Runs,
    copy_screenshot,
    rid,
    routes,
    settled,
)

pytestmark = pytest.mark.browser


def check_every_page(page: Page, base: str, runs: Runs) -> None:
    for route in routes(runs):
        tab = settled(page, base + route)
        assert tab.title() == TITLE, route
        assert not tab.query_selector("main .error"), (route, tab.inner_text("main")[:500])
        assert page.errors == [], (route, page.errors)


def test_every_page_renders_served(page: Page, viewer: str, runs: Runs) -> None:
    check_every_page(page, viewer, runs)


def test_every_page_renders_from_a_bundle(page: Page, bundle: Path, runs: Runs) -> None:
    check_every_page(page, (bundle / "index.html").as_uri(), runs)


def _pct(value: float) -> str:
    return "\u2013" if math.isnan(value) else f"{100 * value:.1f}%"


def _ci(estimate: dict[str, Any]) -> str:
    """As the page writes an estimate (and report.md: † under six clusters)."""
    mark = " †" if 0 < estimate["n_clusters"] < 6 else ""
    return (f"{_pct(estimate['value'])} [{100 * estimate['low']:.1f}, "
            f"{100 * estimate['high']:.1f}]{mark}")


def _row_text(tab: Any, name: str) -> str:
    return str(tab.locator("#runs tbody tr", has_text=f"/{name}").inner_text())


def test_the_numbers_are_the_result_and_the_report(page: Page, viewer: str, runs: Runs) -> None:
    tab = settled(page, viewer + "#/")
    for run in (runs.oracle, runs.evil):
        result = json.loads((run / "result.json").read_text())
        report = json.loads(run_cli("report", str(run), "--json").stdout)
        solved = next(m for m in report["solve_rates"] if m["name"] == "checkpoints solved")
        tab.wait_for_selector(f'.ci-cell[data-rid="{rid(run)}"]:not(:empty)')
        row = _row_text(tab, run.name)
        assert _pct(result["checkpoint_solve_rate"]) in row
        assert _ci(solved["estimate"]) in row
    web = json.loads((runs.web_a / "result.json").read_text())
    assert _ci(web["pass_rate_ci"]) in _row_text(tab, "web_a")
    tab = settled(page, f"{viewer}#/run/{rid(runs.web_a)}")
    cards = tab.inner_text(".cards")
    assert _pct(web["pass_rate_ci"]["value"]) in cards
    assert _ci(web["macro_average"]).split(" ", 1)[1] in cards


def test_click_from_the_overview_to_a_failing_tests_output(page: Page, viewer: str,
                                                          runs: Runs) -> None:
    tab = settled(page, viewer + "#/")
    tab.click("#runs a:text-is('evil')")
    tab.wait_for_selector("#s-failures")
    tab.click("text=open the checkpoint →")
    first = tab.wait_for_selector("#tests details.test[open] pre.test-output")
    assert "AssertionError" in first.inner_text()
    assert tab.inner_text("#tests details.test >> nth=0").count("failed") >= 1
    assert page.errors == []


def test_click_from_the_overview_to_a_har_request(page: Page, viewer: str, runs: Runs) -> None:
    tab = settled(page, viewer + "#/")
    tab.click("#runs a:text-is('web_a')")
    tab.wait_for_selector("#trials")
    tab.click("#trials a:text-is('9001')")
    tab.wait_for_selector("#har tbody tr")
    tab.click("#har tbody tr >> nth=0")
    detail = tab.wait_for_selector("#har-detail:has-text('Request headers')")
    assert "X-Planted" in detail.inner_text()
    assert page.errors == []


@pytest.mark.parametrize("mode", ["served", "bundle"])
def test_planted_scripts_show_as_text(page: Page, viewer: str, bundle: Path, runs: Runs,
                                      mode: str) -> None:
    base = viewer if mode == "served" else (bundle / "index.html").as_uri()
    tab = settled(page, f"{base}#/run/{rid(runs.evil)}/cp/ledger_cli/1/checkpoint_1")
    shown = tab.inner_text("main")
    assert shown.count(XSS) >= 3  # the agent's code (diff), a test's output, the agent's log
    assert XSS in tab.inner_text(".diff")
    tab = settled(page, f"{base}#/run/{rid(runs.web_a)}/t/9001/1")
    assert XSS in tab.inner_text("main")  # the answer and agent_response.json
    tab.click("#har tbody tr >> nth=0")
    tab.wait_for_selector("#har-detail:has-text('Response body')")
    tab.click("#har-detail summary")
    assert XSS in tab.inner_text("#har-detail")
    assert tab.title() == TITLE
    assert tab.evaluate("[...document.scripts].every(s => !s.text.includes('pwned'))")
    assert page.errors == []


def test_screenshots(page: Page, viewer: str, runs: Runs, tmp_path: Path) -> None:
    """The README's and docs' pictures (kept when BENCHWRIGHT_SCREENSHOTS names a folder)."""
    judged, chain, ref = (rid(p) for p in (runs.judged, runs.cf_chain, runs.cf_ref))
    for route, name, at in (
            ("#/", "view-overview.png", None),
            (f"#/run/{rid(runs.oracle)}/cp/kv_server/1/checkpoint_2", "view-checkpoint.png",
             None),
            (f"#/cmp/{chain}/{ref}", "view-counterfactual.png", None),
            (f"#/run/{judged}/cp/ledger_cli/1/checkpoint_2", "view-judge.png", "#s-llm-judge")):
        tab = settled(page, viewer + route)
        if at:  # the page's section at the top of the picture, below the sticky header
            tab.evaluate(f"document.querySelector('{at}').scrollIntoView(); scrollBy(0, -60)")
        shot = tmp_path / name
        tab.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        copy_screenshot(shot, name)
