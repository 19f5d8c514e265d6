"""The shared ATIF writer and reader (benchwright.files.atif): what is written validates with
the `atif` models and holds no key; what is read back is hostile (links, size, depth, junk,
invalid ATIF) and each bad file is one AtifError line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.files.atif import (
    ATIF_FILE,
    AtifError,
    read_atif,
    schema_version,
    timestamp,
    write_atif,
)
from benchwright.files.redaction import Redactor

atif = pytest.importorskip("atif")

KEY = "sk-test-atif-5f1e2d3c4b5a69788796a5b4"


def _doc(**extra: Any) -> dict[str, Any]:
    return {"schema_version": schema_version(), "agent": {"name": "x", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": f"use {KEY}"},
                      {"step_id": 2, "source": "agent", "message": "ok",
                       "tool_calls": [{"tool_call_id": "c1", "function_name": "go",
                                       "arguments": {"url": f"http://h/?key={KEY}"}}],
                       "metrics": {"prompt_tokens": 3}}], **extra}


def test_the_schema_tag_is_the_installed_package_version() -> None:
    from importlib.metadata import version

    assert schema_version() == "ATIF-v" + ".".join(version("atif").split(".")[:2])


def test_written_files_validate_and_hold_no_key(tmp_path: Path) -> None:
    path = write_atif(tmp_path / ATIF_FILE, _doc(), Redactor({"MY_KEY": KEY}))
    text = path.read_text()
    assert KEY not in text
    doc = atif.Trajectory.model_validate_json(text)
    assert doc.steps[1].tool_calls[0].arguments["url"].startswith("http://h/?key=")
    assert read_atif(tmp_path, ATIF_FILE).steps[1].metrics.prompt_tokens == 3


def test_an_invalid_document_is_never_written(tmp_path: Path) -> None:
    bad = _doc()
    bad["steps"][0]["metrics"] = {"prompt_tokens": 1}  # metrics on a user step
    with pytest.raises(ValueError):
        write_atif(tmp_path / ATIF_FILE, bad)
    assert not (tmp_path / ATIF_FILE).exists()


def test_timestamps_iso_kept_epoch_converted_junk_dropped() -> None:
    assert timestamp("2026-11-26T16:00:00Z") == "2026-11-26T16:00:00Z"
    assert timestamp(0) == "1970-01-01T00:00:00+00:00"
    assert timestamp("yesterday") is None and timestamp(True) is None
    assert timestamp(1e300) is None


HOSTILE: dict[str, tuple[bytes, str]] = {
    "not json": (b"{nope", "is not JSON"),
    "deep": (b"[" * 5000 + b"]" * 5000, "nested"),
    "list": (b"[1, 2]", "no schema_version"),
    "no steps": (json.dumps({"schema_version": "ATIF-v1.8"}).encode(), "not valid ATIF"),
    "bad step ids": (json.dumps({**_doc(), "steps": [
        {"step_id": 7, "source": "user", "message": "x"}]}).encode(), "not valid ATIF"),
    "unknown field": (json.dumps(_doc(evil=1)).encode(), "not valid ATIF"),
    "binary": (b"\xff\xfe\x00junk", "not JSON"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_is_one_clear_error(tmp_path: Path, name: str) -> None:
    data, expected = HOSTILE[name]
    (tmp_path / ATIF_FILE).write_bytes(data)
    with pytest.raises(AtifError) as caught:
        read_atif(tmp_path, ATIF_FILE)
    assert expected in caught.value.message and "\n" not in str(caught.value)
    assert len(str(caught.value)) < 600


def test_links_and_huge_files_are_refused_unread(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(_doc()))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / ATIF_FILE).symlink_to(secret)
    with pytest.raises(AtifError, match="link"):
        read_atif(tmp_path / "run", ATIF_FILE)
    (tmp_path / "run" / "up").symlink_to(tmp_path)
    with pytest.raises(AtifError, match="link"):
        read_atif(tmp_path / "run", f"up/{ATIF_FILE}")
    big = tmp_path / "big"
    big.mkdir()
    (big / ATIF_FILE).write_bytes(b" " * 2048 + json.dumps(_doc()).encode())
    with pytest.raises(AtifError, match="larger than"):
        read_atif(big, ATIF_FILE, max_bytes=1024)
