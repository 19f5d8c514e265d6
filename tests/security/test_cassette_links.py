"""A cassette is a folder someone gave us: its files are read through no link. A conversation
swapped for a link to another file is not read (the replay has nothing recorded for it and
diverges at once; `llm cassette stats` leaves it out), and a header that is a link is refused."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.llm.cassette import conversation_path, start_cassette, traffic_setting
from benchwright.llm.proxy import LlmProxy
from benchwright.llm.stats import cassette_stats

KEY = "coding/p/trial_1/checkpoint_1/attempt_1"


def test_a_conversation_that_is_a_link_is_never_read(tmp_path: Path) -> None:
    cassette = tmp_path / "cassette"
    start_cassette(cassette)
    secret = tmp_path / "secret.jsonl.gz"
    secret.write_bytes(gzip.compress(b'{"format": "not yours"}\n'))
    target = conversation_path(cassette, KEY)
    target.parent.mkdir(parents=True)
    target.symlink_to(secret)
    (cassette / "conversations" / "coding" / "loop").symlink_to(tmp_path)  # a folder link too
    assert cassette_stats(cassette).conversations == []
    with LlmProxy(traffic_setting(None, cassette), None, "mini") as proxy:  # type: ignore[arg-type]
        proxy.begin(KEY, {})
        assert proxy.current is not None and proxy.current.recorded == []


def test_a_header_that_is_a_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    start_cassette(real)
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "cassette.json").symlink_to(real / "cassette.json")
    with pytest.raises(UserInputError, match="no cassette here"):
        traffic_setting(None, fake)
