"""Failures sorted by cause, for both tracks: the closed set of causes, one failed unit (a coding
checkpoint or a web attempt) with its cause, and the table the reports and the viewer show
(counts of every cause, a few examples each, and how each count moved against a baseline).

Each track finds the causes of its own units by deterministic rules from what it recorded
(coding/report/causes.py, web/scorecard/causes.py); docs/failure-causes.md lists the rules.
"""

from __future__ import annotations

import re
from collections import Counter
from enum import StrEnum

from pydantic import BaseModel, Field

MAX_EXAMPLES = 3
"""Failed units shown as examples of each cause."""


class FailureCause(StrEnum):
    """Why a unit failed: the closed set both tracks use, the most telling first."""

    ENVIRONMENT = "environment error"
    """Not the agent's doing: grading or scoring could not run (infrastructure, the evaluator,
    the model provider, a file the harness needed)."""
    REFUSED = "refused action"
    """The harness refused something the submission or agent did (a forged verdict, a link out
    of the jail, a write past the cap, tests made to import the submission)."""
    TIMEOUT = "timeout"
    """The agent's time, or the tests' wall clock, ran out."""
    LIMIT = "step or cost limit"
    """The agent used every step or dollar it was allowed without finishing."""
    NO_ANSWER = "no answer"
    """Nothing to grade: an empty workspace, or no final answer."""
    CRASH = "crash"
    """The code under test (or the agent) raised an exception; its type is recorded."""
    AGENT_ERROR = "agent error"
    """The agent broke off for another reason (a non-zero exit, an invalid final response)."""
    WRONG_OUTPUT = "wrong output"
    """It ran and finished, and its output (or answer) was not the expected one."""


CAUSES: list[FailureCause] = list(FailureCause)
"""Every cause, in the order reports list them."""


class FailedUnit(BaseModel):
    """One failed coding checkpoint or web attempt, and its cause."""

    unit: str
    """Which one: `problem/trial_N/checkpoint`, or `task 9001 trial 1`."""
    cause: FailureCause
    """Its cause, by the track's rules."""
    exception: str | None = None
    """The exception type of a crash (`ValueError`), when one was recorded."""
    detail: str | None = None
    """What the rule saw, in one line."""
    refined: bool = False
    """The cause was refined by the LLM pass over the transcript (docs/failure-causes.md)."""


class CauseCount(BaseModel):
    """One cause of the closed set over a run."""

    cause: FailureCause
    """The cause."""
    count: int
    """Failed units with it."""
    baseline: int | None = None
    """The same count in the baseline run (None: no baseline given)."""
    exceptions: dict[str, int] = Field(default_factory=dict)
    """Crashes only: exception type -> count."""
    examples: list[FailedUnit] = Field(default_factory=list)
    """The first few units with this cause."""


class CauseTable(BaseModel):
    """Every failed unit of a run by cause (every cause listed, zero or not)."""

    n_failed: int
    """Failed units."""
    n_baseline_failed: int | None = None
    """Failed units of the baseline (None: no baseline)."""
    rows: list[CauseCount]
    """One row per cause, in CAUSES order."""
    units: list[FailedUnit] = Field(default_factory=list)
    """Every failed unit (the viewer lists them)."""


def cause_table(units: list[FailedUnit],
                baseline: list[FailedUnit] | None = None) -> CauseTable:
    """Counts, examples and exception types by cause; against the baseline's counts if given."""
    before = Counter(u.cause for u in baseline) if baseline is not None else None
    rows = []
    for cause in CAUSES:
        mine = [u for u in units if u.cause is cause]
        exceptions = Counter(u.exception for u in mine if u.exception)
        rows.append(CauseCount(cause=cause, count=len(mine),
                               baseline=None if before is None else before[cause],
                               exceptions=dict(exceptions.most_common()),
                               examples=mine[:MAX_EXAMPLES]))
    return CauseTable(n_failed=len(units), rows=rows, units=units,
                      n_baseline_failed=None if baseline is None else len(baseline))


_EXCEPTION = re.compile(r"(?m)^\s*(?:E\s+)?((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception))"
                        r"(?::|\s*$)")
_NOT_A_CRASH = {"AssertionError", "Failed"}


def exception_type(text: str | None) -> str | None:
    """The last exception type a failure text names other than an assertion (`KeyError`,
    `json.decoder.JSONDecodeError` -> `JSONDecodeError`), or None."""
    found = exception_line(text)
    return found[0] if found else None


def exception_line(text: str | None) -> tuple[str, str] | None:
    """The last exception a failure text names other than an assertion: its type and its
    line (`ValueError: boom`), or None."""
    text = text or ""
    found = [(m.group(1).rsplit(".", 1)[-1], text[m.start(1):].split("\n", 1)[0].strip())
             for m in _EXCEPTION.finditer(text)]
    found = [(name, line) for name, line in found if name not in _NOT_A_CRASH]
    return found[-1] if found else None


def cause_lines(table: CauseTable) -> list[str]:
    """The markdown section: a row per cause, with the baseline's count and examples."""
    if table.n_failed == 0 and not table.n_baseline_failed:
        return ["## Failures by cause", "", "Nothing failed.", ""]
    moved = table.n_baseline_failed is not None
    head = "| cause | failed | baseline | change | examples |" if moved else \
        "| cause | failed | examples |"
    out = ["## Failures by cause", "",
           f"{table.n_failed} failed, each given one cause of the closed set by the rules of "
           "docs/failure-causes.md.", "", head, "|---" * (5 if moved else 3) + "|"]
    for row in table.rows:
        examples = "; ".join(_example(u) for u in row.examples) or "-"
        cause = str(row.cause) + _exceptions(row.exceptions)
        if moved:
            change = row.count - (row.baseline or 0)
            out.append(f"| {cause} | {row.count} | {row.baseline} | {change:+d} | {examples} |")
        else:
            out.append(f"| {cause} | {row.count} | {examples} |")
    return [*out, ""]


def _exceptions(counts: dict[str, int]) -> str:
    return f" ({', '.join(f'{k} x{v}' for k, v in counts.items())})" if counts else ""


def _example(unit: FailedUnit) -> str:
    detail = f": {unit.detail}" if unit.detail else ""
    text = f"{unit.unit}{detail}"
    text = text if len(text) <= 120 else text[:119] + "…"
    return text.replace("|", "\\|").replace("\n", " ")
