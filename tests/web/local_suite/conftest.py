"""Fixtures: the local suite served on loopback, one headless Chromium, one evaluator process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.evaluation.evaluator import EvaluatorProcess
from benchwright.web.local_suite import LocalSuite, serve_suite
from tests.helpers.cdp_driver import Cdp


@pytest.fixture(scope="module")
def suite() -> Iterator[LocalSuite]:
    with serve_suite() as running:
        yield running


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cdp]:
    cdp = Cdp(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield cdp
    finally:
        cdp.close()


@pytest.fixture(scope="module")
def evaluator(wv_env: BuiltEnv) -> Iterator[EvaluatorProcess]:
    with EvaluatorProcess.for_env(wv_env) as process:
        yield process


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    return tmp_path / "downloads"
