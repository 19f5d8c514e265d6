"""Per-problem tallies of a coding run: what its solve rates are made of.

A tally counts, over one problem's scored attempts (those stopped by the provider left out),
the checkpoints solved, iso-solved and core-solved, the checkpoints planned, and the attempts
solved and partial. The report's solve rates (`coding/report/figures.py`) are ratios of these
sums with problems as clusters, and the viewer's overview reads the same tallies, so both show
the same figures. `read_run_digest` gets them fast from the journals alone (a brief read of
each record), with the few other figures a list of many runs needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from benchwright.coding.runs.journal import read_infra_error
from benchwright.coding.runs.layout import RunLayout
from benchwright.coding.runs.models import Manifest
from benchwright.runs.journal import read_jsonl


class Outcome(Protocol):
    """What a tally reads of a checkpoint record (a full record or a brief one)."""

    @property
    def solved(self) -> bool: ...
    @property
    def iso_solved(self) -> bool: ...
    @property
    def core_solved(self) -> bool: ...


class ProblemTally(BaseModel):
    """One problem's counts over its scored attempts."""

    problem: str
    """The problem."""
    checkpoints: int
    """Checkpoints the problem has."""
    attempts: int
    """Scored attempts (trials not stopped by the provider)."""
    solved: int
    """Checkpoints solved, over those attempts."""
    iso_solved: int
    """Checkpoints iso-solved."""
    core_solved: int
    """Checkpoints core-solved."""
    attempts_solved: int
    """Attempts with every checkpoint solved."""
    attempts_partial: int
    """Attempts with some checkpoint solved, but not all."""

    @property
    def planned(self) -> int:
        """Checkpoints of the scored attempts (a checkpoint never reached counts as unsolved)."""
        return self.checkpoints * self.attempts


def tally(problem: str, checkpoints: int, chains: Sequence[Sequence[Outcome]]) -> ProblemTally:
    """The tally of one problem from the records of its scored attempts."""
    full = [len(c) == checkpoints and all(r.solved for r in c) for c in chains]
    return ProblemTally(
        problem=problem, checkpoints=checkpoints, attempts=len(chains),
        solved=sum(r.solved for c in chains for r in c),
        iso_solved=sum(r.iso_solved for c in chains for r in c),
        core_solved=sum(r.core_solved for c in chains for r in c),
        attempts_solved=sum(full),
        attempts_partial=sum(not f and any(r.solved for r in c)
                             for f, c in zip(full, chains, strict=True)))


class _Usage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class _Agent(BaseModel):
    model_config = ConfigDict(extra="ignore")
    usage: _Usage = Field(default_factory=_Usage)
    duration_s: float = 0.0


class _Quality(BaseModel):
    model_config = ConfigDict(extra="ignore")
    values: dict[str, float] = Field(default_factory=dict)


class BriefRecord(BaseModel):
    """The fields of a checkpoint record a digest reads (the rest is skipped, not validated)."""

    model_config = ConfigDict(extra="ignore")

    index: int
    """The checkpoint's position."""
    solved: bool
    """Every test passed."""
    iso_solved: bool
    """Every test of its own passed."""
    core_solved: bool
    """Every Core test passed."""
    agent: _Agent = Field(default_factory=_Agent)
    """What the agent spent."""
    grade_duration_s: float = 0.0
    """Seconds of grading."""
    quality: _Quality | None = None
    """Code quality, when measured."""
    finished_at: str = ""
    """When it was journaled."""


class RunDigest(BaseModel):
    """What a list or overview of many coding runs shows of one run, read from its journals."""

    tallies: list[ProblemTally]
    """Per problem with at least one scored attempt, in the run's order."""
    done: int
    """Checkpoints journaled (every attempt)."""
    planned: int
    """Checkpoints of every attempt of the run (problems x trials x checkpoints)."""
    infra_attempts: int
    """Attempts stopped by the provider (left out of the tallies)."""
    cost_usd: float
    """Model cost over journaled checkpoints."""
    tokens: int
    """Input plus output tokens over journaled checkpoints."""
    agent_time_s: float
    """Seconds of agent turns over journaled checkpoints."""
    grading_time_s: float
    """Seconds of grading."""
    quality_means: dict[str, float]
    """Mean of each code-quality figure over the scored checkpoints that have it (the report's
    run-level quality values: erosion, verbosity, ...)."""
    last_finished: str | None
    """The latest record's time."""


def read_run_digest(run_dir: Path, manifest: Manifest) -> RunDigest:
    """The digest of a run from its journals (a record torn by a kill ends its journal)."""
    layout, config = RunLayout(run_dir), manifest.config
    tallies, scored, everything, infra = [], [], [], 0
    for problem in config.problems:
        size = len(manifest.problem_checkpoints.get(problem, []))
        chains = []
        for trial in range(1, config.trials + 1):
            records = read_jsonl(layout.journal(problem, trial), BriefRecord)
            everything += records
            if read_infra_error(layout.infra_error(problem, trial)) is not None:
                infra += 1
            else:
                chains.append(records)
        if chains:
            tallies.append(tally(problem, size, chains))
            scored += [r for c in chains for r in c]
    return _digest(manifest, tallies, scored, everything, infra)


def _digest(manifest: Manifest, tallies: list[ProblemTally], scored: list[BriefRecord],
            everything: list[BriefRecord], infra: int) -> RunDigest:
    sizes = manifest.problem_checkpoints
    planned = sum(len(sizes.get(p, [])) for p in manifest.config.problems) * manifest.config.trials
    return RunDigest(
        tallies=tallies, done=len(everything), planned=planned, infra_attempts=infra,
        cost_usd=sum(r.agent.usage.cost_usd for r in everything),
        tokens=sum(r.agent.usage.input_tokens + r.agent.usage.output_tokens for r in everything),
        agent_time_s=sum(r.agent.duration_s for r in everything),
        grading_time_s=sum(r.grade_duration_s for r in everything),
        quality_means=_means(r.quality.values for r in scored if r.quality is not None),
        last_finished=max((r.finished_at for r in everything), default=None))


def _means(rows: Iterable[dict[str, float]]) -> dict[str, float]:
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for values in rows:
        for key, value in values.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    return {key: sums[key] / counts[key] for key in sums}
