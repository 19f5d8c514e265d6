"""Which indexes a failed build's cause is looked for in, and that what the build printed never
decides alone (`sandbox.build_faults`; the real builds are in test_build_faults.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.sandbox.build_faults import build_indexes, outside_cause


def test_the_indexes_are_uvs_own_and_an_offline_setup_is_never_probed_online() -> None:
    assert build_indexes({}) == ["https://pypi.org/simple"]
    assert build_indexes({"UV_INDEX_URL": "https://old.example/simple",
                          "UV_DEFAULT_INDEX": "https://new.example/simple",
                          "UV_INDEX": "mine=https://mine.example/simple",
                          "UV_FIND_LINKS": "/opt/wheels"}) == [
        "https://new.example/simple", "https://mine.example/simple", "/opt/wheels"]
    assert build_indexes({"UV_OFFLINE": "1", "UV_FIND_LINKS": "/opt/wheels"}) == ["/opt/wheels"]
    assert build_indexes({"UV_NO_INDEX": "true"}) == []


def test_a_full_disk_claimed_on_a_roomy_disk_is_still_the_submissions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build backend can print anything: a roomy disk and a readable index mean no cause."""
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_FIND_LINKS", str(tmp_path))
    assert outside_cause("error: No space left on device (os error 28)", [tmp_path]) is None
    monkeypatch.setenv("UV_FIND_LINKS", str(tmp_path / "gone"))
    cause = outside_cause("uv pip failed: whatever", [tmp_path])
    assert cause == f"the package index {tmp_path / 'gone'} is not a folder benchwright can read"
