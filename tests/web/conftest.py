"""Fixtures for the web track: the evaluator's environment (built from PyPI once, then cached)."""

from __future__ import annotations

import pytest

from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.evaluation.evaluator import dataset_dir, evaluator_env
from benchwright.web.evaluation.synthetic import local_config
from benchwright.web.evaluation.tasks import WebDataset, load_dataset
from benchwright.web.sites.config import WebEnvConfig
from tests.helpers.tiers import starts


@pytest.fixture(scope="session")
@starts("sandbox")  # building the environment (once per machine, or when its pins change) does
def wv_env() -> BuiltEnv:
    return evaluator_env()


@pytest.fixture(scope="session")
def dataset(wv_env: BuiltEnv) -> WebDataset:
    return load_dataset(dataset_dir(wv_env))


@pytest.fixture
def local_cfg() -> WebEnvConfig:
    return local_config()
