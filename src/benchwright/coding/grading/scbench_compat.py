"""What SCBench's own grading of its v1.0 problems changes in a problem's tests, done here too, so
that such a problem grades as SCBench grades it (docs/scbench-parity.md, "SCBench v1.0").

SCBench grades v1.0 through its Harbor conversion (scb-problems' `scripts/scb_to_harbor.py`), which
appends to pwd_manager's `tests/conftest.py` a drain for its pseudo-terminal helper `PtySession`:
once `expect` has matched, what the program writes in the next 50 ms is read too. Some of its tests
send a key, then read one chunk and look for the answer in it; without the drain that chunk may
start with the rest of the previous prompt. (On a machine at load 13, pwd_manager/2's
`test_category_table_printed_immediately_before_each_category_id_prompt` still fails on both
sides, SCBench's grading included: its answer comes later than its 0.7 s.) The code below is
ours, with the same behaviour; it is applied where the conversion applies it (the problem's folder
named `pwd_manager`) and only when the conftest has the helper it patches.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchwright.files.nofollow import read_regular

PTY_DRAIN = """

# --- added by benchwright, as SCBench's v1.0 grading adds it (grading/scbench_compat.py): ---
# --- after a match, read what arrives in the next 50 ms                                   ---
def _benchwright_expect_then_drain(self, pattern, timeout=5.0, _expect=PtySession.expect):
    import time as _time

    _expect(self, pattern, timeout)
    stop = _time.monotonic() + 0.05
    while self.process.poll() is None and _time.monotonic() < stop:
        self._read_available(0.01)
    return self.transcript


PtySession.expect = _benchwright_expect_then_drain
"""
_PATCHED = {"pwd_manager": ("conftest.py", b"class PtySession", PTY_DRAIN)}
_MAX_CONFTEST = 4 << 20


def adapt_tests(problem_folder: Path, tests_dir: Path) -> list[str]:
    """Apply SCBench's changes to the copied tests in `tests_dir` for the problem in
    `problem_folder`; the files changed (none for almost every problem)."""
    patch = _PATCHED.get(problem_folder.name)
    if patch is None:
        return []
    name, needs, suffix = patch
    text = read_regular(tests_dir, name, limit=_MAX_CONFTEST)
    if text is None or needs not in text:
        return []
    fd = os.open(tests_dir / name, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "a", encoding="utf-8") as conftest:
        conftest.write(suffix)
    return [name]
