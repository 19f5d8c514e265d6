from __future__ import annotations

from typing import Any

import pytest

from benchwright.coding.grading import pytest_report as pr
from benchwright.coding.problems.config import Group


@pytest.mark.parametrize(
    ("file_checkpoint", "markers", "expected"),
    [
        ("checkpoint_2", [], Group.CORE),
        ("checkpoint_2", ["functionality"], Group.FUNCTIONALITY),
        ("checkpoint_2", ["error"], Group.ERROR),
        ("checkpoint_2", ["error", "functionality"], Group.ERROR),
        ("checkpoint_2", ["regression"], Group.REGRESSION),
        ("checkpoint_2", ["regression", "error"], Group.ERROR),
        ("checkpoint_1", [], Group.REGRESSION),
        ("checkpoint_1", ["error"], Group.REGRESSION),
        ("checkpoint_2", ["perf"], Group.ERROR),
        ("checkpoint_2", ["perf", "functionality"], Group.ERROR),
    ],
)
def test_group_rules_first_match_wins(
    file_checkpoint: str, markers: list[str], expected: Group
) -> None:
    assert pr.group_of(file_checkpoint, markers, "checkpoint_2", {"perf": Group.ERROR}) is expected


def _entry(nodeid: str, outcome: str, keywords: list[str]) -> dict[str, Any]:
    return {"nodeid": nodeid, "outcome": outcome, "keywords": keywords,
            "call": {"duration": 0.5, "outcome": outcome,
                     "crash": {"message": "AssertionError: boom"} if outcome == "failed" else None}}


def test_cases_from_report_follow_scbench() -> None:
    report = {"tests": [
        _entry(".evaluation_tests/test_checkpoint_1.py::test_a", "passed", ["test_a"]),
        _entry(".evaluation_tests/test_checkpoint_2.py::test_b[error]", "passed",
               ["test_b[error]", "error", "parametrize"]),
        _entry(".evaluation_tests/test_checkpoint_2.py::TestX::test_c", "failed",
               ["test_c", "TestX", "functionality"]),
        _entry(".evaluation_tests/test_checkpoint_2.py::test_d", "xpassed", ["test_d"]),
        _entry(".evaluation_tests/test_checkpoint_2.py::test_e", "skipped", ["test_e"]),
    ]}
    cases = pr.test_cases(report, "checkpoint_2", {})
    assert [(c.id, c.group, c.passed) for c in cases] == [
        ("test_a", Group.REGRESSION, True),
        # SCBench reads keywords, so a parametrisation id named like a marker counts as one.
        ("test_b[error]", Group.ERROR, True),
        ("TestX::test_c", Group.FUNCTIONALITY, False),
        ("test_d", Group.CORE, True),
        ("test_e", Group.CORE, False),
    ]
    assert cases[2].message == "AssertionError: boom"
    counted = pr.count_groups(cases)
    assert list(counted) == [Group.CORE, Group.FUNCTIONALITY, Group.ERROR, Group.REGRESSION]
    assert (counted[Group.CORE].passed, counted[Group.CORE].total) == (1, 2)


@pytest.mark.parametrize(
    ("stdout", "exit_code", "collected", "infra"),
    [
        ("collected 32 items\n...", 1, 32, False),
        ("collected 1 item\n", 0, 1, False),
        ("collected 30 items / 2 errors\n", 2, 30, True),
        ("collected 0 items\n", 5, 0, True),
        ("ERROR: usage\n", 4, 0, True),
        ("no collection line, yet exit 0", 0, 0, True),
    ],
)
def test_infrastructure_rule(stdout: str, exit_code: int, collected: int, infra: bool) -> None:
    assert pr.collected_count(stdout) == collected
    assert pr.is_infrastructure_failure(exit_code, collected) is infra


def test_collection_failures_name_the_file() -> None:
    report = {"collectors": [
        {"nodeid": "", "outcome": "passed"},
        {"nodeid": ".evaluation_tests/test_checkpoint_1.py", "outcome": "failed",
         "longrepr": "Traceback...\nE   FileNotFoundError: [Errno 2] No such file: 'data/x.json'"},
    ]}
    assert pr.collection_failures(report) == [
        ".evaluation_tests/test_checkpoint_1.py: FileNotFoundError: [Errno 2] No such file: "
        "'data/x.json'"
    ]
