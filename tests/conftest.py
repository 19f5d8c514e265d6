"""Fixtures every test folder may use: the bundled problems. Shared helpers (functions, constants)
live in tests/helpers/, never here nor in a test module."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.coding.examples import example_problem_dir

# old spellings (`from tests.conftest import run_cli`) for branches begun before tests/helpers
from tests.helpers import CONFTEST, FIXTURES, run_cli, write_problem  # noqa: F401


@pytest.fixture
def kv_server() -> Path:
    return example_problem_dir("kv_server")


@pytest.fixture
def ledger_cli() -> Path:
    return example_problem_dir("ledger_cli")


@pytest.fixture(scope="module")
def problems_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled ledger_cli, cut to its first checkpoint (agents' end-to-end tests)."""
    import shutil

    import yaml

    root = tmp_path_factory.mktemp("problems")
    target = root / "ledger_cli"
    shutil.copytree(example_problem_dir("ledger_cli"), target)
    config = yaml.safe_load((target / "config.yaml").read_text())
    config["checkpoints"] = {"checkpoint_1": config["checkpoints"]["checkpoint_1"]}
    (target / "config.yaml").write_text(yaml.safe_dump(config))
    return root
