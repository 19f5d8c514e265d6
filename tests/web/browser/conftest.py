"""Fixtures for browser trials: the loopback test site, one shared Chromium, tasks, scripts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.web.evaluation.tasks import TaskType, WebTask
from tests.helpers.testsite import SiteServer, serve


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    server = serve()
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def shared(site: SiteServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from benchwright.web.browser.shared_browser import SharedBrowser

    with SharedBrowser(workdir=tmp_path_factory.mktemp("chromium"),
                       site_urls=[site.url]) as browser:
        yield browser


@pytest.fixture
def task() -> WebTask:
    return WebTask(task_id=1, sites=("shopping",), intent_template_id=1,
                   start_urls=("__SHOPPING__",), intent="Order a blue mug", eval=(),
                   revision=1, task_type=TaskType.MUTATE, expected_status="SUCCESS")


@pytest.fixture
def write_script(tmp_path: Path) -> Callable[[list[dict[str, Any]]], Path]:
    def write(steps: list[dict[str, Any]]) -> Path:
        path = tmp_path / "script.yaml"
        path.write_text(yaml.safe_dump({"task_id": 1, "steps": steps}))
        return path
    return write
