"""Throwaway problem folders."""

from __future__ import annotations

import textwrap
from pathlib import Path


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
"""The conftest.py of a problem's tests: the --entrypoint and --checkpoint options."""
