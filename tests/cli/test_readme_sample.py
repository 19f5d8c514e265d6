"""The README's sample of what `benchwright run coding` prints is what it prints today: every line
of that block (times and the progress bar aside) in the real command's output."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli

pytestmark = pytest.mark.sandbox
TIMES = re.compile(r"\d+(\.\d+)? s\b")


def _sample() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("What `benchwright run coding` prints")
    block = text[text.index("```\n", start) + 4:]
    return block[:block.index("```")].splitlines()


def _normal(line: str) -> str:
    return TIMES.sub("N s", " ".join(line.split()))


def test_the_readme_sample_is_current(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "240"}
    done = run_cli("run", "coding", "--out", "runs/first", "--no-metrics", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    output = (done.stdout + done.stderr).replace(str(tmp_path), "/root/benchwright")
    printed = {_normal(line) for line in output.splitlines()}
    missing = [line for line in _sample() if _normal(line) not in printed]
    assert missing == [], (missing, done.stdout)
