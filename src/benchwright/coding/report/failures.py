"""Why things failed: the failing tests of a graded checkpoint, and the checkpoint (and reason)
that ended each attempt of a coding run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from benchwright.coding.agents.base import AgentStatus
from benchwright.coding.attempts.models import CheckpointRecord, InfraErrorRecord, RunResult
from benchwright.coding.grading.artifacts import GRADING_JSON
from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus, RuleFired
from benchwright.coding.problems.config import Group

MAX_LISTED = 10
"""Failing tests listed by name; the rest are counted."""
MAX_MESSAGE = 200
"""Characters kept of a failure's first line."""
STDOUT = Path("evaluation") / "stdout.txt"
"""pytest's full output, relative to a graded checkpoint's folder."""

EndReason = Literal["tests", "agent error", "agent timeout", "infrastructure error",
                    "grading timeout", "tampering", "memory limit", "not finished"]


class FailingTest(BaseModel):
    """A test that did not pass."""

    group: Group
    """Its group."""
    name: str
    """Its pytest id (file left out, as SCBench names tests)."""
    outcome: str
    """failed, error, skipped or xfailed."""
    message: str | None = None
    """The first line of its failure message, shortened."""


class FailingTests(BaseModel):
    """The first failing tests of a checkpoint and how many there are."""

    listed: list[FailingTest] = Field(default_factory=list)
    """The first MAX_LISTED, by group (Core first), in run order within a group."""
    n_failing: int = 0
    """All tests that did not pass."""
    output: Path | None = None
    """pytest's full output."""
    rules_fired: list[RuleFired] = Field(default_factory=list)
    """The grader's guards that fired on the checkpoint (`CheckpointEvaluation.rules_fired`)."""


class AttemptFailure(BaseModel):
    """The checkpoint that ended an attempt, and why."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    checkpoint: str
    """The checkpoint where it ended."""
    reason: EndReason
    """tests (the pass policy failed), agent error, agent timeout, infrastructure error
    (provider or grading), grading timeout, or not finished (broken off)."""
    detail: str | None = None
    """The error's text, when there is one."""
    tests: FailingTests = Field(default_factory=FailingTests)
    """The failing tests of that checkpoint, when it was graded."""
    ended: bool = True
    """The attempt ended there; False for a checkpoint of a reference-start attempt, which
    goes on past a failure."""


def one_line(text: str | None, limit: int = MAX_MESSAGE) -> str | None:
    """The first non-empty line, printable characters only, at most `limit` long."""
    if not text:
        return None
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = "".join(ch if ch.isprintable() else "?" for ch in line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


TRACE_FILE = re.compile(
    r'File "(?:[^"]*/grade-[^/"]+/(?:workspace/)?|[^"]*/workspace/)?([^"]*)", line (\d+)')
"""A traceback's location; the grading scratch folder's path left out of it (the workspace's
files from the workspace on, the tests beside it from `.evaluation_tests/` on)."""
ERROR_LINE = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::|$)")


def error_line(text: str | None, limit: int = MAX_MESSAGE) -> str | None:
    """A failure's first line; when it names a place in a traceback (`File "x.py", line 2`,
    as a syntax error does), the code line and the error that follow it are kept with it."""
    first = one_line(text, limit=10 * limit)
    if not text or first is None or TRACE_FILE.search(first) is None:
        return one_line(text, limit)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][1:]
    at = next((i for i, ln in enumerate(lines) if ERROR_LINE.match(ln)), None)
    if at is None:
        return one_line(TRACE_FILE.sub(r'File "\1", line \2', first), limit)
    code = [ln for ln in lines[:at] if set(ln) != {"^"} and not ln.startswith("File ")][-1:]
    whole = " ".join([TRACE_FILE.sub(r'File "\1", line \2', first) + ":", *code, lines[at]])
    return one_line(" ".join(whole.split()), limit)


def failing_tests(evaluation: CheckpointEvaluation, out_dir: Path | None = None,
                  limit: int = MAX_LISTED) -> FailingTests:
    """The tests that did not pass (passed and xpassed count as passed, as in SCBench)."""
    order = {g: i for i, g in enumerate(Group)}  # Core's failures first, Regression's last
    failing = sorted((t for t in evaluation.tests if t.failing), key=lambda t: order[t.group])
    listed = [FailingTest(group=t.group, name=one_line(t.id) or "?", outcome=t.outcome,
                          message=error_line(t.message)) for t in failing[:limit]]
    return FailingTests(listed=listed, n_failing=len(failing),
                        output=out_dir / STDOUT if out_dir is not None else None,
                        rules_fired=evaluation.rules_fired)


def rule_line(rule: RuleFired, limit: int = 3) -> str:
    """One fired rule in a line: `rule not_run: what it saw (first items)`, printable only."""
    items = ", ".join(one_line(i, MAX_MESSAGE // 2) or "?" for i in rule.items[:limit])
    more = f", +{len(rule.items) - limit} more" if len(rule.items) > limit else ""
    shown = f" ({items}{more})" if items else ""
    return f"rule {rule.rule}: {one_line(rule.detail, 2 * MAX_MESSAGE) or '-'}{shown}"


class CheckpointRules(BaseModel):
    """The grading rules that fired on one checkpoint of a run."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    checkpoint: str
    """The checkpoint."""
    passed: bool
    """Whether it passed the run's pass policy all the same."""
    rules_fired: list[RuleFired]
    """What fired, with what each saw (grading.json's; the journal's names when it is gone)."""


def rules_fired_on(problem: str, trial: int, chain_dir: Path,
                   records: list[CheckpointRecord]) -> list[CheckpointRules]:
    """Every checkpoint of an attempt on which a grading rule fired; only their grading.json
    files are read."""
    found = []
    for record in (r for r in records if r.rules_fired):
        evaluation = read_grading(chain_dir / record.checkpoint)
        fired = evaluation.rules_fired if evaluation else [
            RuleFired(rule=rule, detail="(grading.json unreadable)") for rule in record.rules_fired]
        found.append(CheckpointRules(problem=problem, trial=trial, checkpoint=record.checkpoint,
                                     passed=record.passed, rules_fired=fired))
    return found


def read_grading(checkpoint_dir: Path) -> CheckpointEvaluation | None:
    """A checkpoint's grading.json, or None when it is missing or unreadable."""
    try:
        return CheckpointEvaluation.model_validate_json(
            (checkpoint_dir / GRADING_JSON).read_bytes())
    except (OSError, ValidationError):
        return None


def attempt_failure(problem: str, trial: int, chain_dir: Path, records: list[CheckpointRecord],
                    infra: InfraErrorRecord | None, checkpoints: list[str],
                    broken: str | None = None, *,
                    stops_at_failure: bool = True) -> AttemptFailure | None:
    """Why an attempt ended early; None when it went through every checkpoint (`checkpoints`:
    those it could attempt). `stops_at_failure` False: a reference start, which goes on."""
    if infra is not None:
        return AttemptFailure(problem=problem, trial=trial, checkpoint=infra.checkpoint,
                              reason="infrastructure error",
                              detail=one_line(infra.grader_error or infra.agent.error)
                              or "the model provider failed")
    if stops_at_failure and records and not records[-1].passed:
        return _failed_checkpoint(problem, trial, chain_dir, records[-1])
    if len(records) < len(checkpoints):
        return AttemptFailure(problem=problem, trial=trial, checkpoint=checkpoints[len(records)],
                              reason="not finished", detail=one_line(broken) or
                              "the attempt broke off or is still running")
    return None


def checkpoint_failures(problem: str, trial: int, chain_dir: Path,
                        records: list[CheckpointRecord]) -> list[AttemptFailure]:
    """Every checkpoint that failed the pass policy in an attempt that went on past it (a
    reference start), and why."""
    return [_failed_checkpoint(problem, trial, chain_dir, r).model_copy(update={"ended": False})
            for r in records if not r.passed]


def attempt_errors(result_json: Path) -> dict[tuple[str, int], str]:
    """(problem, trial) -> why the attempt could not go on, from result.json's `errors`
    (written as `problem/trial_N: message`); empty when there is no readable result.json."""
    try:
        errors = RunResult.model_validate_json(result_json.read_bytes()).errors
    except (OSError, ValidationError):
        return {}
    found: dict[tuple[str, int], str] = {}
    for line in errors:
        key, _sep, message = line.partition(": ")
        problem, _slash, trial = key.rpartition("/trial_")
        if trial.isdigit():
            found[(problem, int(trial))] = message
    return found


def _failed_checkpoint(problem: str, trial: int, chain_dir: Path,
                       record: CheckpointRecord) -> AttemptFailure:
    folder = chain_dir / record.checkpoint
    evaluation = read_grading(folder)
    reason, detail = _reason(record, evaluation)
    tests = failing_tests(evaluation, folder) if evaluation else FailingTests(
        output=folder / STDOUT)
    return AttemptFailure(problem=problem, trial=trial, checkpoint=record.checkpoint,
                          reason=reason, detail=detail, tests=tests)


def _reason(record: CheckpointRecord,
            evaluation: CheckpointEvaluation | None) -> tuple[EndReason, str | None]:
    """The most telling cause first: grading that could not run, then the agent, then tests."""
    if record.grade_status is GradeStatus.WALL_CLOCK_TIMEOUT:
        return "grading timeout", "the tests ran past the wall-clock limit"
    if record.grade_status is GradeStatus.INFRASTRUCTURE_FAILURE:
        return "infrastructure error", one_line(
            evaluation.infrastructure_reason if evaluation else None) or "pytest could not run"
    if record.grade_status is GradeStatus.TAMPERED:
        return "tampering", one_line(
            evaluation.tampering_reason if evaluation else None) or "the verdict was forged"
    if record.grade_status is GradeStatus.MEMORY_LIMIT:
        return "memory limit", one_line(
            evaluation.infrastructure_reason if evaluation else None) or "pytest was killed"
    if record.agent.status is AgentStatus.TIMEOUT:
        return "agent timeout", one_line(record.agent.error)
    if record.agent.status is AgentStatus.ERROR:
        return "agent error", one_line(record.agent.error)
    if record.snapshot_files == 0:  # graded all the same, as SCBench grades it
        return "tests", "warning: the agent left the workspace empty"
    return "tests", None
