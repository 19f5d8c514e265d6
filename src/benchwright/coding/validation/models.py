"""The result of `problems validate` (versioned): per problem, per checkpoint, runs and findings."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.coding.problems.source import ProblemSource

VALIDATE_FORMAT = "benchwright.problems-validate/1"


class FindingKind(StrEnum):
    """What can be wrong with a checkpoint's grader (a closed set)."""

    NO_REFERENCE = "no_reference"
    """There is no `solutions/<checkpoint>` to grade."""
    INFRASTRUCTURE = "infrastructure"
    """Grading the reference did not complete (collection error, timeout, ...)."""
    REFERENCE_FAILS = "reference_fails"
    """A test fails in every run: the reference solution fails its own test."""
    FLAKY = "flaky"
    """A test's outcome differs between runs."""
    NEAR_TIMEOUT = "near_timeout"
    """A test's slowest run took at least half of the per-test timeout."""
    MISSING_DATA = "missing_data"
    """The tests open a file that is not there; or (a finding of the problem, not of a
    checkpoint) the problem folder lacks data files: Git LFS pointers never fetched, static
    assets or files git lists that are absent. Such a problem is not graded."""
    MISSING_PROGRAM = "missing_program"
    """The tests run a program the sandbox does not have (e.g. `cargo`, `node`)."""
    NETWORK = "network"
    """The tests (or the reference) need the network."""
    PLACEHOLDER = "placeholder"
    """The rendered spec still holds a `{{ ... }}` or `%%%...%%%` placeholder."""
    TESTS_VISIBLE_EARLY = "tests_visible_early"
    """This checkpoint's tests can be read by the agent at an earlier checkpoint."""
    REQUIREMENTS = "requirements"
    """The reference's requirements.txt does not install."""
    UNJAILED = "unjailed"
    """The tests import the submission into pytest's own process, where the jail (the nested
    sandbox of every process started from the entry point) cannot hold it."""


class Finding(BaseModel):
    """One problem with a checkpoint's grader."""

    kind: FindingKind
    """What is wrong."""
    test: str | None = None
    """The test concerned, when there is one."""
    detail: str
    """What was seen: messages, file names, runs."""


class RunVerdict(BaseModel):
    """The reference graded once."""

    condition: str
    """What the run varied."""
    status: str
    """The grading status (`completed`, `infrastructure_failure`, ...)."""
    core_passed: bool
    """Every Core test passed."""
    all_passed: bool
    """Every test passed."""
    passed: int
    """Tests passed."""
    total: int
    """Tests counted: those collected, less any the problem set's grading leaves out
    (`GradingSemantics`)."""
    duration_s: float
    """Seconds pytest ran."""


class CheckpointReport(BaseModel):
    """The runs and findings of one checkpoint."""

    checkpoint: str
    """Its name."""
    runs: list[RunVerdict] = Field(default_factory=list)
    """One per repetition, in order."""
    findings: list[Finding] = Field(default_factory=list)
    """What is wrong; empty when the checkpoint validates clean."""


class ProblemReport(BaseModel):
    """One problem folder's checkpoints."""

    problem: str
    """The problem's name."""
    path: str
    """Its folder."""
    checkpoints: list[CheckpointReport] = Field(default_factory=list)
    """In run order (none graded when the problem has findings of its own)."""
    findings: list[Finding] = Field(default_factory=list)
    """What is wrong with the problem as a whole (data files missing)."""
    source: ProblemSource | None = None
    """Where the folder came from: git origin and commit, content hash."""


class ValidationReport(BaseModel):
    """`problems validate --json`."""

    format: Literal["benchwright.problems-validate/1"] = "benchwright.problems-validate/1"
    """The document's format and version."""
    repeat: int
    """Runs per checkpoint."""
    problems: list[ProblemReport] = Field(default_factory=list)
    """Every problem validated."""

    @property
    def clean(self) -> bool:
        """No finding anywhere."""
        return not any(p.findings or any(c.findings for c in p.checkpoints)
                       for p in self.problems)
