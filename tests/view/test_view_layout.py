"""Every page at 1,400 px with nothing cut off, and the small things of issue 27 seen in Chromium:
numbers in the heatmap's cells, labelled scatter points, head-to-head cells linking to both
sides, identical failures grouped with a count (Core's first). Screenshots are kept with
BENCHWRIGHT_SCREENSHOTS=DIR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.view_runs import (
    Page,
    Runs,
    copy_screenshot,
    cut_off,
    rid,
    routes,
    settled,
)

pytestmark = pytest.mark.browser

ORDER = ["Core", "Functionality", "Error", "Regression"]


def _slug(route: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in route)[:80] or "runs"


def test_every_page_fits_1400_px(page: Page, viewer: str, runs: Runs, tmp_path: Path) -> None:
    cut = {}
    for route in routes(runs):
        tab = settled(page, viewer + route)
        assert tab.viewport_size["width"] == 1400
        found = cut_off(tab)
        if found:
            cut[route] = found
        shot = tmp_path / f"fit-{_slug(route)}.png"
        tab.screenshot(path=str(shot), full_page=True)
        copy_screenshot(shot, shot.name)
    assert cut == {}


def _texts(tab: Any, selector: str) -> list[str]:
    return [t for t in tab.locator(selector).all_text_contents() if t.strip()]


def test_overview_heatmap_numbers_and_point_labels(page: Page, viewer: str, runs: Runs) -> None:
    tab = settled(page, viewer + "#/")
    cells = _texts(tab, ".chart .heatmaplayer text")
    assert any("/" in t for t in cells), cells[:20]
    labels = ", ".join(_texts(tab, ".chart .scatterlayer .textpoint text"))
    assert "oracle" in labels and "evil" in labels and "cf_ref" in labels, labels
    assert page.errors == []


def test_head_to_head_cells_link_to_both_sides(page: Page, viewer: str, runs: Runs) -> None:
    o, e = rid(runs.oracle), rid(runs.evil)
    tab = settled(page, f"{viewer}#/cmp/{o}/{e}")
    hrefs = [a.get_attribute("href") for a in tab.locator("#cmp-problems a").all()]
    assert f"#/run/{o}/p/ledger_cli" in hrefs and f"#/run/{e}/p/ledger_cli" in hrefs
    a, b = rid(runs.web_a), rid(runs.web_b)
    tab = settled(page, f"{viewer}#/cmp/{a}/{b}")
    hrefs = [x.get_attribute("href") for x in tab.locator("#cmp-tasks a").all()]
    assert f"#/run/{a}/t/9001/1" in hrefs and f"#/run/{b}/t/9001/1" in hrefs


def test_identical_failures_are_grouped_core_first(page: Page, viewer: str, runs: Runs) -> None:
    tab = settled(page, f"{viewer}#/run/{rid(runs.evil)}/cp/ledger_cli/1/checkpoint_1")
    groups = tab.locator("#tests > .samefail")
    assert groups.count() >= 1
    first = groups.first.inner_text()
    assert " \u00d7 failed" in first and "Core 3" in first
    badges = tab.locator("#tests > .samefail .row .badge").all_inner_texts()
    kinds = [b.split()[0] for b in badges if b.split()[0] in ORDER]
    assert kinds[0] == "Core"  # the first group holds the Core failures
    height = tab.evaluate("document.documentElement.scrollHeight")
    assert height < 6000, height


def test_web_steps_show_each_action(page: Page, viewer: str, runs: Runs) -> None:
    tab = settled(page, f"{viewer}#/run/{rid(runs.web_b)}/t/9001/1")
    action = tab.locator("#s-steps ~ .step .webaction").first
    assert action.locator(".badge").inner_text() == "done"
    assert page.errors == []
