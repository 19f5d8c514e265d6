"""End to end: a synthetic batch scored by benchwright and by the official CLI: equal verdicts."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.evaluation.evaluator import EvalStatus, official_cli
from benchwright.web.evaluation.scoring import EVAL_RESULT, score_output_dir
from benchwright.web.evaluation.synthetic import Intent, build_batch, har, local_config
from benchwright.web.evaluation.tasks import TaskType, WebDataset

pytestmark = pytest.mark.e2e  # the official evaluator's CLI, as a subprocess


def _official_scores(root: Path) -> dict[int, float]:
    return {int(p.parent.name): json.loads(p.read_text())["score"]
            for p in root.glob(f"*/{EVAL_RESULT}")}


def test_benchwright_agrees_with_the_official_cli(tmp_path: Path, wv_env: BuiltEnv,
                                                  dataset: WebDataset) -> None:
    config = local_config()
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    logs = build_batch(ours_dir, dataset, config)
    # Two broken folders: a HAR without entries (both must call it an error scoring 0), and a
    # missing agent response (the official CLI skips the folder; benchwright scores it 0).
    (ours_dir / "10").mkdir()
    (ours_dir / "10" / "agent_response.json").write_text("{}")
    (ours_dir / "10" / "network.har").write_text(json.dumps(har([])))
    (ours_dir / "11").mkdir()
    (ours_dir / "11" / "network.har").write_text(json.dumps(har([])))
    shutil.copytree(ours_dir, theirs_dir)
    cfg_file = tmp_path / "config.json"
    cfg_file.write_text(json.dumps({"environments": config.evaluator_environments()}))

    summary = score_output_dir(ours_dir, config, dataset=dataset)
    done = subprocess.run([str(official_cli(wv_env)), "eval-tasks", "--output-dir",
                           str(theirs_dir), "--config", str(cfg_file)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]

    ours = {r.task_id: r.score for r in summary.tasks}
    theirs = _official_scores(theirs_dir)
    assert set(theirs) == set(ours) - {11}  # the official CLI skips a folder missing a file
    assert {i: ours[i] for i in theirs} == theirs
    rows = {r.task_id: r for r in summary.tasks}
    assert rows[10].status is EvalStatus.ERROR and rows[11].status is EvalStatus.ERROR
    assert ours[11] == 0.0 and "agent_response.json: missing" in str(rows[11].error_msg)

    assert len(logs) >= 30
    right = [log for log in logs if log.intent is Intent.RIGHT]
    wrong = [log for log in logs if log.intent is Intent.WRONG]
    assert all(ours[log.task_id] == 1.0 for log in right)
    assert all(ours[log.task_id] == 0.0 for log in wrong)
    assert {log.task_type for log in right} == set(TaskType)
    assert len({s for log in logs for s in dataset.tasks[log.task_id].sites}) == 6
