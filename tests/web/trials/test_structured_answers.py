"""Structured final responses: the prompts, the schema path into agent_response.json, the
adapter as the fallback, and how a model that misses the schema is told apart."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import UserInputError
from benchwright.web.browser.prompts import PLAIN, STRUCTURED, uses_schema
from benchwright.web.evaluation.final_response import STATUS_CODES, FinalResponse, ResponseSource
from benchwright.web.evaluation.tasks import TaskType, WebTask
from benchwright.web.trials.models import TrialOutcome, TrialStatus
from benchwright.web.trials.trial import write_trial_files

SITES = {"shopping": "http://127.0.0.1:4100", "shopping_admin": "http://127.0.0.1:4101/admin"}
NEEDS_BROWSER_USE = pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                                       reason="needs browser-use: pip install 'benchwright[web]'")


def _task(task_type: TaskType = TaskType.RETRIEVE) -> WebTask:
    return WebTask(task_id=9001, sites=("shopping",), intent_template_id=9001,
                   start_urls=("__SHOPPING__/customer/account",),
                   intent="What is the grand total of my most recent order?",
                   eval=({"evaluator": "AgentResponseEvaluator", "results_schema": {
                       "type": "array", "items": {"type": "number"}}},),
                   revision=1, task_type=task_type, expected_status="SUCCESS")


def _files(tmp_path: Path, outcome: TrialOutcome) -> tuple[dict[str, Any], dict[str, Any]]:
    write_trial_files(tmp_path, _task(), outcome)
    return (json.loads((tmp_path / "agent_response.json").read_text()),
            json.loads((tmp_path / "metrics.json").read_text()))


def test_structured_prompt_gives_sites_start_task_types_and_codes() -> None:
    from benchwright.web.browser.trial_agent import task_prompt

    text = task_prompt(_task(), SITES, STRUCTURED)
    assert "http://127.0.0.1:4100/customer/account" in text  # start URL, placeholder replaced
    assert "online store" in text and "signed in" in text
    assert all(code in text for code in STATUS_CODES)
    assert all(kind in text for kind in ("RETRIEVE", "MUTATE", "NAVIGATE"))
    assert "retrieved_data" in text and "error_details" in text
    assert "__SHOPPING__" not in text
    plain = task_prompt(_task(), SITES, PLAIN)
    assert "call done with just the answer" in plain and "NOT_FOUND_ERROR" not in plain
    assert uses_schema(STRUCTURED) and not uses_schema(PLAIN)


def test_prompt_file_is_a_template(tmp_path: Path) -> None:
    from benchwright.web.browser.trial_agent import task_prompt

    path = tmp_path / "prompt.txt"
    path.write_text("Sites:\n{{ sites }}\nDo: {{ task }} from {{ start_urls }}\n"
                    "{{ response_format }}")
    text = task_prompt(_task(), SITES, str(path))
    assert text.startswith("Sites:\n- http://127.0.0.1:4100: an online store")
    assert "Do: What is the grand total" in text and "UNKNOWN_ERROR" in text
    path.write_text("{{ nope }}")
    with pytest.raises(UserInputError, match="'nope' is undefined"):
        task_prompt(_task(), SITES, str(path))
    path.write_text("Do: {task}")  # the format templates had before they were jinja
    with pytest.raises(UserInputError, match=r"write \{\{ task \}\}"):
        task_prompt(_task(), SITES, str(path))


def test_a_validated_response_is_written_as_it_is(tmp_path: Path) -> None:
    given = FinalResponse(task_type=TaskType.RETRIEVE, status="SUCCESS",  # type: ignore[arg-type]
                          retrieved_data=[51.95]).model_dump(mode="json")
    response, metrics = _files(tmp_path, TrialOutcome(
        status=TrialStatus.COMPLETED, final_text="ignored", agent_success=True,
        structured_response=given))
    assert response == given
    assert metrics["response_source"] == ResponseSource.SCHEMA == "schema"


def test_without_one_the_adapter_reads_the_text(tmp_path: Path) -> None:
    response, metrics = _files(tmp_path, TrialOutcome(
        status=TrialStatus.COMPLETED, final_text="The grand total was $51.95.",
        agent_success=True))
    assert response["retrieved_data"] == [51.95] and response["status"] == "SUCCESS"
    assert metrics["response_source"] == "adapter"


def test_the_scripted_agent_fills_the_schema_from_its_done_text() -> None:
    from benchwright.web.browser.scripted_model import scripted_answer

    answer = scripted_answer(_task())
    assert FinalResponse.model_validate(answer("$51.95", True)).retrieved_data == [51.95]
    failed = FinalResponse.model_validate(answer("NOT_FOUND_ERROR: no such order", False))
    assert failed.status == "NOT_FOUND_ERROR" and failed.retrieved_data is None


def _agent_output() -> Any:
    from benchwright.web.browser.imports import browser_use_module

    browser_use_module()
    from browser_use.agent.views import AgentOutput
    from browser_use.tools.service import Tools

    tools = Tools(output_model=FinalResponse)
    return AgentOutput.type_with_custom_actions(tools.registry.create_action_model())


def _validation_error(done: dict[str, Any]) -> Exception:
    fields = {"thinking": "", "evaluation_previous_goal": "", "memory": "", "next_goal": ""}
    try:
        _agent_output().model_validate_json(json.dumps({**fields, "action": [{"done": done}]}))
    except ValueError as exc:
        return exc
    raise AssertionError("validated")


@NEEDS_BROWSER_USE
def test_a_free_text_done_is_told_from_an_invalid_response() -> None:
    from benchwright.web.browser.answer_watch import invalid_fields, plain_done

    prose = _validation_error({"text": "It was $51.95", "success": True})
    assert plain_done(prose) is not None and plain_done(prose).text == "It was $51.95"  # type: ignore[union-attr]
    bad = _validation_error({"success": True, "data": {
        "task_type": "RETRIEVE", "status": "ALL_GOOD", "retrieved_data": [1]}})
    assert plain_done(bad) is None  # type: ignore[arg-type]
    assert any("status = 'ALL_GOOD'" in line for line in invalid_fields(bad))  # type: ignore[arg-type]
