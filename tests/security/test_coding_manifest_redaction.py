"""A key inside the coding agent's base URL is not stored in the run's manifest, and a resumed
run gets it back from the environment (the mark names the variable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.coding.attempts.models import AgentSettings, RunConfig
from benchwright.coding.attempts.runner import create_run, load_manifest, refresh_checksums
from tests.helpers import FIXTURES

KEY = "query-key-only-in-the-url-8e1f"
PASSWORD = "userinfo-password-2b9c07"
URL = f"http://bw:{PASSWORD}@127.0.0.1:9/v1?key={KEY}"


@pytest.mark.sandbox
def test_the_manifest_keeps_no_url_credential(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    config = RunConfig(problems_dir=FIXTURES, problems=["hostile"], agent="mini",
                       agent_settings=AgentSettings(base_url=URL))
    run_dir = tmp_path / "run"
    create_run(config, run_dir)
    refresh_checksums(run_dir, load_manifest(run_dir))
    text = (run_dir / "manifest.json").read_text()
    assert KEY not in text and PASSWORD not in text
    assert "<redacted:BASE_URL_KEY>" in text and "<redacted:BASE_URL_PASSWORD>" in text
    monkeypatch.setenv("BASE_URL_KEY", KEY)
    monkeypatch.setenv("BASE_URL_PASSWORD", PASSWORD)
    assert load_manifest(run_dir).config.agent_settings.base_url == URL
