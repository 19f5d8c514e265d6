"""Per-problem tallies of a coding run: what its solve rates are made of.

A tally counts, over one problem's scored attempts (those stopped by the provider left out),
the checkpoints solved, iso-solved and core-solved, the checkpoints planned, and the attempts
solved and partial. The report's solve rates (`coding/report/figures.py`) are ratios of these
sums with problems as clusters, and the viewer's overview reads the same tallies, so both show
the same figures. `read_run_digest` gets them fast from the journals alone (a brief read of
each record), with the few other figures a list of many runs needs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from benchwright.coding.attempts.journal import read_infra_error
from benchwright.coding.attempts.layout import INFRA_ERROR, JOURNAL, RunLayout
from benchwright.coding.attempts.models import Manifest
from benchwright.coding.attempts.record_rules import CheckpointRules
from benchwright.errors import BenchwrightError
from benchwright.files.untrusted import read_untrusted_bytes
from benchwright.llm.pricing import CostSum
from benchwright.runs.journal import read_jsonl
from benchwright.runs.lock import LOCK


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
    cost_usd: float | None = 0.0


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

    problem: str
    """The problem."""
    trial: int
    """The trial."""
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
    cost_usd: float | None
    """Model cost over journaled checkpoints: the known part, None when every one is unknown."""
    cost_unknown: int = 0
    """Journaled checkpoints whose cost is unknown (a model with no price)."""
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


class _InfraLines(BaseModel):
    model_config = ConfigDict(extra="ignore")
    infra_errors: list[str] = Field(default_factory=list)


def read_run_digest(run_dir: Path, manifest: Manifest) -> RunDigest:
    """The digest of a run: from checkpoint_records.jsonl when the run's last finish came after
    its last start (one file), else from every attempt's journal (a record torn by a kill ends
    its journal)."""
    finished = _finished_records(run_dir)
    if finished is not None:
        records, infra_keys = finished
        chains: dict[tuple[str, int], list[BriefRecord]] = {}
        for record in records:
            chains.setdefault((record.problem, record.trial), []).append(record)
    else:
        chains, infra_keys = _journal_records(run_dir, manifest)
    return _tallied(manifest, chains, infra_keys)


def _finished_records(run_dir: Path) -> tuple[list[BriefRecord], set[tuple[str, int]]] | None:
    """Records and provider-stopped attempts as the last finish wrote them, or None when the
    run was started again since (its lock file is newer than result.json) or never finished."""
    layout = RunLayout(run_dir)
    try:
        finished = layout.result_json.stat().st_mtime_ns
        layout.records_jsonl.stat()
    except OSError:
        return None
    try:
        started = (run_dir / LOCK).stat().st_mtime_ns
    except OSError:
        started = 0
    if started > finished:
        return None
    try:
        lines = _InfraLines.model_validate_json(read_untrusted_bytes(
            layout.result_json, what="result.json")).infra_errors
    except (ValueError, BenchwrightError):
        return None
    infra = {(problem, int(trial)) for line in lines
             for problem, _sep, rest in [line.partition("/trial_")]
             for trial in [rest.split("/", 1)[0]] if trial.isdigit()}
    return read_jsonl(layout.records_jsonl, BriefRecord, CheckpointRules()), infra


def _journal_records(run_dir: Path, manifest: Manifest
                     ) -> tuple[dict[tuple[str, int], list[BriefRecord]], set[tuple[str, int]]]:
    config = manifest.config
    chains, infra = {}, set()
    for problem in config.problems:
        for trial in range(1, config.trials + 1):
            folder = f"{run_dir}/{problem}/trial_{trial}"
            path = Path(f"{folder}/{JOURNAL}")
            chains[(problem, trial)] = read_jsonl(path, BriefRecord,
                                                  CheckpointRules(problem, trial))
            infra_file = Path(f"{folder}/{INFRA_ERROR}")
            if os.path.lexists(infra_file) and read_infra_error(infra_file) is not None:
                infra.add((problem, trial))
    return chains, infra


def _tallied(manifest: Manifest, chains: dict[tuple[str, int], list[BriefRecord]],
             infra_keys: set[tuple[str, int]]) -> RunDigest:
    config = manifest.config
    tallies, scored, everything = [], [], []
    for problem in config.problems:
        size = len(manifest.problem_checkpoints.get(problem, []))
        scored_chains = []
        for trial in range(1, config.trials + 1):
            records = chains.get((problem, trial), [])
            everything += records
            if (problem, trial) not in infra_keys:
                scored_chains.append(records)
        if scored_chains:
            tallies.append(tally(problem, size, scored_chains))
            scored += [r for c in scored_chains for r in c]
    return _digest(manifest, tallies, scored, everything, len(infra_keys))


def _digest(manifest: Manifest, tallies: list[ProblemTally], scored: list[BriefRecord],
            everything: list[BriefRecord], infra: int) -> RunDigest:
    sizes = manifest.problem_checkpoints
    planned = sum(len(sizes.get(p, [])) for p in manifest.config.problems) * manifest.config.trials
    cost = CostSum.of(r.agent.usage.cost_usd for r in everything)
    return RunDigest(
        tallies=tallies, done=len(everything), planned=planned, infra_attempts=infra,
        cost_usd=cost.partial_usd, cost_unknown=cost.unknown,
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
