"""The viewer tests' fixtures: the session's runs (tests/helpers/view_runs.py), the viewer serving
them, their bundle, and a headless Chromium (the system's, through Playwright) to look at both."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli
from tests.helpers.view_runs import CHROMIUM, Page, Runs, make_runs


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return make_runs(tmp_path_factory.mktemp("view") / "runs", tmp_path_factory)


@pytest.fixture(scope="session")
def viewer(runs: Runs) -> Iterator[str]:
    """The viewer served on loopback (in this process), its base URL."""
    from benchwright.view.server import serve_in_thread, start

    server = start([runs.root])
    stop = serve_in_thread(server)
    yield server.url
    stop()


@pytest.fixture(scope="session")
def bundle(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same runs written as a static site by the CLI."""
    out = tmp_path_factory.mktemp("bundle") / "site"
    done = run_cli("view", str(runs.root), "--bundle", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    return out


# Module scope: a live sync Playwright keeps its event loop running in this thread, and later
# tests (the web track) call asyncio.run, which refuses to start inside a running loop.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("needs the playwright package (pip install playwright; no browser download)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as play:
        chromium = play.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-extensions",
                  "--allow-file-access-from-files"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    tab = Page(browser)
    yield tab
    tab.close()

