"""Which of SCBench's two gradings a problem set follows, read from the set itself.

SCBench grades its problems in two ways that differ on tests that do not run. Its runner
(SCBench's main repository, January 2026: the 20 older problems, docs/scbench-parity.md's first
table) counts a skipped or xfailed test as not passed. Its v1.0 grading (github.com/gabeorlanski/
scb-problems, through the Harbor conversion `scripts/scb_to_harbor.py`, whose reward shim reads
pytest-json-report) leaves them out of the counts. The two disagree on real problems: the older
metric_transform_lang skips 46 regression tests at checkpoint 3 (52/98 under the runner), and
v1.0's mocked_http skips a test when `rabbitmq-server` is not installed.

A set graded the second way holds the conversion's overrides, `conversion.toml`, at its root
beside the problem folders; benchwright then grades as the conversion does. A copy of the problem
folders without that file is graded as SCBench's runner grades.
"""

from __future__ import annotations

import os
import stat
from enum import StrEnum
from pathlib import Path

HARBOR_MARKER = "conversion.toml"
"""The file at a problem set's root that SCBench's Harbor conversion reads (its overrides)."""


class GradingSemantics(StrEnum):
    """Whose rules a problem set's counts follow (a closed set)."""

    SCBENCH_RUNNER = "scbench-runner"
    """SCBench's runner: a skipped or xfailed test counts as not passed."""
    SCBENCH_HARBOR = "scbench-harbor"
    """SCBench's v1.0 grading (its Harbor conversion): skipped and xfailed tests are left out
    of the counts; they neither pass nor fail."""


LEFT_OUT = {GradingSemantics.SCBENCH_RUNNER: frozenset[str](),
            GradingSemantics.SCBENCH_HARBOR: frozenset({"skipped", "xfailed"})}
"""The pytest outcomes each grading leaves out of the counts."""


def grading_semantics(problem_dir: Path) -> GradingSemantics:
    """The grading of the set `problem_dir` belongs to: SCBench's v1.0 grading when the set's
    root (the folder's parent) holds `conversion.toml` as a regular file (a link is not
    followed), else SCBench's runner."""
    try:
        found = os.lstat(Path(problem_dir).resolve().parent / HARBOR_MARKER)
    except OSError:
        return GradingSemantics.SCBENCH_RUNNER
    return (GradingSemantics.SCBENCH_HARBOR if stat.S_ISREG(found.st_mode)
            else GradingSemantics.SCBENCH_RUNNER)
