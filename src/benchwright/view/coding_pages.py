"""The viewer's pages of coding runs: the list row and overview figures of a run, the run page,
one problem across checkpoints, one checkpoint, and a head-to-head of two runs.

Figures come from the coding track: solve rates and their CIs from the report's own functions
(`coding.report.figures`), the overview's tallies from `coding.runs.tallies`, a checkpoint's
files from `coding.runs.checkpoint_files`. Nothing here computes a statistic of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchwright.coding.attempts.checkpoint_files import CheckpointFiles
from benchwright.coding.attempts.journal import read_infra_error, read_records
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, Manifest, RunResult, StartFrom
from benchwright.coding.attempts.runner import check_trial_folder, load_manifest
from benchwright.coding.attempts.tallies import RunDigest, read_run_digest
from benchwright.coding.report.counterfactual import CounterfactualReport, compare_starts
from benchwright.coding.report.figures import CodingReport, solve_rate_metrics
from benchwright.coding.report.frontier_points import coding_point
from benchwright.view.catalog import RunRef, read_result
from benchwright.view.coding_checkpoint import checkpoint_page, metric_rows
from benchwright.view.coding_judge import checkpoint_judge, run_criteria
from benchwright.view.run_state import RunState
from benchwright.view.stamped import StampedCache

Chains = dict[tuple[str, int], list[CheckpointRecord]]
MAX_DIGESTS = 5000
"""Run digests kept in memory (a few kB each)."""


def manifest_of(ref: RunRef) -> Manifest:
    """The coding manifest, read by the run's own track."""
    manifest = ref.track.read(ref.path)
    assert isinstance(manifest, Manifest), "a coding run's track reads a coding manifest"
    return manifest


def trials_manifest(ref: RunRef, problem: str, trials: list[int] | None = None) -> Manifest:
    """The manifest for a page that reads one problem's attempts (`trials`, or all of them):
    only their folders are checked, so a page's cost does not grow with the run's size."""
    manifest = load_manifest(ref.path, check_folders=False)
    if problem in manifest.config.problems:
        layout = RunLayout(ref.path)
        for trial in trials or range(1, manifest.config.trials + 1):
            if 1 <= trial <= manifest.config.trials:
                check_trial_folder(layout, problem, trial)
    return manifest


def listed_manifest(ref: RunRef) -> Manifest:
    """The manifest as a list of many runs reads it: without the trial-folder checks a resume
    makes before it touches anything (the list touches nothing; pages below the run check)."""
    return load_manifest(ref.path, check_folders=False)


def result_of(path: Path) -> RunResult | None:
    """result.json, when there is a readable one."""
    return read_result(path, RunResult)


def chains_of(ref: RunRef, manifest: Manifest,
              only: str | None = None) -> tuple[Chains, set[tuple[str, int]]]:
    """Every attempt's records (of the problem `only`, when given), and the attempts stopped
    by the provider."""
    layout, config = RunLayout(ref.path), manifest.config
    keys = [(p, t) for p in config.problems for t in range(1, config.trials + 1)
            if only is None or p == only]
    infra = {k for k in keys if read_infra_error(layout.infra_error(*k)) is not None}
    return {k: read_records(layout.journal(*k)) for k in keys}, infra


class CodingPages:
    """The coding track's pages."""

    track = "coding"

    def __init__(self) -> None:
        self._digests: StampedCache[Path, RunDigest] = StampedCache(MAX_DIGESTS)

    def digest(self, ref: RunRef, manifest: Manifest) -> RunDigest:
        """The run's digest; kept while its result.json stays the same (a run being worked on
        has none yet, or rewrites it when it ends, so it is read afresh)."""
        try:
            stamp: int | None = RunLayout(ref.path).result_json.stat().st_mtime_ns or None
        except OSError:
            stamp = None
        return self._digests.get(ref.path, stamp, lambda: read_run_digest(ref.path, manifest))

    def row(self, ref: RunRef, state: RunState) -> dict[str, Any]:
        """What the run list and the overview show of a run."""
        manifest = listed_manifest(ref)
        digest = self.digest(ref, manifest)
        result = None if state.running else result_of(ref.path)
        point = coding_point(ref.path, manifest, digest, with_ci=False)
        return {**_identity(ref, manifest), **state.fields(result.complete if result else None),
                "progress": {"done": digest.done, "planned": digest.planned,
                             "unit": "checkpoints"},
                **_figures(digest, result),
                "frontier_point": point.model_dump(mode="json") if point else None}

    def ci(self, ref: RunRef) -> dict[str, Any]:
        """The overview's solve rates with 95% CIs (report.md's numbers)."""
        digest = self.digest(ref, listed_manifest(ref))
        return {"rid": ref.rid, "metrics": solve_rate_metrics(digest.tallies)}

    def run_page(self, ref: RunRef, state: RunState) -> dict[str, Any]:
        """The run page: the report's figures, every attempt's cells, the run's state."""
        manifest = manifest_of(ref)
        report = ref.track.report(ref.path, None)
        assert isinstance(report, CodingReport)
        result = result_of(ref.path)
        digest = self.digest(ref, manifest)
        return {**_identity(ref, manifest), **state.fields(result.complete if result else None),
                "progress": {"done": digest.done, "planned": digest.planned,
                             "unit": "checkpoints"},
                "report": report, "result": result,
                "checkpoints": manifest.problem_checkpoints,
                "tallies": digest.tallies,
                "judge_criteria": _judge_criteria(ref, manifest) if report.judge else None}

    def detail(self, ref: RunRef, rest: list[str]) -> dict[str, Any] | None:
        """A page below the run: `p/<problem>`, `cp/<problem>/<trial>/<checkpoint>`, `qd`."""
        match rest:
            case ["p", problem]:
                return self.problem_page(ref, problem)
            case ["cp", problem, trial, checkpoint] if trial.isdigit():
                return self.checkpoint_page(ref, problem, int(trial), checkpoint)
            case ["qd"]:
                return self.quality_deltas(ref)
        return None

    def problem_page(self, ref: RunRef, problem: str) -> dict[str, Any] | None:
        """One problem across its checkpoints, every trial."""
        manifest = trials_manifest(ref, problem)
        if problem not in manifest.config.problems:
            return None
        chains, infra = chains_of(ref, manifest, only=problem)
        trials = [{"trial": t, "infra": (problem, t) in infra,
                   "checkpoints": [_record_row(r) for r in chains[(problem, t)]]}
                  for t in range(1, manifest.config.trials + 1)]
        return {**_identity(ref, manifest), "problem": problem,
                "checkpoint_names": manifest.problem_checkpoints.get(problem, []),
                "trials": trials}

    def checkpoint_page(self, ref: RunRef, problem: str, trial: int,
                        checkpoint: str) -> dict[str, Any] | None:
        """One graded checkpoint."""
        manifest = trials_manifest(ref, problem, [trial])
        if problem not in manifest.config.problems or not 1 <= trial <= manifest.config.trials:
            return None
        records = read_records(RunLayout(ref.path).journal(problem, trial))
        at = next((i for i, r in enumerate(records) if r.checkpoint == checkpoint), None)
        if at is None:
            return None
        files = CheckpointFiles(ref.path, problem, trial, checkpoint)
        page = checkpoint_page(records[at], records[at - 1] if at else None, files)
        page["judge"] = checkpoint_judge(
            RunLayout(ref.path).checkpoint_dir(problem, trial, checkpoint))
        names = manifest.problem_checkpoints.get(problem, [])
        return {**_identity(ref, manifest), **page, "checkpoint_names": names,
                "reached": [r.checkpoint for r in records], "trials": manifest.config.trials}

    def quality_deltas(self, ref: RunRef) -> dict[str, Any]:
        """Every scored checkpoint's quality deltas by position (the overview's distributions)."""
        manifest = manifest_of(ref)
        chains, infra = chains_of(ref, manifest)
        by_index: dict[int, dict[str, list[float]]] = {}
        for key, records in chains.items():
            for record in records if key not in infra else []:
                if record.quality is None:
                    continue
                values = {**record.quality.delta, "churn_ratio": record.quality.churn_ratio}
                slot = by_index.setdefault(record.index, {})
                for name, value in values.items():
                    slot.setdefault(name, []).append(value)
        return {"rid": ref.rid, "by_index": by_index}

    def compare(self, a: RunRef, b: RunRef) -> dict[str, Any]:
        """Run a against run b: paired differences with CIs (the report's), the problems only
        one has, how their checkpoints' outcomes overlap, and paired per-checkpoint figures."""
        report = a.track.report(a.path, b.path)
        assert isinstance(report, CodingReport)
        ma, mb = manifest_of(a), manifest_of(b)
        pairs = _paired(chains_of(a, ma), chains_of(b, mb))
        return {"a": _identity(a, ma), "b": _identity(b, mb), "report": report,
                "overlap": _overlap(pairs), "pairs": [_pair_row(k, x, y) for k, x, y in pairs],
                "tallies": {"a": self.digest(a, ma).tallies, "b": self.digest(b, mb).tallies},
                "counterfactual": _counterfactual(a, ma, b, mb)}

    def keys(self, ref: RunRef) -> list[str]:
        """Every data key of the run's pages (what a bundle writes)."""
        manifest = manifest_of(ref)
        chains, _infra = chains_of(ref, manifest)
        keys = [f"run/{ref.rid}", f"run/{ref.rid}/ci", f"run/{ref.rid}/qd"]
        keys += [f"run/{ref.rid}/p/{p}" for p in manifest.config.problems]
        keys += [f"run/{ref.rid}/cp/{p}/{t}/{r.checkpoint}"
                 for (p, t), records in chains.items() for r in records]
        return keys


def _judge_criteria(ref: RunRef, manifest: Manifest) -> dict[str, Any]:
    """Flags per rubric item over the run's judged checkpoints."""
    layout, (chains, _infra) = RunLayout(ref.path), chains_of(ref, manifest)
    return run_criteria(layout.checkpoint_dir(p, t, r.checkpoint)
                        for (p, t), records in chains.items() for r in records)


def _counterfactual(a: RunRef, ma: Manifest, b: RunRef,
                    mb: Manifest) -> dict[str, Any] | None:
    """Chain against reference starts (`report --counterfactual`), and which run (`a` or `b`)
    is the chain, when one run started its checkpoints from the agent's own code and the other
    from the reference solutions."""
    if ma.config.start_from is mb.config.start_from:
        return None
    report: CounterfactualReport = compare_starts(a.path, b.path)
    return {"report": report, "chain": "a" if ma.config.start_from is StartFrom.CHAIN else "b"}


def _identity(ref: RunRef, manifest: Manifest) -> dict[str, Any]:
    config = manifest.config
    return {"rid": ref.rid, "track": "coding", "path": str(ref.path), "name": ref.path.name,
            "suite": config.problems_dir.name or str(config.problems_dir),
            "suite_path": str(config.problems_dir), "problems": config.problems,
            "trials": config.trials, "agent": config.agent, "model": config.model,
            "prompt": config.prompt, "policy": str(config.pass_policy),
            "start_from": str(config.start_from),
            "created": manifest.created_at, "version": manifest.benchwright_version}


def _figures(digest: RunDigest, result: RunResult | None) -> dict[str, Any]:
    """Rates and totals: result.json's when the run is finished, else the journals' so far."""
    solved = sum(t.solved for t in digest.tallies)
    planned = sum(t.planned for t in digest.tallies)
    rate = result.checkpoint_solve_rate if result else (solved / planned if planned else None)
    totals = result.totals if result else None
    cost = totals.cost_usd if totals else digest.cost_usd
    unknown = totals.cost_unknown if totals else digest.cost_unknown
    agent_s = totals.agent_time_s if totals else digest.agent_time_s
    done = digest.done
    return {
        "rate": rate, "finished": result.finished_at if result else digest.last_finished,
        "heat": {t.problem: [t.solved, t.planned] for t in digest.tallies},
        "cost": cost, "cost_unknown": unknown,
        "tokens": (totals.input_tokens + totals.output_tokens) if totals else digest.tokens,
        "agent_s": agent_s,
        "grading_s": totals.grading_time_s if totals else digest.grading_time_s,
        "cost_per_cp": cost / done if done and cost is not None and not unknown else None,
        "time_per_cp": agent_s / done if done else None,
        "erosion": digest.quality_means.get("erosion"),
        "verbosity": digest.quality_means.get("verbosity"),
        "cog_erosion": digest.quality_means.get("cog_erosion"),
        "problems_solved": result.n_problems_solved if result else None,
        "errors": len(result.errors) if result else 0}


def _record_row(record: CheckpointRecord) -> dict[str, Any]:
    """A checkpoint's figures on the problem page."""
    return {"checkpoint": record.checkpoint, "index": record.index, "solved": record.solved,
            "passed": record.passed, "grade_status": str(record.grade_status),
            "groups": {str(g): [c.passed, c.total] for g, c in record.counts.items()},
            "metrics": {f"{m['group']}/{m['name']}": m["value"] for m in metric_rows(record, None)}}


Pair = tuple[tuple[str, int, int], CheckpointRecord | None, CheckpointRecord | None]


def _paired(a: tuple[Chains, set[tuple[str, int]]],
            b: tuple[Chains, set[tuple[str, int]]]) -> list[Pair]:
    """(problem, trial, index) -> both runs' records, over the attempts both scored."""
    (ca, ia), (cb, ib) = a, b
    pairs: list[Pair] = []
    for key in [k for k in ca if k in cb and k not in ia and k not in ib]:
        xa = {r.index: r for r in ca[key]}
        xb = {r.index: r for r in cb[key]}
        for index in sorted(xa.keys() | xb.keys()):
            pairs.append(((key[0], key[1], index), xa.get(index), xb.get(index)))
    return pairs


def _overlap(pairs: list[Pair]) -> dict[str, int]:
    counts = {"both": 0, "a_only": 0, "b_only": 0, "neither": 0}
    for _key, x, y in pairs:
        sa, sb = bool(x and x.solved), bool(y and y.solved)
        counts["both" if sa and sb else "a_only" if sa else "b_only" if sb else "neither"] += 1
    return counts


def _pair_row(key: tuple[str, int, int], x: CheckpointRecord | None,
              y: CheckpointRecord | None) -> dict[str, Any]:
    return {"problem": key[0], "trial": key[1], "index": key[2],
            "a": _paired_figures(x), "b": _paired_figures(y)}


def _paired_figures(record: CheckpointRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    usage = record.agent.usage
    return {"checkpoint": record.checkpoint, "solved": record.solved,
            "cost": usage.cost_usd, "tokens": usage.input_tokens + usage.output_tokens,
            "loc": record.quality.values.get("loc") if record.quality else None}


PAGES = CodingPages()
