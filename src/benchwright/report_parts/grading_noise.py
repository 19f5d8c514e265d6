"""The grader's own noise, measured (`benchwright eval RUN --repeat N`): every unit (a coding
checkpoint or a web attempt) graded N more times, the verdicts it got each time, the tests (or
web evaluators) whose outcome did not hold, and the run's score each time. Saved beside the run
as grading_noise.json; both reports and the viewer read it.

The harness's noise is the spread of the run's score over the gradings of the same saved work
(the agent did nothing new); the report puts it beside the agent's spread across trials, so a
reader sees how much of a difference the grading alone could make.
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean, pstdev
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, computed_field

from benchwright.files.atomic import write_json_atomic
from benchwright.files.nofollow import read_regular

NOISE_FILE = "grading_noise.json"
"""In the run folder."""


class UnitVerdicts(BaseModel):
    """One unit's verdict at each grading: the saved one first, then each repeat."""

    unit: str
    """`problem/trial_N/checkpoint`, or `task 9001 trial 1`."""
    verdicts: list[bool]
    """Passed at each grading (index 0: the verdict saved before `--repeat`)."""

    @property
    def changed(self) -> bool:
        """Not the same verdict every time."""
        return len(set(self.verdicts)) > 1


class FlakyTest(BaseModel):
    """A test (a web evaluator) that passed in some gradings and failed in others."""

    unit: str
    """Where it ran."""
    test: str
    """The test's id (a web attempt: the evaluator's name)."""
    outcomes: list[bool]
    """Passed at each grading, as `UnitVerdicts.verdicts`."""


class GradingNoise(BaseModel):
    """What `eval --repeat N` measured (file grading_noise.json)."""

    format: Literal["benchwright.grading-noise/1"] = "benchwright.grading-noise/1"
    """The file's format and version."""
    repeats: int
    """Gradings added to the saved one."""
    n_units: int
    """Units graded."""
    changed: list[UnitVerdicts] = Field(default_factory=list)
    """Every unit whose verdict changed between gradings."""
    flaky_tests: list[FlakyTest] = Field(default_factory=list)
    """Every test whose outcome changed between gradings."""
    rates: list[float] = Field(default_factory=list)
    """The run's pass rate over units at each grading (saved first)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changed_share(self) -> float | None:
        """Share of units whose verdict changed (None: no units)."""
        return len(self.changed) / self.n_units if self.n_units else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rate_std(self) -> float | None:
        """Population std of the run's pass rate across gradings: the harness's noise."""
        return pstdev(self.rates) if len(self.rates) > 1 else None


def measure(verdicts: dict[str, list[bool]], tests: dict[str, dict[str, list[bool]]],
            repeats: int) -> GradingNoise:
    """The noise of `verdicts` (unit -> verdict per grading) and `tests` (unit -> test ->
    outcome per grading; a test missing from a grading is left out of it)."""
    units = sorted(verdicts)
    rows = [UnitVerdicts(unit=u, verdicts=verdicts[u]) for u in units]
    flaky = [FlakyTest(unit=u, test=t, outcomes=o) for u in units
             for t, o in sorted(tests.get(u, {}).items()) if len(set(o)) > 1]
    gradings = max((len(v) for v in verdicts.values()), default=0)
    rates = [mean(float(v[i]) for v in verdicts.values() if len(v) > i) for i in range(gradings)]
    return GradingNoise(repeats=repeats, n_units=len(units), rates=rates, flaky_tests=flaky,
                        changed=[r for r in rows if r.changed])


def save_noise(run_dir: Path, noise: GradingNoise) -> None:
    """grading_noise.json in the run folder (replacing an older measurement)."""
    write_json_atomic(run_dir / NOISE_FILE, noise.model_dump(mode="json"))


def read_noise(run_dir: Path) -> GradingNoise | None:
    """The run's grading_noise.json, or None when it was never measured (or is unreadable)."""
    data = read_regular(run_dir, NOISE_FILE, limit=64 << 20)  # never through a link
    if data is None:
        return None
    try:
        return GradingNoise.model_validate_json(data)
    except (ValueError, ValidationError):
        return None


def noise_lines(noise: GradingNoise | None, agent_spread: float | None, unit: str, *,
                with_agent: bool = True) -> list[str]:
    """The report's section: flaky tests, changed verdicts, the harness's noise beside the
    agent's spread across trials (`agent_spread` None: one trial, unknown; `with_agent`
    False: that row left out, for `eval`'s output, which has no report at hand)."""
    if noise is None:
        return []
    out = ["## Grading noise", "",
           f"Every {unit} graded {noise.repeats} more time(s) by `eval --repeat` "
           f"({noise.n_units} {unit}s, {noise.repeats + 1} gradings each).", "",
           "| figure | value |", "|---|---|",
           f"| {unit}s whose verdict changed | {len(noise.changed)} of {noise.n_units} |",
           f"| flaky tests | {len(noise.flaky_tests)} |",
           f"| pass rate at each grading | {', '.join(f'{100 * r:.1f}%' for r in noise.rates)} |",
           f"| harness noise (std of the pass rate across gradings) | {_pts(noise.rate_std)} |",
           *([f"| agent spread (std of the pass rate across trials) | {_pts(agent_spread)} |"]
             if with_agent else []), ""]
    out += [f"- flaky: `{t.test}` in {t.unit}: {_marks(t.outcomes)}" for t in noise.flaky_tests]
    out += [f"- verdict changed: {c.unit}: {_marks(c.verdicts)}" for c in noise.changed]
    return [*out, ""] if noise.flaky_tests or noise.changed else out


def _pts(value: float | None) -> str:
    return "unknown" if value is None else f"{100 * value:.1f} points"


def _marks(outcomes: list[bool]) -> str:
    return " ".join("pass" if o else "fail" for o in outcomes)
