"""`benchwright web package`: the official submission package of a run, made by webarena-verified's
own code in the evaluator's environment; re-scoring the package gives the run's verdicts."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path

from benchwright.api.web import RUNNER_ENV
from benchwright.web.evaluation.tasks import WebDataset
from benchwright.web.submission.package import TrialChoice, pick_trial
from tests.helpers import run_cli
from tests.helpers.coding_runs import write_run as write_coding_run


def _trial(folder: Path, score: float | None) -> None:
    folder.mkdir(parents=True)
    (folder / "agent_response.json").write_text("{}")
    (folder / "network.har").write_text('{"log": {"entries": []}}')
    if score is not None:
        (folder / "eval_result.json").write_text(json.dumps({"score": score}))


def test_first_and_best_trial(tmp_path: Path) -> None:
    task = tmp_path / "12"
    _trial(task / "trial_1", 0.0)
    _trial(task / "trial_2", 1.0)
    _trial(task / "trial_3", 1.0)
    _trial(task / "trial_10", None)
    (task / "trial_0").mkdir()  # incomplete: never chosen
    assert pick_trial(task, TrialChoice.FIRST) == task / "trial_1"
    assert pick_trial(task, TrialChoice.BEST) == task / "trial_2"  # ties: the earliest
    plain = tmp_path / "13"
    _trial(plain, None)
    assert pick_trial(plain, TrialChoice.BEST) == plain


def _scores(scored: dict[str, object]) -> dict[int, float]:
    return {int(t["task_id"]): float(t["score"]) for t in scored["tasks"]}  # type: ignore[attr-defined, index]


def _rescore_package(package: Path, run_dir: Path, tmp_path: Path,
                     by_hand: bool = False) -> dict[int, float]:
    """The package scored again: with `--run` (the URLs and dataset from the run), or with a
    config and dataset written `by_hand` from its manifest."""
    folder = package
    if package.name.endswith(".tar.gz"):
        folder = tmp_path / "unpacked"
        with tarfile.open(package) as archive:
            archive.extractall(folder, filter="data")
    how = ["--run", str(run_dir)]
    if by_hand:
        manifest = json.loads((run_dir / "manifest.json").read_text())
        config = tmp_path / "sites.yaml"
        config.write_text("sites:\n" + "".join(f"  {site}:\n    urls: {json.dumps(urls)}\n"
                                              for site, urls in manifest["site_urls"].items()))
        how = ["--config", str(config), "--dataset", manifest["dataset_file"]]
    done = run_cli("web", "eval", str(folder), *how, "--json")
    assert done.returncode == 0, done.stderr
    return _scores(json.loads(done.stdout))


def test_a_local_run_packaged_scores_as_its_chosen_trials(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = run_cli("run", "web", "--suite", "local", "--task-ids", "9001,9003,9005",
                   "--trials", "2", "--out", str(run_dir), "--json",
                   env={**os.environ, RUNNER_ENV: "fake"})
    assert done.returncode == 0, done.stderr
    answer = run_dir / "tasks" / "9001" / "trial_1" / "agent_response.json"
    answer.write_text(json.dumps({"task_type": "RETRIEVE", "status": "SUCCESS",
                                  "retrieved_data": [1.0]}))  # trial 1 of 9001 now fails
    assert run_cli("eval", str(run_dir)).returncode == 0
    first = run_cli("web", "package", str(run_dir), "--out", str(tmp_path / "first"))
    assert first.returncode == 0, first.stderr
    assert "3 tasks packaged" in first.stdout
    assert "nothing to trim, and the packager writes indented JSON" in first.stdout
    assert f"--run {run_dir}" in first.stderr
    assert sorted(p.name for p in (tmp_path / "first").iterdir()) == [
        "9001", "9003", "9005", "summary.json"]
    assert _rescore_package(tmp_path / "first", run_dir, tmp_path) == {
        9001: 0.0, 9003: 1.0, 9005: 1.0}
    best = run_cli("web", "package", str(run_dir), "--out", str(tmp_path / "best.tar.gz"),
                   "--trial", "best")
    assert best.returncode == 0, best.stderr
    assert _rescore_package(tmp_path / "best.tar.gz", run_dir, tmp_path, by_hand=True) == {
        9001: 1.0, 9003: 1.0, 9005: 1.0}
    coding = run_cli("web", "eval", str(tmp_path / "first"), "--run",
                     str(write_coding_run(tmp_path / "coding", {"p": ["SS"]})))
    assert coding.returncode == 2 and "Traceback" not in coding.stderr, coding.stderr
    again = run_cli("web", "package", str(run_dir), "--out", str(tmp_path / "first"))
    assert again.returncode == 2 and "already exists" in again.stderr


def _with_static_files(task_dir: Path) -> None:
    """The task's HAR with a stylesheet, a script and an image request added (what trimming
    drops), as a browser records them."""
    from benchwright.web.evaluation.synthetic import har_entry

    path = task_dir / "network.har"
    log = json.loads(path.read_text())
    base = log["log"]["entries"][0]["request"]["url"].split("/", 3)[:3]
    for name in ("static/site.css", "static/app.js", "media/logo.png"):
        entry = har_entry("GET", "/".join([*base, name]))
        entry["response"]["content"]["text"] = "x" * 20_000
        log["log"]["entries"].append(entry)
    path.write_text(json.dumps(log))


def test_official_task_logs_packaged_keep_their_verdicts(tmp_path: Path,
                                                          dataset: WebDataset) -> None:
    """Logs of official tasks (no run folder) go through webarena-verified's own
    `create-submission-pkg`; the package re-scores as the logs did. The logs are synthetic, in
    the official layout (the project's tests do not read the shared demo logs; docs/web.md has
    the figures measured on those)."""
    from benchwright.web.evaluation.synthetic import build_batch, local_config

    logs = tmp_path / "logs"
    built = build_batch(logs, dataset, local_config(), per_group=1)[:8]
    for folder in logs.iterdir():
        if int(folder.name) in {log.task_id for log in built}:
            _with_static_files(folder)
        else:
            shutil.rmtree(folder)
    config = tmp_path / "sites.yaml"
    config.write_text("sites:\n" + "".join(
        f"  {site}:\n    urls: {json.dumps(local_config().site(site).urls)}\n"
        for site in local_config().configured()))
    before = run_cli("web", "eval", str(logs), "--config", str(config), "--json")
    assert before.returncode == 0, before.stderr
    verdicts = _scores(json.loads(before.stdout))
    assert set(verdicts.values()) == {0.0, 1.0} and len(verdicts) == 8

    package = tmp_path / "official.tar.gz"
    done = run_cli("web", "package", str(logs), "--out", str(package))
    assert done.returncode == 0, done.stderr
    assert "8 tasks packaged" in done.stdout and "trimming saved" in done.stdout
    folder = tmp_path / "unpacked"
    with tarfile.open(package) as archive:
        archive.extractall(folder, filter="data")
    scored = run_cli("web", "eval", str(folder), "--config", str(config), "--json")
    assert scored.returncode == 0, scored.stderr
    assert _scores(json.loads(scored.stdout)) == verdicts
    har_before = sum(p.stat().st_size for p in logs.glob("*/network.har"))
    har_after = sum(p.stat().st_size for p in folder.glob("*/network.har"))
    assert har_after < har_before - 8 * 3 * 20_000  # the static files' bodies are gone
