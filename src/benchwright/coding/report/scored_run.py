"""A coding run as its report reads it: the manifest, every attempt's journal, and which
attempts are scored (an attempt the model provider stopped is not the agent's result)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, Manifest, StartFrom
from benchwright.coding.attempts.runner import load_manifest
from benchwright.coding.attempts.tallies import ProblemTally, tally

Picker = Callable[[CheckpointRecord], float]


class ScoredRun:
    """A run's manifest and attempts as its report reads them: `all_chains` every attempt's
    records, `chains` those scored (attempts stopped by the provider left out)."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir
        self.manifest: Manifest = load_manifest(run_dir)
        self.layout = layout = RunLayout(run_dir)
        config = self.manifest.config
        keys = [(p, t) for p in config.problems for t in range(1, config.trials + 1)]
        self.infra = {k: e for k in keys
                      if (e := journal.read_infra_error(layout.infra_error(*k))) is not None}
        self.all_chains = {k: journal.read_records(layout.journal(*k)) for k in keys}
        # Attempts cut short by the provider are not the agent's result: no score counts them.
        self.chains = {k: r for k, r in self.all_chains.items() if k not in self.infra}

    @property
    def reference_start(self) -> bool:
        return self.manifest.config.start_from is StartFrom.REFERENCE

    def no_reference(self, problem: str) -> dict[str, str]:
        """Checkpoints a reference start could not attempt, with why."""
        return self.manifest.no_reference.get(problem, {})

    def scored_problems(self) -> list[str]:
        """Problems with at least one attempt that counts."""
        return [p for p in self.manifest.config.problems
                if any(k[0] == p for k in self.chains)]

    def size(self, problem: str) -> int:
        return len(self.manifest.problem_checkpoints.get(problem, []))

    def tally(self, problem: str) -> ProblemTally:
        chains = [r for (p, _t), r in self.chains.items() if p == problem]
        return tally(problem, self.size(problem), chains)

    def clusters(self, problems: list[str], pick: Picker,
                 denominator: Callable[[str, list[CheckpointRecord]], float]
                 ) -> tuple[list[float], list[float]]:
        num, den = [], []
        for problem in problems:
            chains = [r for (p, _t), r in self.chains.items() if p == problem]
            num.append(sum(pick(r) for records in chains for r in records))
            den.append(sum(denominator(problem, records) for records in chains))
        return num, den
