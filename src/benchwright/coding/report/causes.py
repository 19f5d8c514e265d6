"""The cause of every failed checkpoint of a coding run (`report_parts/failure_causes.py`'s closed
set),
by deterministic rules from its journal record and grading.json, the most telling first:

grading could not run (infrastructure, a killed sandbox) -> environment error; a forged verdict
or a guard that fired -> refused action; the tests' wall clock or the agent's time ran out ->
timeout; the agent stopped at its step or cost limit -> step or cost limit; an empty workspace
-> no answer; a test past its per-test timeout -> timeout; a failing test naming an exception
other than an assertion -> crash (with its type); the agent's own error -> agent error; else
wrong output.
"""

from __future__ import annotations

from pathlib import Path

from benchwright.coding.agents.base import AgentStatus
from benchwright.coding.attempts.models import CheckpointRecord
from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus
from benchwright.coding.report.failures import one_line, read_grading
from benchwright.coding.report.scored_run import ScoredRun
from benchwright.files.nofollow import read_regular
from benchwright.report_parts.failure_causes import (
    FailedUnit,
    FailureCause,
    exception_line,
)

_ENVIRONMENT = {GradeStatus.INFRASTRUCTURE_FAILURE, GradeStatus.MEMORY_LIMIT}
_PER_TEST_TIMEOUT = "from pytest-timeout"
_LIMIT_WORDS = ("step limit", "cost limit", "max-turns", "max_turns", "budget")


MAX_TESTS = 5
"""Failing tests sent to the LLM pass (docs/failure-causes.md)."""
MAX_AGENT_FILE = 1 << 20
"""Bytes read of the end of each agent log file for the LLM pass."""


def run_failures(run_dir: Path) -> list[FailedUnit]:
    """Every checkpoint of the run that failed its pass policy, with its cause by the rules."""
    return [unit for unit, _evaluation, _folder in _failed(run_dir)]


def run_failure_evidence(run_dir: Path, units: list[FailedUnit] | None = None
                         ) -> list[tuple[FailedUnit, str, str]]:
    """Each failed checkpoint (those of `units` when given) with its first failing tests and
    the agent's logs, as text, for the LLM pass."""
    wanted = None if units is None else {u.unit: u for u in units}
    found = []
    for unit, evaluation, folder in _failed(run_dir):
        if wanted is not None and unit.unit not in wanted:
            continue
        failing = [t for t in (evaluation.tests if evaluation else []) if t.failing]
        tests = "\n".join(f"- {t.id} ({t.outcome}): {(t.message or '')[:600]}"
                          for t in failing[:MAX_TESTS])
        found.append((wanted[unit.unit] if wanted else unit, tests, _agent_logs(folder)))
    return found


def _failed(run_dir: Path) -> list[tuple[FailedUnit, CheckpointEvaluation | None, Path]]:
    run = ScoredRun(run_dir)
    found = []
    for (problem, trial), records in run.all_chains.items():
        for record in (r for r in records if not r.passed):
            folder = run.layout.checkpoint_dir(problem, trial, record.checkpoint)
            evaluation = read_grading(folder)
            found.append((checkpoint_failure(record, evaluation), evaluation, folder))
    return found


def _agent_logs(folder: Path) -> str:
    """The agent's trajectory.json, stdout.txt and stderr.txt, read through no link."""
    parts = []
    for name in ("trajectory.json", "stdout.txt", "stderr.txt"):
        data = read_regular(folder / "agent", name, limit=MAX_AGENT_FILE, last=True)
        if data:
            parts.append(f"--- {name}\n" + data.decode("utf-8", "replace"))
    return "\n".join(parts)


def checkpoint_failure(record: CheckpointRecord,
                       evaluation: CheckpointEvaluation | None) -> FailedUnit:
    """One failed checkpoint's cause (grading.json None: the record's fields alone)."""
    cause, detail, exc = _cause(record, evaluation)
    return FailedUnit(unit=f"{record.problem}/trial_{record.trial}/{record.checkpoint}",
                      cause=cause, detail=one_line(detail), exception=exc)


Found = tuple[FailureCause, str | None, str | None]


def _cause(record: CheckpointRecord, evaluation: CheckpointEvaluation | None) -> Found:
    grading = _grading_cause(record, evaluation)
    if grading is not None:
        return grading
    agent = record.agent
    if agent.status is AgentStatus.TIMEOUT:
        return FailureCause.TIMEOUT, agent.error or "the agent ran out of time", None
    if _at_limit(agent.error):
        return FailureCause.LIMIT, agent.error, None
    if record.snapshot_files == 0:
        return FailureCause.NO_ANSWER, "the agent left the workspace empty", None
    slow = _timed_out(evaluation)
    if slow is not None:
        return FailureCause.TIMEOUT, slow, None
    crash = _crash(evaluation)
    if crash is not None:
        return crash
    if agent.status is AgentStatus.ERROR:
        return FailureCause.AGENT_ERROR, agent.error, None
    return FailureCause.WRONG_OUTPUT, _first_failure(evaluation), None


def _grading_cause(record: CheckpointRecord, evaluation: CheckpointEvaluation | None
                   ) -> Found | None:
    """Causes grading itself recorded: the environment, a refusal, the tests' wall clock."""
    reason = evaluation.infrastructure_reason if evaluation else None
    if record.grade_status in _ENVIRONMENT or (evaluation and evaluation.sandbox_killed_by):
        return FailureCause.ENVIRONMENT, reason or str(record.grade_status), None
    if record.grade_status is GradeStatus.TAMPERED:
        return (FailureCause.REFUSED, (evaluation.tampering_reason if evaluation else None)
                or "the verdict was forged", None)
    if record.rules_fired:
        return FailureCause.REFUSED, "rule " + ", ".join(map(str, record.rules_fired)), None
    if record.grade_status is GradeStatus.WALL_CLOCK_TIMEOUT:
        return FailureCause.TIMEOUT, "the tests ran past the wall-clock limit", None
    return None


def _at_limit(error: str | None) -> bool:
    return error is not None and any(word in error.lower() for word in _LIMIT_WORDS)


def _timed_out(evaluation: CheckpointEvaluation | None) -> str | None:
    """A failing test that ran past the problem's per-test timeout (pytest-timeout's message)."""
    for test in (t for t in (evaluation.tests if evaluation else []) if t.failing):
        if test.message and _PER_TEST_TIMEOUT in test.message:
            return f"{test.id}: {one_line(test.message)}"
    return None


def _crash(evaluation: CheckpointEvaluation | None) -> Found | None:
    """A failing test whose message names an exception other than an assertion."""
    for test in (t for t in (evaluation.tests if evaluation else []) if t.failing):
        found = exception_line(test.message)
        if found is not None:
            return FailureCause.CRASH, f"{test.id}: {found[1]}", found[0]
    return None


def _first_failure(evaluation: CheckpointEvaluation | None) -> str | None:
    failing = [t for t in (evaluation.tests if evaluation else []) if t.failing]
    if not failing:
        return None
    return f"{failing[0].id}: {one_line(failing[0].message) or failing[0].outcome}"
