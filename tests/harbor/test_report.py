"""A Harbor run's report as the other tracks': the mean reward with a 95% interval resampling
tasks, and with `--baseline` the paired difference over the tasks both ran and its verdict;
`report --fail-if-worse` gates on it. The run folders are written as a run writes them
(manifest.json, trials.jsonl): the figures read nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.harbor.runner import HarborManifest, HarborRunConfig
from benchwright.harbor.trial import StepRecord, TrialRecord
from tests.helpers.cli import run_cli

TASKS = [f"bench/t{i}" for i in range(8)]


def harbor_run(folder: Path, rewards: dict[str, list[float | None]]) -> Path:
    """A finished run: per task, one trial per reward (None: its verifier failed)."""
    folder.mkdir(parents=True)
    manifest = HarborManifest(created_at="2026-11-29T00:00:00Z", benchwright_version="0",
                              run_id="r", config=HarborRunConfig(tasks=folder),
                              tasks=list(rewards))
    (folder / "manifest.json").write_text(manifest.model_dump_json())
    lines = []
    for task, values in rewards.items():
        for index, value in enumerate(values):
            verified = value is not None
            step = StepRecord(name="main", status="verified" if verified else "verifier_error",
                              rewards={"reward": value} if verified else None)
            lines.append(TrialRecord(
                task=task, trial=index, status="completed" if verified else "verifier_error",
                rewards={"reward": value} if verified else None, steps=[step],
                image="sha256:0").model_dump_json())
    (folder / "trials.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_the_mean_reward_has_a_task_clustered_interval(tmp_path: Path) -> None:
    from benchwright.harbor.track import TRACK

    run = harbor_run(tmp_path / "r", {t: [1.0, 0.0 if i % 2 else 1.0] for i, t in
                                      enumerate(TASKS)} | {"bench/broken": [None, None]})
    report = TRACK.report(run, None)
    estimate = report.result.mean_reward
    assert estimate is not None
    assert (estimate.value, estimate.n_clusters) == (12 / 18, 9)  # verifier errors count 0
    assert estimate.low < estimate.value < estimate.high
    text = TRACK.render(report)
    assert "mean reward (95% CI, tasks resampled): 0.667 [" in text
    assert json.loads((run / "result.json").read_text())["mean_reward"]["n_clusters"] == 9


def test_a_baseline_is_compared_over_the_tasks_both_ran(tmp_path: Path) -> None:
    from benchwright.harbor.track import TRACK

    base = harbor_run(tmp_path / "base", {t: [0.0, 0.0] for t in TASKS})
    run = harbor_run(tmp_path / "run", {t: [1.0, 1.0] for t in TASKS[:7]}
                     | {"bench/new": [1.0]})
    comparison = TRACK.report(run, base).comparison
    assert comparison is not None
    assert (comparison.tasks, comparison.run_mean, comparison.baseline_mean) == (7, 1.0, 0.0)
    assert comparison.verdict == "improvement"
    few = harbor_run(tmp_path / "few", {t: [1.0] for t in TASKS[:2]})
    assert TRACK.report(few, base).comparison.verdict == "too few clusters"  # type: ignore[union-attr]


@pytest.mark.e2e
def test_report_baseline_and_the_gate_through_the_cli(tmp_path: Path) -> None:
    base = harbor_run(tmp_path / "base", {t: [1.0, 1.0] for t in TASKS})
    worse = harbor_run(tmp_path / "worse", {t: [0.0, 0.0] for t in TASKS})
    shown = run_cli("report", str(worse), "--baseline", str(base))
    assert shown.returncode == 0, shown.stderr
    assert "difference: -1.000 [-1.000, -1.000] (paired, 95%): regression" in shown.stdout
    gated = run_cli("report", str(worse), "--baseline", str(base), "--fail-if-worse", "5")
    assert gated.returncode == 1, gated.stderr
    assert "mean reward: -100.0 points" in gated.stdout + gated.stderr
