"""Fixtures of the Harbor tests: what every test of a session can share, made once per xdist
worker. Session-scoped, so the tests that use them are not tied to one worker (tests/conftest.py
puts the tests of a module-scoped fixture on one worker) and spread across the run.

- `image`: the default grading image's tag, the FROM of the tasks written for the tests (built
  once per machine, found in the engine's store after that; tests/helpers/harbor_tasks.py).
- `harbor_python`: the Python of the environment holding `harbor` itself (built once, cached).

What a test changes (its task folder, its run folder, the state images a trial commits) is its
own: a task's image is built from the test's own folder, and `run harbor` removes its state images.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import harbor_tasks


@pytest.fixture(scope="session")
def image() -> str:
    """The default grading image's tag."""
    return harbor_tasks.base_image()


@pytest.fixture(scope="session")
def harbor_python() -> Path:
    """The Python of an environment holding `harbor` (the test is skipped when PyPI is
    unreachable)."""
    return harbor_tasks.harbor_python()
