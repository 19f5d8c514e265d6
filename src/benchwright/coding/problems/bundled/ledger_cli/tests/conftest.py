"""benchwright example problem ledger_cli: shared pytest configuration.

The submission is run as a subprocess from the current working directory
(the workspace root), using the command given by --entrypoint.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

RUN_TIMEOUT = 8


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--entrypoint", action="store", required=True,
                     help="command that runs the submission, e.g. 'python ledger.py'")
    parser.addoption("--checkpoint", action="store", required=True,
                     help="name of the checkpoint being graded, e.g. checkpoint_2")


@pytest.fixture(scope="session")
def entrypoint_argv(request: pytest.FixtureRequest) -> list[str]:
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture(scope="session")
def checkpoint_name(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--checkpoint")


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """The static asset folder `samples`, copied next to this file by the harness."""
    return Path(__file__).parent / "assets" / "samples"


@pytest.fixture(scope="session")
def ledger(entrypoint_argv):
    """Run the submission with the given arguments; returns the CompletedProcess."""

    def run(*args: object, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            entrypoint_argv + [str(arg) for arg in args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )

    return run


@pytest.fixture
def write_csv(tmp_path: Path):
    """Write text to a fresh CSV file in the test's temporary folder; returns its path."""
    counter = iter(range(1_000_000))

    def write(text: str, name: str | None = None) -> Path:
        path = tmp_path / (name or f"input_{next(counter)}.csv")
        path.write_text(text, encoding="utf-8")
        return path

    return write


def ok_json(result: subprocess.CompletedProcess):
    """Assert a successful run and return its stdout parsed as JSON."""
    assert result.returncode == 0, f"exit {result.returncode}; stderr: {result.stderr}"
    return json.loads(result.stdout)


def assert_failed(result: subprocess.CompletedProcess, code: int) -> None:
    """Assert a failed run: the given exit code, an error line on stderr, nothing on stdout."""
    assert result.returncode == code, (
        f"expected exit {code}, got {result.returncode}; stderr: {result.stderr}"
    )
    assert result.stdout.strip() == ""
    assert "error" in result.stderr.lower()


@pytest.fixture(scope="session")
def check():
    """Assertion helpers shared by all checkpoints: check.ok_json(...), check.failed(...)."""

    class Check:
        ok_json = staticmethod(ok_json)
        failed = staticmethod(assert_failed)

    return Check
