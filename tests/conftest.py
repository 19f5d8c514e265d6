"""Shared fixtures: bundled problems, throwaway problem folders, the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchwright.coding.examples import example_problem_dir

FIXTURES = Path(__file__).parent / "fixtures"


def run_cli(*args: str, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `benchwright ARGS` as a user would, and capture everything."""
    return subprocess.run([sys.executable, "-m", "benchwright", *args], capture_output=True,
                          text=True, env=env or dict(os.environ), cwd=cwd, timeout=600)


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


def write_problem(root: Path, config: str, files: dict[str, str]) -> Path:
    """A problem folder with this config.yaml and these files (paths relative to it)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(textwrap.dedent(config))
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


CONFTEST = '''
import shlex
import pytest

def pytest_addoption(parser):
    parser.addoption("--entrypoint", action="store", required=True)
    parser.addoption("--checkpoint", action="store", required=True)

@pytest.fixture(scope="session")
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))
'''
