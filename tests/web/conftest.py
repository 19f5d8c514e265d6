"""Fixtures for the web track: the evaluator's environment (built from PyPI once, then cached)."""

from __future__ import annotations

import pytest

from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.config import WebEnvConfig
from benchwright.web.evaluator import dataset_dir, evaluator_env
from benchwright.web.synthetic import local_config
from benchwright.web.tasks import WebDataset, load_dataset


@pytest.fixture(scope="session")
def wv_env() -> BuiltEnv:
    return evaluator_env()


@pytest.fixture(scope="session")
def dataset(wv_env: BuiltEnv) -> WebDataset:
    return load_dataset(dataset_dir(wv_env))


@pytest.fixture
def local_cfg() -> WebEnvConfig:
    return local_config()
