"""Turn pytest's output and pytest-json-report's file into test cases, by SCBench's rules."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from benchwright.coding.grading.evaluation import Outcome, TestCase
from benchwright.coding.grading.policies import GroupCount
from benchwright.coding.problems.config import Group
from benchwright.coding.problems.semantics import LEFT_OUT, GradingSemantics

BUILTIN_MARKERS: dict[str, tuple[str, Group]] = {
    "error": ("error-handling / edge-case tests", Group.ERROR),
    "functionality": ("non-core / nice-to-have tests", Group.FUNCTIONALITY),
    "regression": ("regression tests from prior checkpoints", Group.REGRESSION),
}
INFRA_EXIT_CODES = frozenset({2, 3, 4, 5})
_COLLECTED = re.compile(r"collected (\d+) items?")
_CHECKPOINT_FILE = re.compile(r"test_([^/]+)\.py")
_OUTCOMES: dict[str, Outcome] = {
    "passed": "passed", "failed": "failed", "error": "error", "skipped": "skipped",
    "xfailed": "xfailed", "xpassed": "xpassed",
}


def collected_count(stdout: str) -> int:
    """Items from pytest's `collected N items` line; 0 when there is none."""
    match = _COLLECTED.search(stdout)
    return int(match.group(1)) if match else 0


def is_infrastructure_failure(exit_code: int, collected: int) -> bool:
    """SCBench's rule: pytest exit code 2-5, or no (or zero) `collected N items` line."""
    return exit_code in INFRA_EXIT_CODES or collected == 0


def group_of(
    test_checkpoint: str, markers: Iterable[str], current: str, custom: Mapping[str, Group]
) -> Group:
    """The group of a test; the first rule that applies wins."""
    marks = set(markers)
    if test_checkpoint != current:
        return Group.REGRESSION
    if "error" in marks:
        return Group.ERROR
    if "regression" in marks:
        return Group.REGRESSION
    for mark in markers:
        if mark in custom:
            return custom[mark]
    if "functionality" in marks:
        return Group.FUNCTIONALITY
    return Group.CORE


def test_cases(
    report: Mapping[str, Any], current: str, custom: Mapping[str, Group]
) -> list[TestCase]:
    """One case per test entry of the report, in run order."""
    known = set(BUILTIN_MARKERS) | set(custom)
    return [_case(entry, current, custom, known) for entry in report.get("tests") or []]


def _case(
    entry: Mapping[str, Any], current: str, custom: Mapping[str, Group], known: set[str]
) -> TestCase:
    nodeid = str(entry.get("nodeid", ""))
    file, _, test_id = nodeid.partition("::")
    match = _CHECKPOINT_FILE.search(file)
    checkpoint = match.group(1) if match else current
    # SCBench reads markers from pytest's keywords, which also hold parametrisation ids.
    markers = [kw for kw in entry.get("keywords") or [] if kw in known]
    return TestCase(
        id=test_id or nodeid,
        file=file,
        checkpoint=checkpoint,
        group=group_of(checkpoint, markers, current, custom),
        outcome=_OUTCOMES.get(str(entry.get("outcome")), "error"),
        duration_s=round(sum(_phase(entry, p).get("duration") or 0 for p in _PHASES), 4),
        message=_failure_message(entry),
    )


_PHASES = ("setup", "call", "teardown")


def _phase(entry: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = entry.get(name)
    return value if isinstance(value, Mapping) else {}


def _failure_message(entry: Mapping[str, Any]) -> str | None:
    for name in _PHASES:
        phase = _phase(entry, name)
        if phase.get("outcome") not in ("failed", "error"):
            continue
        crash = phase.get("crash")
        if isinstance(crash, Mapping) and crash.get("message"):
            return str(crash["message"])[:2000]
        if phase.get("longrepr"):
            return str(phase["longrepr"]).strip().splitlines()[-1][:2000]
    return None


def left_out(cases: Iterable[TestCase], semantics: GradingSemantics) -> list[TestCase]:
    """The cases, those whose outcome the problem set's grading does not count marked so."""
    skip = LEFT_OUT[semantics]
    return [c.model_copy(update={"counted": False}) if c.outcome in skip else c for c in cases]


def count_groups(cases: Iterable[TestCase]) -> dict[Group, GroupCount]:
    """Passed and total per group of the counted cases, in the groups' report order."""
    counts = {group: GroupCount() for group in Group}
    for case in (c for c in cases if c.counted):
        counts[case.group].total += 1
        counts[case.group].passed += int(case.passed)
    return {g: c for g, c in counts.items() if c.total}


def collection_failures(report: Mapping[str, Any]) -> list[str]:
    """`file: last line of the error` for each collector that failed."""
    failures = []
    for collector in report.get("collectors") or []:
        if collector.get("outcome") != "failed":
            continue
        lines = str(collector.get("longrepr") or "").strip().splitlines()
        last = _clean_error_line(lines[-1]) if lines else "failed to collect"
        failures.append(f"{collector.get('nodeid') or '(session)'}: {last}")
    return failures


def _clean_error_line(line: str) -> str:
    return re.sub(r"^E\s+", "", line.strip())
