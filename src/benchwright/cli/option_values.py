"""The choices and defaults the commands' options show in `--help`, written out here so that
`--help` and a bad option import no track: the modules that own them define pydantic models
too, and importing those costs more than the rest of a command's start-up
(bench/cli_startup.py). tests/cli/test_startup.py checks each copy against its owner; the
commands hand the values on as strings, which the Python API takes as its enums.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, NamedTuple


class ThinkingChoice(StrEnum):
    """`--thinking`: `coding.agents.settings.Thinking`'s values."""

    NONE = "none"
    DISABLED = "disabled"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class PassPolicyChoice(StrEnum):
    """`--pass-policy`: `coding.grading.policies.PassPolicy`'s values."""

    CORE_CASES = "core-cases"
    ALL_NON_ERROR_CASES = "all-non-error-cases"
    ALL_CASES = "all-cases"
    ANY_CORE_CASES = "any-core-cases"
    ANY_CASE = "any-case"
    ANY = "any"


class StartFromChoice(StrEnum):
    """`--start-from`: `coding.runs.models.StartFrom`'s values."""

    CHAIN = "chain"
    REFERENCE = "reference"


class TrialChoice(StrEnum):
    """`web package --trial`: `web.submission.package.TrialChoice`'s values."""

    FIRST = "first"
    BEST = "best"


class SubsetChoice(StrEnum):
    """`web tasks list --subset`: `web.evaluation.tasks.Subset`'s values."""

    HARD = "hard"
    NON_HARD = "non-hard"


class ExecutorDefaults(NamedTuple):
    """`protocols.EXECUTOR_DEFAULTS`' values the options show."""

    address: str
    """`--ray-address`."""
    job_cpus: float
    """`--job-cpus`."""
    job_memory_mb: int
    """`--job-memory-mb`."""


EXECUTOR_DEFAULTS = ExecutorDefaults(address="auto", job_cpus=1.0, job_memory_mb=2048)
MAX_SNAPSHOT_MB = 1024
"""`coding.runs.snapshots.DEFAULT_MAX_SNAPSHOT_MB`."""
MAX_SNAPSHOT_FILES = 100_000
"""`coding.runs.snapshots.DEFAULT_MAX_SNAPSHOT_FILES`."""


LOCAL_SUITE = "local"
"""`run web --suite`'s default: `web.runs.suites.LOCAL`."""
STRUCTURED_PROMPT = "structured"
"""`run web --prompt`'s default: `web.browser.prompts.STRUCTURED`."""
ProblemKind = Literal["cli", "http"]
"""`problems new --kind`: `coding.problems.scaffold.Kind`."""
WEBARENA_SUITE = "webarena-verified"
"""`web tasks list --suite`'s default: `web.runs.suites.WEBARENA`."""
JudgeProtocol = Literal["openai", "anthropic"]
"""`--protocol` of `metrics judge` and `metrics causes`: `judge.models.Protocol`."""
MAX_JUDGE_SAMPLES = 20
"""`metrics judge --samples`' bound: `judge.models.MAX_SAMPLES`."""


def plain(value: object) -> object:
    """A choice as the Python API takes it (its string); any other value as it is."""
    return value.value if isinstance(value, StrEnum) else value
