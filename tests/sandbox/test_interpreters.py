"""The interpreter memo: a probe's answer is kept across processes, keyed by the binary itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.sandbox import interpreters


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    _new_process()
    yield tmp_path / "cache"
    _new_process()


def _new_process() -> None:
    """What a new benchwright process starts with: nothing probed, the memo not read yet."""
    interpreters._probe.cache_clear()
    interpreters._memo.cache_clear()
    interpreters._find.cache_clear()


def _fake_python(path: Path, log: Path, version: str = "3.12.9") -> Path:
    """An 'interpreter' that answers the probe and notes each time it is asked."""
    answer = json.dumps([version, str(path), "/opt/fake"])
    path.write_text(f"#!/bin/sh\necho asked >> {log}\necho '{answer}'\n")
    path.chmod(0o755)
    return path


def test_a_probe_is_remembered_across_processes(cache: Path, tmp_path: Path) -> None:
    log = tmp_path / "asked.log"
    python = _fake_python(tmp_path / "python3", log)
    first = interpreters.resolve_python(str(python))
    _new_process()
    again = interpreters.resolve_python(str(python))
    assert first == again and first.version == "3.12.9"
    assert log.read_text().count("asked") == 1
    assert (cache / "interpreters.json").is_file()


def test_a_replaced_interpreter_is_asked_again(cache: Path, tmp_path: Path) -> None:
    log = tmp_path / "asked.log"
    python = _fake_python(tmp_path / "python3", log)
    interpreters.resolve_python(str(python))
    replacement = _fake_python(tmp_path / "new", log, version="3.12.10")
    replacement.replace(python)  # a new inode at the same path, as a reinstall leaves
    _new_process()
    assert interpreters.resolve_python(str(python)).version == "3.12.10"
    assert log.read_text().count("asked") == 2


@pytest.mark.parametrize("content", ["{not json", '{"format": 1, "interpreters": {"k": 5}}',
                                     "[]", '{"format": 99, "interpreters": {}}'])
def test_a_malformed_memo_counts_as_empty(cache: Path, tmp_path: Path, content: str) -> None:
    cache.mkdir(parents=True)
    (cache / "interpreters.json").write_text(content)
    python = _fake_python(tmp_path / "python3", tmp_path / "asked.log")
    assert interpreters.resolve_python(str(python)).version == "3.12.9"
    _new_process()
    assert interpreters.resolve_python(str(python)).version == "3.12.9"
    assert (tmp_path / "asked.log").read_text().count("asked") == 1  # the memo was rewritten


def test_a_memo_that_is_a_link_is_not_followed(cache: Path, tmp_path: Path) -> None:
    cache.mkdir(parents=True)
    secret = tmp_path / "secret.json"
    secret.write_text('{"format": 1, "interpreters": {}}')
    (cache / "interpreters.json").symlink_to(secret)
    python = _fake_python(tmp_path / "python3", tmp_path / "asked.log")
    assert interpreters.resolve_python(str(python)).version == "3.12.9"
    assert secret.read_text() == '{"format": 1, "interpreters": {}}'  # written beside, not through
