"""The harness's cross-checks of what pytest sent over the verdict pipe (no sandbox needed)."""

from __future__ import annotations

import json
from typing import Any

from benchwright.coding.grading.verdict_channel import parse, tampering

NODE = ".evaluation_tests/test_checkpoint_1.py::test_a"


def _lines(outcome: str, exitstatus: int, failed: int, extra: str = "") -> bytes:
    report = {"tests": [{"nodeid": NODE, "outcome": outcome}]}
    records: list[dict[str, Any]] = [
        {"kind": "test", "nodeid": NODE, "when": "call", "outcome": outcome, "xfail": False},
        {"kind": "summary", "exitstatus": exitstatus, "collected": 1, "failed": failed,
         "report": report},
    ]
    return ("\n".join(json.dumps(r) for r in records) + "\n" + extra).encode()


def test_an_honest_report_agrees() -> None:
    pipe = parse(_lines("failed", 1, 1))
    assert tampering(1, pipe, pipe.json_report) is None
    assert pipe.collected == 1


def test_an_exit_status_other_than_the_reported_one_is_tampering() -> None:
    pipe = parse(_lines("passed", 0, 0))
    assert "exited with code 1" in (tampering(1, pipe, pipe.json_report) or "")


def test_exit_one_with_nothing_failed_is_tampering() -> None:
    pipe = parse(_lines("passed", 1, 0))
    assert "no failing test" in (tampering(1, pipe, pipe.json_report) or "")


def test_a_rewritten_report_file_is_tampering() -> None:
    pipe = parse(_lines("failed", 1, 1))
    forged = {"tests": [{"nodeid": NODE, "outcome": "passed"}]}
    assert "failed -> passed" in (tampering(1, pipe, forged) or "")
    assert "removed" in (tampering(1, pipe, None) or "")


def test_lines_that_are_not_records_are_tampering() -> None:
    pipe = parse(_lines("failed", 1, 1, extra="collected 99 items\n"))
    assert pipe.malformed == 1
    assert tampering(1, pipe, pipe.json_report) is not None


def test_only_the_first_summary_counts() -> None:
    second = json.dumps({"kind": "summary", "exitstatus": 0, "collected": 9, "failed": 0})
    pipe = parse(_lines("failed", 1, 1, extra=second + "\n"))
    assert pipe.collected == 1
    assert tampering(1, pipe, pipe.json_report) is not None
