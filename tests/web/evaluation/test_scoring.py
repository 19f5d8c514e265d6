"""Scoring a folder: the layout, errors that name the file, result files, re-scoring, trials."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.evaluation.evaluator import EvalStatus, EvaluatorProcess
from benchwright.web.evaluation.scoring import (
    EVAL_RESULT,
    SUMMARY,
    ErrorOrigin,
    TaskEvalRecord,
    WebEvalSummary,
    load_summary,
    score_output_dir,
)
from benchwright.web.evaluation.synthetic import expected_answer, har, start_entry, write_log
from benchwright.web.evaluation.tasks import WebDataset
from benchwright.web.sites.config import Site, SiteConfig, WebEnvConfig


@pytest.fixture(scope="module")
def evaluator(wv_env: BuiltEnv) -> Iterator[EvaluatorProcess]:
    with EvaluatorProcess.for_env(wv_env) as process:
        yield process


def _right(root: Path, dataset: WebDataset, config: WebEnvConfig, task_id: int) -> Path:
    task = dataset.tasks[task_id]
    write_log(root / str(task_id), expected_answer(task), [start_entry(task, config)])
    return root / str(task_id)


def _score(root: Path, config: WebEnvConfig, dataset: WebDataset,
           evaluator: EvaluatorProcess | None, reuse: bool = True) -> WebEvalSummary:
    return score_output_dir(root, config, dataset=dataset, evaluator=evaluator, reuse=reuse)


def _layout_fixture(root: Path, dataset: WebDataset, config: WebEnvConfig) -> dict[int, str]:
    """Task folders each broken in one way; returns id -> the file the message must name."""
    for task_id in (0, 1, 2, 3, 4, 5):
        _right(root, dataset, config, task_id)
    (root / "1" / "agent_response.json").unlink()
    (root / "2" / "agent_response.json").write_text("{not json")
    (root / "3" / "network.har").write_text(json.dumps({"log": {"pages": []}}))
    (root / "4" / "network.har").write_text(json.dumps(har([])))
    (root / "5" / "network.har").unlink()
    return {1: "1/agent_response.json", 2: "2/agent_response.json", 3: "3/network.har",
            4: "4/network.har", 5: "5/network.har"}


def test_broken_folders_score_zero_with_the_file_named(
        tmp_path: Path, dataset: WebDataset, local_cfg: WebEnvConfig,
        evaluator: EvaluatorProcess) -> None:
    broken = _layout_fixture(tmp_path, dataset, local_cfg)
    summary = _score(tmp_path, local_cfg, dataset, evaluator)
    rows = {r.task_id: r for r in summary.tasks}
    assert sorted(rows) == [0, 1, 2, 3, 4, 5]
    assert rows[0].score == 1.0 and rows[0].status is EvalStatus.SUCCESS
    for task_id, file in broken.items():
        row = rows[task_id]
        assert (row.score, row.status, row.error_origin) == (0.0, EvalStatus.ERROR,
                                                             ErrorOrigin.LAYOUT)
        assert row.error_msg is not None and str(tmp_path / file) in row.error_msg
    assert "no entries" in str(rows[4].error_msg) and "log.entries" in str(rows[3].error_msg)
    assert rows[1].agent_status == "(missing)" and rows[2].agent_status == "(unparseable)"
    assert summary.totals.n_error == 5 and summary.totals.pass_rate == pytest.approx(1 / 6)


def test_result_files_are_versioned_and_carry_the_evaluator_identity(
        tmp_path: Path, dataset: WebDataset, local_cfg: WebEnvConfig,
        evaluator: EvaluatorProcess) -> None:
    _layout_fixture(tmp_path, dataset, local_cfg)
    _score(tmp_path, local_cfg, dataset, evaluator)
    summary = json.loads((tmp_path / SUMMARY).read_text())
    assert summary["format"] == "benchwright.web-eval-summary/1"
    assert summary["evaluator"]["version"] == "1.2.3"
    assert summary["evaluator"]["data_checksum"] == dataset.data_checksum
    assert set(summary["tasks"][0]) >= {"task_id", "score", "status", "sites",
                                        "intent_template_id", "unpassable"}
    for folder in ("0", "1", "4"):
        record = json.loads((tmp_path / folder / EVAL_RESULT).read_text())
        assert record["format"] == "benchwright.web-eval/1"
        assert len(record["webarena_verified_evaluator_checksum"]) == 64
        assert record["webarena_verified_data_checksum"] == dataset.data_checksum
    ok = TaskEvalRecord.model_validate_json((tmp_path / "0" / EVAL_RESULT).read_text())
    assert ok.evaluators_results[0]["evaluator_name"] == "AgentResponseEvaluator"
    assert load_summary(tmp_path).totals.n_attempts == 6


def test_rescoring_reuses_unchanged_verdicts_and_redoes_changed_ones(
        tmp_path: Path, dataset: WebDataset, local_cfg: WebEnvConfig) -> None:
    for task_id in (0, 1):
        _right(tmp_path, dataset, local_cfg, task_id)
    first = _score(tmp_path, local_cfg, dataset, None)
    assert [r.score for r in first.tasks] == [1.0, 1.0]
    stamp = (tmp_path / "0" / EVAL_RESULT).stat().st_mtime_ns
    wrong = {**expected_answer(dataset.tasks[1]), "retrieved_data": ["nope"]}
    (tmp_path / "1" / "agent_response.json").write_text(json.dumps(wrong))
    second = _score(tmp_path, local_cfg, dataset, None)
    assert [r.score for r in second.tasks] == [1.0, 0.0]
    assert (tmp_path / "0" / EVAL_RESULT).stat().st_mtime_ns == stamp
    moved = WebEnvConfig(sites={**local_cfg.sites,
                                Site.SHOPPING_ADMIN: SiteConfig(urls=["http://h:1/admin"])})
    third = _score(tmp_path, moved, dataset, None)
    assert (tmp_path / "0" / EVAL_RESULT).stat().st_mtime_ns != stamp
    assert [r.score for r in third.tasks] == [1.0, 0.0]
    stamp = (tmp_path / "0" / EVAL_RESULT).stat().st_mtime_ns
    _score(tmp_path, moved, dataset, None, reuse=False)
    assert (tmp_path / "0" / EVAL_RESULT).stat().st_mtime_ns != stamp


def test_trial_folders_are_scored_one_by_one(
        tmp_path: Path, dataset: WebDataset, local_cfg: WebEnvConfig,
        evaluator: EvaluatorProcess) -> None:
    task = dataset.tasks[0]
    for k in (1, 2, 3):
        answer = expected_answer(task) if k != 2 else {**expected_answer(task),
                                                      "retrieved_data": ["no"]}
        write_log(tmp_path / "0" / f"trial_{k}", answer, [start_entry(task, local_cfg)])
    (tmp_path / "0" / "trial_1" / "metrics.json").write_text(
        json.dumps({"steps": 7, "tokens": 1200, "cost_usd": 0.02, "duration_s": 31.5}))
    summary = _score(tmp_path, local_cfg, dataset, evaluator)
    assert [(r.trial, r.score) for r in summary.tasks] == [(1, 1.0), (2, 0.0), (3, 1.0)]
    assert summary.tasks[0].metrics is not None and summary.tasks[0].metrics.steps == 7
    assert (tmp_path / "0" / "trial_2" / EVAL_RESULT).is_file()
    assert summary.totals.n_tasks == 1 and summary.totals.n_attempts == 3


def test_links_in_the_folder_are_refused_not_followed(
        tmp_path: Path, dataset: WebDataset, local_cfg: WebEnvConfig,
        evaluator: EvaluatorProcess) -> None:
    # Attacker: a run folder whose attempt (or whose HAR) is a link to right answers elsewhere;
    # followed, both would score 1.0 (and the harness would read any file they name).
    root, elsewhere = tmp_path / "logs", tmp_path / "elsewhere"
    _right(root, dataset, local_cfg, 0)
    _right(elsewhere, dataset, local_cfg, 1)
    (root / "1").symlink_to(elsewhere / "1")
    _right(root, dataset, local_cfg, 2)
    _right(elsewhere, dataset, local_cfg, 2)
    (root / "2" / "network.har").unlink()
    (root / "2" / "network.har").symlink_to(elsewhere / "2" / "network.har")
    summary = _score(root, local_cfg, dataset, evaluator)
    rows = {r.task_id: r for r in summary.tasks}
    assert sorted(rows) == [0, 2] and rows[0].score == 1.0
    assert (rows[2].score, rows[2].error_origin) == (0.0, ErrorOrigin.LAYOUT)
    assert "a link (not followed)" in str(rows[2].error_msg)
    assert any("1: a link, not followed" in w for w in summary.warnings)


def test_unknown_folders_are_left_out_with_a_warning(
        tmp_path: Path, dataset: WebDataset, local_cfg: WebEnvConfig,
        evaluator: EvaluatorProcess) -> None:
    _right(tmp_path, dataset, local_cfg, 0)
    (tmp_path / "notes").mkdir()
    (tmp_path / "9999").mkdir()
    (tmp_path / "0" / "metrics.json").write_text("{broken")
    summary = _score(tmp_path, local_cfg, dataset, evaluator)
    assert [r.task_id for r in summary.tasks] == [0]
    assert any("9999" in w for w in summary.warnings)
    assert any("notes" in w for w in summary.warnings)
    assert any("metrics.json" in w for w in summary.warnings)


def test_refuses_what_it_cannot_score(tmp_path: Path, dataset: WebDataset,
                                      local_cfg: WebEnvConfig) -> None:
    with pytest.raises(UserInputError, match="does not exist"):
        _score(tmp_path / "absent", local_cfg, dataset, None)
    with pytest.raises(UserInputError, match="no task folders"):
        _score(tmp_path, local_cfg, dataset, None)
    _right(tmp_path, dataset, local_cfg, 0)
    only_shop = WebEnvConfig(sites={Site.SHOPPING: SiteConfig(urls=["http://h:1"])})
    with pytest.raises(UserInputError, match="BENCHWRIGHT_WEB_SHOPPING_ADMIN_URL"):
        _score(tmp_path, only_shop, dataset, None)
    with pytest.raises(UserInputError, match=r"no eval_summary\.json"):
        load_summary(tmp_path)
