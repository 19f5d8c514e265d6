"""Chain against reference starts (`benchwright report RUN --counterfactual RUN2`): per
checkpoint position and over checkpoints 2+, the solve rates of a chain run and of a
reference-start run of the same problems, their paired difference with a bootstrap CI over
problems, and the share of the chain's failures attributable to inherited code.

The unit is a pair: one problem, one trial number scored in both runs, one checkpoint position
the reference-start run could attempt, and both runs reached. A checkpoint counts as solved when
every test passed. A checkpoint one run never reached (the chain stopped at an earlier failure) is
no pair: it is listed apart (`not_reached`), never counted as a failure, so nothing is attributed
to a checkpoint the chain did not get to. Attributable to inherited code: of the pairs the chain
failed, the share the reference start solved (docs/runs.md, "Counterfactual starts").
`compare_starts` is the one entry point (the report and the viewer both call it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.coding.attempts.models import CheckpointRecord, StartFrom
from benchwright.coding.report.scored_run import ScoredRun
from benchwright.errors import UserInputError
from benchwright.stats.estimates import (
    MIN_CLUSTERS,
    Estimate,
    Verdict,
    judge,
    paired_difference_ci,
    ratio_ci,
)

StartVerdict = Literal["inherited code hurts", "inherited code helps", "no significant change",
                       "too few clusters"]
"""What the paired difference (reference start minus chain) says, from `stats.judge`: a
verdict only with at least MIN_CLUSTERS problems and a CI that excludes zero (closed set)."""

_READING: dict[Verdict, StartVerdict] = {
    "improvement": "inherited code hurts", "regression": "inherited code helps",
    "no significant change": "no significant change", "too few clusters": "too few clusters",
    "no preferred direction": "no significant change"}
# Settings that change what the agent does; a difference is confounded with the start.
_SETTINGS = ("problems_dir", "agent", "agent_command", "replay_from", "model", "prompt")
Outcome = tuple[bool, bool]
"""One pair: (solved in the chain, solved from the reference start)."""


class PairCounts(BaseModel):
    """The pairs of a row by outcome."""

    pairs: int = 0
    """Pairs in the row."""
    both_solved: int = 0
    """Solved in the chain and from the reference start."""
    chain_only: int = 0
    """Solved in the chain, not from the reference start."""
    reference_only: int = 0
    """Failed in the chain, solved from the reference start: the failures
    attributable to inherited code."""
    neither: int = 0
    """Failed both ways: the checkpoint itself was too hard for the agent."""


class StartRow(BaseModel):
    """Chain against reference start over one checkpoint position, or over positions 2+."""

    checkpoints: str
    """The position (`1`, `2`, ...) or `2+` (every position from 2: the overall row)."""
    n_problems: int
    """Problems with a pair here: the clusters every interval resamples."""
    counts: PairCounts
    """The pairs by outcome."""
    chain: Estimate
    """The chain's solve rate over the pairs, with a 95% CI over problems."""
    reference: Estimate
    """The reference start's solve rate over the same pairs."""
    difference: Estimate
    """Reference start minus chain, a paired bootstrap (both resampled with the same
    problems)."""
    verdict: StartVerdict
    """What the difference says (closed set; `too few clusters` under MIN_CLUSTERS problems)."""
    attributable: Estimate | None = None
    """reference_only / (reference_only + neither): the share of the chain's failures that the
    reference start solved, with a CI over the problems where the chain failed; None at
    position 1 (the same empty start: nothing is inherited) and where the chain never failed."""


class CounterfactualReport(BaseModel):
    """`report --counterfactual`: a chain run against a reference-start run."""

    format: Literal["benchwright.counterfactual/2"] = "benchwright.counterfactual/2"
    """The section's format and version (2: only checkpoints both runs reached are paired; the
    others in `not_reached`)."""
    chain_run: Path
    """The run whose checkpoints 2+ started from the agent's own code."""
    reference_run: Path
    """The run whose checkpoints 2+ started from the previous reference solution."""
    min_clusters: int = MIN_CLUSTERS
    """Intervals over fewer problems are marked; differences over fewer get no verdict."""
    differences: list[str] = Field(default_factory=list)
    """Settings other than the start that differ between the runs (agent, model, prompt,
    problem files, ...): each is mixed into every figure below."""
    n_paired: int = 0
    """Problems scored in both runs."""
    only_chain: list[str] = Field(default_factory=list)
    """Problems scored in the chain run only (left out)."""
    only_reference: list[str] = Field(default_factory=list)
    """Problems scored in the reference-start run only (left out)."""
    left_out: list[str] = Field(default_factory=list)
    """Other pairs left out, and why: a trial scored in one run only, a checkpoint the
    reference-start run could not attempt."""
    not_reached: list[str] = Field(default_factory=list)
    """Checkpoints left out because one run never reached them (`problem/trial_N/checkpoint:
    not reached by the chain run`): no figure counts them."""
    per_checkpoint: list[StartRow] = Field(default_factory=list)
    """One row per checkpoint position with at least one pair."""
    overall: StartRow | None = None
    """Every position from 2 (position 1 has the same start in both runs); None without one."""


def compare_starts(run_a: Path, run_b: Path) -> CounterfactualReport:
    """Chain against reference starts of two coding runs, in either order; two runs of the same
    `--start-from` are the user's error."""
    chain, reference = _roles(ScoredRun(run_a), ScoredRun(run_b))
    chain_problems, ref_problems = chain.scored_problems(), reference.scored_problems()
    shared = [p for p in chain_problems if p in ref_problems]
    report = CounterfactualReport(
        chain_run=chain.dir, reference_run=reference.dir,
        differences=_differences(chain, reference, shared), n_paired=len(shared),
        only_chain=[p for p in chain_problems if p not in ref_problems],
        only_reference=[p for p in ref_problems if p not in chain_problems])
    by_position: dict[int, dict[str, list[Outcome]]] = {}
    for problem in shared:
        for position, outcome in _pairs(chain, reference, problem, report):
            by_position.setdefault(position, {}).setdefault(problem, []).append(outcome)
    report.per_checkpoint = [_row(str(k), by_position[k], inherited=k > 1)
                             for k in sorted(by_position)]
    later: dict[str, list[Outcome]] = {}
    for position, problems in by_position.items():
        for problem, outcomes in problems.items():
            if position > 1:
                later.setdefault(problem, []).extend(outcomes)
    report.overall = _row("2+", later, inherited=True) if later else None
    return report


def _roles(a: ScoredRun, b: ScoredRun) -> tuple[ScoredRun, ScoredRun]:
    """(the chain run, the reference-start run)."""
    mode_a, mode_b = a.manifest.config.start_from, b.manifest.config.start_from
    if mode_a is mode_b:
        other = "reference" if mode_a is StartFrom.CHAIN else "chain"
        raise UserInputError(
            f"both runs start checkpoints from `{mode_a}`: --counterfactual compares a chain run "
            "with a reference-start run", path=b.dir,
            hint=f"make the other run with: benchwright run coding --start-from {other} "
            "(same problems, agent and model)")
    return (a, b) if mode_a is StartFrom.CHAIN else (b, a)


def _differences(chain: ScoredRun, reference: ScoredRun, shared: list[str]) -> list[str]:
    ours, theirs = chain.manifest.config, reference.manifest.config
    found = [f"{name}: {getattr(ours, name)} (chain) vs {getattr(theirs, name)} (reference)"
             for name in _SETTINGS if getattr(ours, name) != getattr(theirs, name)]
    sums, other_sums = chain.manifest.problem_checksums, reference.manifest.problem_checksums
    found += [f"problem {p}: its files differ between the runs" for p in shared
              if sums.get(p) != other_sums.get(p)]
    return found


def _pairs(chain: ScoredRun, reference: ScoredRun, problem: str,
           report: CounterfactualReport) -> list[tuple[int, Outcome]]:
    """Every (position, outcome) of a problem both runs reached; what cannot be paired is noted
    in `left_out`, a checkpoint one run did not reach in `not_reached`."""
    trials_c = {t for p, t in chain.chains if p == problem}
    trials_r = {t for p, t in reference.chains if p == problem}
    report.left_out += [f"{problem}/trial_{t}: scored in the "
                        f"{'chain' if t in trials_c else 'reference'} run only"
                        for t in sorted(trials_c ^ trials_r)]
    names = reference.manifest.problem_checkpoints.get(problem, [])
    size = min(chain.size(problem), len(names))
    skipped = reference.no_reference(problem)
    report.left_out += [f"{problem}/{name}: {skipped[name]}" for name in names[:size]
                        if name in skipped]
    pairs = []
    for t in sorted(trials_c & trials_r):
        for k in [k for k in range(1, size + 1) if names[k - 1] not in skipped]:
            ours = _at(chain.chains[(problem, t)], k)
            theirs = _at(reference.chains[(problem, t)], k)
            if ours is None or theirs is None:
                who = "chain" if ours is None else "reference-start"
                report.not_reached.append(f"{problem}/trial_{t}/{names[k - 1]}: not reached by "
                                          f"the {who} run")
                continue
            pairs.append((k, (ours.solved, theirs.solved)))
    return pairs


def _at(records: list[CheckpointRecord], position: int) -> CheckpointRecord | None:
    """The record at that position, None when the run never reached it."""
    return next((r for r in records if r.index == position), None)


def _row(label: str, outcomes: dict[str, list[Outcome]], inherited: bool) -> StartRow:
    """A row's figures; `outcomes` holds each problem's pairs (the clusters)."""
    pairs = [o for found in outcomes.values() for o in found]
    counts = PairCounts(pairs=len(pairs), both_solved=pairs.count((True, True)),
                        chain_only=pairs.count((True, False)),
                        reference_only=pairs.count((False, True)),
                        neither=pairs.count((False, False)))
    den = [float(len(found)) for found in outcomes.values()]
    chain = [float(sum(c for c, _r in found)) for found in outcomes.values()]
    ref = [float(sum(r for _c, r in found)) for found in outcomes.values()]
    difference = paired_difference_ci((ref, den), (chain, den))
    return StartRow(checkpoints=label, n_problems=len(outcomes), counts=counts,
                    chain=ratio_ci(chain, den), reference=ratio_ci(ref, den),
                    difference=difference, verdict=_READING[judge(difference, "higher")],
                    attributable=_attributable(outcomes) if inherited else None)


def _attributable(outcomes: dict[str, list[Outcome]]) -> Estimate | None:
    """Of the chain's failures, the share the reference start solved; clusters: the problems
    with at least one chain failure here."""
    rescued, failed = [], []
    for found in outcomes.values():
        chain_failed = [r for c, r in found if not c]
        if chain_failed:
            rescued.append(float(sum(chain_failed)))
            failed.append(float(len(chain_failed)))
    return ratio_ci(rescued, failed) if failed else None
