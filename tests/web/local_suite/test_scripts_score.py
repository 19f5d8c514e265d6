"""The key check: real Chromium traffic from each reference script scores 1 with the official
evaluator, and the deliberately wrong scripts (and wrong answers) score 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.web.evaluation.evaluator import EvalRequest, EvaluatorProcess
from benchwright.web.evaluation.tasks import TaskType, WebTask
from benchwright.web.local_suite import (
    LocalSuite,
    dataset_path,
    load_local_dataset,
    load_script,
    script_path,
    wrong_script_ids,
)
from tests.helpers.cdp_driver import Cdp, Tab

TASKS = load_local_dataset().tasks


def _record(chromium: Cdp, suite: LocalSuite, script: Path, out: Path) -> tuple[str, Path]:
    """Reset the sites, replay the script in a fresh context; the done text and the HAR's path."""
    suite.reset()
    tab = Tab(chromium, out / "downloads")
    try:
        text = tab.run(load_script(script), suite.site_urls)
        har = tab.har()
    finally:
        tab.close()
    path = out / "network.har"
    path.write_text(json.dumps(har))
    return text, path


def _score(evaluator: EvaluatorProcess, suite: LocalSuite, task: WebTask,
           response: dict[str, Any], har: Path) -> float:
    verdict = evaluator.evaluate(EvalRequest(
        id=str(task.task_id), task_id=task.task_id, agent_response=response, har_path=har,
        config=suite.web_config().evaluator_environments(), dataset=dataset_path()))
    assert verdict.status.value != "error", verdict.error_msg
    return verdict.score


def _wrong_answer(task: WebTask) -> dict[str, Any]:
    first = task.expected_response["retrieved_data"][0]
    wrong = first + 7 if isinstance(first, int | float) else "nobody"
    return {**task.expected_response, "retrieved_data": [wrong]}


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_script_scores_one(task_id: int, chromium: Cdp, suite: LocalSuite,
                                     evaluator: EvaluatorProcess, tmp_path: Path) -> None:
    task = TASKS[task_id]
    text, har = _record(chromium, suite, script_path(task_id), tmp_path)
    entries = json.loads(har.read_text())["log"]["entries"]
    assert any(h["name"].lower() == "sec-fetch-user"
               for e in entries for h in e["request"]["headers"])
    for item in task.expected_response.get("retrieved_data") or []:
        assert str(item) in text  # the script's final answer carries the expected value
    if task.expected_status != "SUCCESS":
        assert task.expected_status in text and not load_script(script_path(task_id)).final.success
    assert _score(evaluator, suite, task, task.expected_response, har) == 1.0
    if task.task_type is TaskType.RETRIEVE and task.expected_status == "SUCCESS":
        assert _score(evaluator, suite, task, _wrong_answer(task), har) == 0.0
    wrong_type = {**task.expected_response, "task_type": "NAVIGATE" if task.task_type
                  is not TaskType.NAVIGATE else "RETRIEVE"}
    assert _score(evaluator, suite, task, wrong_type, har) == 0.0


@pytest.mark.parametrize("task_id", wrong_script_ids())
def test_wrong_script_scores_zero(task_id: int, chromium: Cdp, suite: LocalSuite,
                                  evaluator: EvaluatorProcess, tmp_path: Path) -> None:
    task = TASKS[task_id]
    _, har = _record(chromium, suite, script_path(task_id, wrong=True), tmp_path)
    assert _score(evaluator, suite, task, task.expected_response, har) == 0.0


def test_there_are_wrong_scripts_of_both_kinds() -> None:
    kinds = {TASKS[i].task_type for i in wrong_script_ids()}
    assert {TaskType.MUTATE, TaskType.NAVIGATE} <= kinds
