"""Result files of grading one checkpoint: ours (versioned, rich) and SCBench's evaluation.json."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchwright.coding.grading.policies import GroupCount, PassPolicy
from benchwright.coding.problems.config import Group
from benchwright.coding.problems.semantics import GradingSemantics
from benchwright.sandbox.bwrap import Limits

GRADING_FORMAT = "benchwright.grading/1"
SCBENCH_SCHEMA_VERSION = 1

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]


class GradeStatus(StrEnum):
    """How grading itself went (not whether the submission passed)."""

    COMPLETED = "completed"
    """pytest ran the tests; the counts are meaningful."""
    INFRASTRUCTURE_FAILURE = "infrastructure_failure"
    """pytest could not run the tests (exit code 2-5, or nothing collected)."""
    WALL_CLOCK_TIMEOUT = "wall_clock_timeout"
    """The whole checkpoint ran past its wall-clock limit and was killed."""
    MEMORY_LIMIT = "memory_limit"
    """The sandbox's memory limit was reached and the kernel killed pytest (or what it needed)."""
    TAMPERED = "tampered"
    """What pytest reported over the harness's channel disagrees with its exit status or its
    report file, or never arrived: the code under test interfered, and the checkpoint fails."""


class GradingRule(StrEnum):
    """A guard of the grader that fired on a checkpoint (docs/security.md, "The grader's trusted
    base"): each one changes the verdict, and the record says so."""

    NOT_RUN = "not_run"
    """A test the checkpoint has (collected apart from the submission) did not run as the
    problem says: missing, deselected, or skipped by anything but the problem's own code; it
    counts as failed."""
    LINK_REFUSED = "link_refused"
    """A link the submission made was not followed outside the jail (the test got ELOOP)."""
    CAP_EXCEEDED = "cap_exceeded"
    """The submission wrote more bytes or files than the attempt's cap allows."""
    IMPORTED_SUBMISSION = "imported_submission"
    """The tests imported or executed a file of the submission inside pytest: an error of the
    problem, never a pass."""


class RuleFired(BaseModel):
    """One guard that fired, and on what."""

    rule: GradingRule
    """Which guard."""
    detail: str
    """What it saw, in one sentence (a test id, a path, a count and the cap)."""
    items: list[str] = Field(default_factory=list)
    """What it applied to (test ids, paths), first ones only."""


class TestCase(BaseModel):
    """One collected test item and its outcome."""

    id: str
    """The pytest node id without its file, as SCBench names tests."""
    file: str
    """The test file, relative to the workspace."""
    checkpoint: str
    """The checkpoint whose test file holds it."""
    group: Group
    """Its group, by SCBench's rules."""
    outcome: Outcome
    """pytest's outcome."""
    duration_s: float = 0.0
    """Setup, call and teardown time."""
    message: str | None = None
    """The failure's short message, when it failed."""
    counted: bool = True
    """False when the problem set's grading leaves the test out of the counts (SCBench's v1.0
    grading: a skipped or xfailed test); it then neither passes nor fails."""

    @property
    def passed(self) -> bool:
        """Only passed and xpassed count as passed."""
        return self.outcome in ("passed", "xpassed")

    @property
    def failing(self) -> bool:
        """Counted and not passed: what the counts take as a failure."""
        return self.counted and not self.passed


class EnvInfo(BaseModel):
    """An environment used for grading."""

    key: str
    """Its content hash."""
    python_version: str
    """Its interpreter's version."""
    packages: list[str]
    """What was installed, pinned."""
    reused: bool
    """Whether it came from the cache."""
    error: str | None = None
    """Why installing the requirements failed, when it did (the solution then runs without them)."""


class GraderInfo(BaseModel):
    """Everything needed to re-derive the verdict: who graded, with what."""

    benchwright_version: str
    """The grader's version."""
    runtime: str
    """`bwrap`, or `unsafe-local` when the sandbox was switched off."""
    limits: Limits
    """The sandbox's limits."""
    entrypoint: str
    """The command the tests ran the submission with."""
    jailed: bool = False
    """Whether every process the tests started from the entry point ran in a nested sandbox
    of its own, away from the tests folder (`benchwright.coding.grading.jail`)."""
    pytest_args: list[str]
    """The arguments pytest got."""
    test_env: EnvInfo
    """The environment pytest ran in."""
    solution_env: EnvInfo
    """The environment the submission ran in."""


class OutputCut(BaseModel):
    """What the harness cut of what the grading sandbox sent (the caps are in `grader.limits`)."""

    stdout_bytes: int = 0
    """Bytes of pytest's standard output streamed past (`max_output_mb`; the head and the tail
    are kept)."""
    stderr_bytes: int = 0
    """The same for its standard error."""
    messages: int = 0
    """Texts of the test report (assertion messages, tracebacks) cut to `max_message_kb`."""
    message_characters: int = 0
    """Characters those cuts took out."""
    verdict_bytes: int = 0
    """Bytes of the verdict channel past `max_report_mb` (grading then fails as infrastructure)."""


class CheckpointEvaluation(BaseModel):
    """benchwright's own record of grading one checkpoint (file `grading.json`)."""

    format: Literal["benchwright.grading/1"] = "benchwright.grading/1"
    """The file's format and version."""
    problem: str
    """The problem's name."""
    problem_version: int
    """The problem's version."""
    checkpoint: str
    """The checkpoint graded."""
    checkpoint_version: int
    """The checkpoint's version."""
    status: GradeStatus
    """How grading went."""
    infrastructure_reason: str | None = None
    """Why grading could not run the tests, naming the file at fault where known."""
    memory_exceeded: bool = False
    """The sandbox's memory limit killed a process of the tests or the submission (a test that
    failed for it says so only here; pytest itself killed makes the reason say so)."""
    output_cut: OutputCut = Field(default_factory=OutputCut)
    """What was cut of pytest's output and report to keep the harness bounded (all 0: nothing)."""
    sandbox_killed_by: int | None = None
    """The signal that killed the grading sandbox from outside (the OOM killer, an operator):
    an infrastructure error, left out of scores; a run redoes the checkpoint on `--resume`."""
    tampering_reason: str | None = None
    """When the status is `tampered`: what disagreed (the tests' outcomes are pytest's own)."""
    rules_fired: list[RuleFired] = Field(default_factory=list)
    """The grader's guards that fired on this checkpoint (empty: none), each with what it saw."""
    pytest_exit_code: int
    """pytest's exit status (negative when killed by a signal)."""
    pytest_collected: int
    """Items pytest reported collecting."""
    semantics: GradingSemantics = GradingSemantics.SCBENCH_RUNNER
    """Whose rules the counts follow (`benchwright.coding.problems.semantics`): SCBench's
    runner's, or its v1.0 grading's, which leaves skipped and xfailed tests out."""
    counts: dict[Group, GroupCount] = Field(default_factory=dict)
    """Passed and total per group (tests left out by `semantics` are in neither); groups with
    no counted tests are left out."""
    verdicts: dict[PassPolicy, bool] = Field(default_factory=dict)
    """Each pass policy's verdict."""
    tests: list[TestCase] = Field(default_factory=list)
    """Every collected item, in run order."""
    duration_s: float
    """Seconds pytest ran."""
    total_duration_s: float
    """Seconds for the whole grading, environments included."""
    grader: GraderInfo
    """What graded it."""

    @property
    def infrastructure_failure(self) -> bool:
        """Whether grading failed for reasons other than the submission's tests."""
        return self.status is not GradeStatus.COMPLETED

    def to_scbench(self) -> dict[str, Any]:
        """The same result in SCBench's evaluation.json shape (schema_version 1)."""
        grouped: dict[str, dict[str, list[str]]] = {}
        for test in (t for t in self.tests if t.counted):
            bucket = grouped.setdefault(f"{test.checkpoint}-{test.group}", {"passed": [],
                                                                            "failed": []})
            bucket["passed" if test.passed else "failed"].append(test.id)
        return {
            "schema_version": SCBENCH_SCHEMA_VERSION,
            "problem_name": self.problem,
            "problem_version": self.problem_version,
            "checkpoint_name": self.checkpoint,
            "checkpoint_version": self.checkpoint_version,
            "duration": self.duration_s,
            "entrypoint": self.grader.entrypoint,
            "tests": grouped,
            "pass_counts": {str(g): c.passed for g, c in self.counts.items() if c.passed},
            "total_counts": {str(g): c.total for g, c in self.counts.items()},
            "pytest_exit_code": self.pytest_exit_code,
            "pytest_collected": self.pytest_collected,
            "infrastructure_failure": self.infrastructure_failure,
        }
