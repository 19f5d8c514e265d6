"""Every file a run writes gets the umask's mode (0644 under umask 022), HAR files included:
results are meant to be read by other users of the machine (CI, a web server, colleagues)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, run_cli


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # the CLI subprocesses inherit it
    try:
        yield
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mode & 0o777
            for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def _not_0644(root: Path) -> dict[str, str]:
    return {name: oct(mode) for name, mode in _modes(root).items() if mode != 0o644}


def test_har_writer_files_are_0644(tmp_path: Path, umask_022: None) -> None:
    from benchwright.web.browser.har_writer import HarWriter

    writer = HarWriter(tmp_path / "network.har", interval_s=0.0)  # flushes at once, no loop
    writer.add({"request": {"url": "http://127.0.0.1/"}}, 1.0)
    writer.close()
    assert _not_0644(tmp_path) == {}


@pytest.mark.sandbox
def test_every_file_of_a_coding_run_is_0644(tmp_path: Path, umask_022: None) -> None:
    out = tmp_path / "run"
    done = run_cli("run", "coding", "--problems-dir", str(FIXTURES / "runs"),
                   "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    modes = _modes(out)
    assert len(modes) > 20
    # the SCBench-shaped files too (coding/attempts/scbench)
    quality = "quick/trial_1/checkpoint_2/quality_analysis"
    for name in ("config.yaml", "checkpoint_results.jsonl", f"{quality}/overall_quality.json",
                 f"{quality}/files.jsonl", f"{quality}/symbols.jsonl",
                 f"{quality}/ast_grep.jsonl"):
        assert name in modes, name
    assert _not_0644(out) == {}


@pytest.mark.browser
@pytest.mark.skipif(importlib.util.find_spec("browser_use") is None, reason="needs browser-use")
def test_every_file_of_a_web_run_is_0644(tmp_path: Path, umask_022: None) -> None:
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != "BENCHWRIGHT_WEB_TRIAL_RUNNER"}
    done = run_cli("run", "web", "--suite", "local", "--agent", "scripted", "--task-ids", "9001",
                   "--out", str(out), "--json", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tasks/9001/trial_1/network.har" in _modes(out)
    assert _not_0644(out) == {}
