"""The response adapter: answer shapes -> retrieved_data, outcomes -> statuses, and answers that
the real evaluator then scores."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchwright.sandbox.environments import BuiltEnv
from benchwright.testing.fake_llm import FakeLLMServer
from benchwright.testing.script import Script
from benchwright.web.evaluation.evaluator import EvalRequest, EvalStatus, EvaluatorProcess
from benchwright.web.evaluation.response_adapter import (
    AnswerInput,
    OutcomeKind,
    ParseMethod,
    ResponseStatus,
    adapt,
    parse_items,
)
from benchwright.web.evaluation.synthetic import har, start_entry
from benchwright.web.evaluation.tasks import TaskType, WebDataset, WebTask
from benchwright.web.sites.config import WebEnvConfig
from benchwright.web.trials.extraction import ExtractorConfig, LLMExtractor

S = {"type": "string"}
N = {"type": "number"}
CUR = {"type": "number", "format": "currency"}
B = {"type": "boolean"}
DUR = {"type": "string", "format": "duration"}
MONTHS = {"type": "object", "properties": {"month": {"type": "string", "format": "month"},
                                           "count": {"type": "number"}}}
RATING = {"type": "object", "properties": {"title": {"type": "string"},
                                           "rating": {"type": "string"}}}

PARSE_CASES: list[tuple[str, dict[str, Any], list[Any], ParseMethod]] = [
    # JSON first
    ('["Sprite"]', S, ["Sprite"], ParseMethod.JSON),
    ('```json\n["a", "b"]\n```', S, ["a", "b"], ParseMethod.JSON),
    ('```\n[1, 2]\n```', N, [1, 2], ParseMethod.JSON),
    ('Answer: ["x", "y"]', S, ["x", "y"], ParseMethod.JSON),
    ('The items are ["x", "y"] as requested.', S, ["x", "y"], ParseMethod.JSON),
    ('"Sprite"', S, ["Sprite"], ParseMethod.JSON),
    ("42", N, [42], ParseMethod.JSON),
    ("[3.5]", N, [3.5], ParseMethod.JSON),
    ('["6"]', N, [6], ParseMethod.JSON),
    ("[299]", S, ["299"], ParseMethod.JSON),
    ("true", B, [True], ParseMethod.JSON),
    ('["yes"]', B, [True], ParseMethod.JSON),
    ('{"month": "May", "count": "8"}', MONTHS, [{"month": "May", "count": 8}], ParseMethod.JSON),
    ('[{"Month": "May", "count": 8}, {"month": "June", "count": 13}]', MONTHS,
     [{"month": "May", "count": 8}, {"month": "June", "count": 13}], ParseMethod.JSON),
    ('{"title": "Bad!", "rating": 1}', RATING, [{"title": "Bad!", "rating": "1"}],
     ParseMethod.JSON),
    # markdown lists and lines
    ("- Digital Watch\n- Band\n- Yoga Strap", S, ["Digital Watch", "Band", "Yoga Strap"],
     ParseMethod.LIST),
    ("* **Band**\n* `Strap`", S, ["Band", "Strap"], ParseMethod.LIST),
    ("1. Alpha\n2. Beta", S, ["Alpha", "Beta"], ParseMethod.LIST),
    ("The products are:\n- A\n- B", S, ["A", "B"], ParseMethod.LIST),
    ("The products are:\nAlpha\nBeta", S, ["Alpha", "Beta"], ParseMethod.LINES),
    ("Alpha\nBeta\nGamma", S, ["Alpha", "Beta", "Gamma"], ParseMethod.LINES),
    ("- 12\n- 7", N, [12, 7], ParseMethod.LIST),
    ("- yes\n- no", B, [True, False], ParseMethod.LIST),
    # "A, B and C"
    ("Digital Watch, Band, Stasis Ball and Yoga Strap", S,
     ["Digital Watch", "Band", "Stasis Ball", "Yoga Strap"], ParseMethod.CONJUNCTION),
    ("Red, Green, and Blue.", S, ["Red", "Green", "Blue"], ParseMethod.CONJUNCTION),
    ("Jan; Feb; Mar", S, ["Jan", "Feb", "Mar"], ParseMethod.CONJUNCTION),
    ('"Tea", "Coffee" and "Milk"', S, ["Tea", "Coffee", "Milk"], ParseMethod.CONJUNCTION),
    ("The colours are: red, green and blue", S, ["red", "green", "blue"],
     ParseMethod.CONJUNCTION),
    ("Cable (USB, 2m), Plug and Lamp", S, ["Cable (USB, 2m)", "Plug", "Lamp"],
     ParseMethod.CONJUNCTION),
    # single values: quotes and markdown stripped, commas inside names kept
    ("Sprite", S, ["Sprite"], ParseMethod.SINGLE),
    ("**Quest Lumaflex\u2122 Band**", S, ["Quest Lumaflex\u2122 Band"], ParseMethod.SINGLE),
    ("\u201cOrder #170\u201d.", S, ["Order #170"], ParseMethod.SINGLE),
    ("Anker USB C Charger 30W, 711 Charger", S, ["Anker USB C Charger 30W, 711 Charger"],
     ParseMethod.SINGLE),
    ("`7min`", DUR, ["7min"], ParseMethod.SINGLE),
    ("## INV-2024-00457", S, ["INV-2024-00457"], ParseMethod.SINGLE),
    # numbers as the schema wants
    ("$36.39", CUR, [36.39], ParseMethod.NUMBERS),
    ("The total was $1,234.50.", CUR, [1234.5], ParseMethod.NUMBERS),
    ("There are 6 reviews.", N, [6], ParseMethod.NUMBERS),
    ("-3", N, [-3], ParseMethod.JSON),
    ("None of them", N, [0], ParseMethod.NUMBERS),
    ("**51.95**", CUR, [51.95], ParseMethod.NUMBERS),
    # booleans
    ("Yes", B, [True], ParseMethod.SINGLE),
    ("No, it is not in stock.", B, [False], ParseMethod.SINGLE),
    ("TRUE", B, [True], ParseMethod.SINGLE),
    # key: value objects
    ("month: May, count: 8", MONTHS, [{"month": "May", "count": 8}], ParseMethod.KEY_VALUES),
    ("- Month: May, Count: 8\n- Month: June, Count: 13", MONTHS,
     [{"month": "May", "count": 8}, {"month": "June", "count": 13}], ParseMethod.KEY_VALUES),
    ("title: Bad!\nrating: 1", RATING, [{"title": "Bad!", "rating": "1"}],
     ParseMethod.KEY_VALUES),
]


@pytest.mark.parametrize(("text", "schema", "items", "method"), PARSE_CASES,
                         ids=[f"{i}:{c[0][:24]}" for i, c in enumerate(PARSE_CASES)])
def test_answer_shapes(text: str, schema: dict[str, Any], items: list[Any],
                       method: ParseMethod) -> None:
    parsed = parse_items(text, schema)
    assert (parsed.items, parsed.method) == (items, method)
    assert all(type(a) is type(b) for a, b in zip(parsed.items or [], items, strict=True))


@pytest.mark.parametrize(("text", "schema"), [
    ("The best seller of 2022 is the Sprite Yoga Strap", S),
    ("There were 3 orders totalling $845.49", N),
    ("It depends on the size chosen by the customer.", B),
    ("May had eight orders", MONTHS),
])
def test_prose_is_ambiguous(text: str, schema: dict[str, Any]) -> None:
    assert parse_items(text, schema).ambiguous


def _task(task_type: TaskType, status: str = "SUCCESS", schema: dict[str, Any] | None = None,
          task_id: int = 1) -> WebTask:
    spec = {"evaluator": "AgentResponseEvaluator",
            "results_schema": {"type": "array", "items": schema} if schema else {"type": "null"},
            "expected": {"task_type": task_type.lower(), "status": status}}
    return WebTask(task_id=task_id, sites=("shopping",), intent_template_id=1,
                   start_urls=("__SHOPPING__",), intent="Find it.", eval=(spec,), revision=1,
                   task_type=task_type, expected_status=status)


def _answer(text: str | None, success: bool | None = True,
            kind: OutcomeKind = OutcomeKind.ANSWERED, errors: list[str] | None = None
            ) -> AnswerInput:
    return AnswerInput(kind=kind, final_text=text, agent_success=success, errors=errors or [])


STATUS_CASES: list[tuple[AnswerInput, ResponseStatus]] = [
    (_answer("Sprite"), ResponseStatus.SUCCESS),
    (_answer("Sprite", success=None), ResponseStatus.SUCCESS),
    (_answer("Sprite", kind=OutcomeKind.STEP_LIMIT), ResponseStatus.UNKNOWN_ERROR),
    (_answer(None, None, OutcomeKind.FAILED, ["browser crashed"]), ResponseStatus.UNKNOWN_ERROR),
    (_answer("The order does not exist", False), ResponseStatus.NOT_FOUND_ERROR),
    (_answer("I couldn\u2019t find any such product", False), ResponseStatus.NOT_FOUND_ERROR),
    (_answer("This is impossible: there is no such forum", False),
     ResponseStatus.NOT_FOUND_ERROR),
    (_answer("There is no order #999", None), ResponseStatus.NOT_FOUND_ERROR),
    (_answer("Permission denied for this page", False), ResponseStatus.PERMISSION_DENIED_ERROR),
    (_answer("You are not authorized to edit it", False),
     ResponseStatus.PERMISSION_DENIED_ERROR),
    (_answer("The platform does not support deleting reviews", False),
     ResponseStatus.ACTION_NOT_ALLOWED_ERROR),
    (_answer("The email address is invalid", False), ResponseStatus.DATA_VALIDATION_ERROR),
    (_answer("Something went wrong", False), ResponseStatus.UNKNOWN_ERROR),
    (_answer("NOT_FOUND_ERROR: gone", True), ResponseStatus.NOT_FOUND_ERROR),
    (_answer("status: permission_denied_error", None), ResponseStatus.PERMISSION_DENIED_ERROR),
    (_answer('{"task_type": "RETRIEVE", "status": "not_found_error", "retrieved_data": null}',
             True), ResponseStatus.NOT_FOUND_ERROR),
    (_answer("Done", False, OutcomeKind.FAILED), ResponseStatus.UNKNOWN_ERROR),
]


@pytest.mark.parametrize(("answer", "status"), STATUS_CASES)
def test_statuses(answer: AnswerInput, status: ResponseStatus) -> None:
    adapted = adapt(_task(TaskType.RETRIEVE, schema=S), answer)
    assert adapted.response.status is status
    assert adapted.response.task_type is TaskType.RETRIEVE
    if status is not ResponseStatus.SUCCESS:
        assert adapted.response.retrieved_data is None and adapted.response.error_details


@pytest.mark.parametrize("task_type", [TaskType.MUTATE, TaskType.NAVIGATE])
def test_task_type_comes_from_the_task_and_only_retrieve_has_data(task_type: TaskType) -> None:
    answer = _answer('{"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": ["x"]}')
    response = adapt(_task(task_type), answer).response
    assert (response.task_type, response.status, response.retrieved_data) == (
        task_type, ResponseStatus.SUCCESS, None)


def test_embedded_response_keeps_its_data_coerced() -> None:
    text = 'Final: {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": ["6"]}'
    adapted = adapt(_task(TaskType.RETRIEVE, schema=N), _answer(text))
    assert (adapted.response.retrieved_data, adapted.method) == ([6], ParseMethod.RESPONSE)


# --- the optional LLM step, against the fake LLM server -----------------------------------


def _fake_llm(reply: str) -> FakeLLMServer:
    """The project's fake server answering every tool-less call with `reply`."""
    return FakeLLMServer(Script.model_validate({"turns": [], "untooled": {"text": reply}}))


def test_llm_extraction_reads_ambiguous_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-test")
    with _fake_llm('```json\n{"retrieved_data": ["845.49"]}\n```') as server:
        extractor = LLMExtractor(ExtractorConfig(model="m", base_url=server.base_url + "/v1",
                                                 api_key_env="TEST_KEY"))
        task = _task(TaskType.RETRIEVE, schema=CUR)
        adapted = adapt(task, _answer("There were 3 orders totalling $845.49"), extractor)
        [request] = server.requests
    assert (adapted.response.retrieved_data, adapted.method) == ([845.49], ParseMethod.LLM)
    bearer = hashlib.sha256(b"Bearer sk-test").hexdigest()[:8]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"<redacted:{bearer}>"
    assert "845.49" in request.body["messages"][-1]["content"]


def test_llm_extraction_is_skipped_for_clear_answers_and_survives_failures() -> None:
    with _fake_llm("I cannot help with that.") as server:
        extractor = LLMExtractor(ExtractorConfig(model="m", base_url=server.base_url))
        task = _task(TaskType.RETRIEVE, schema=N)
        assert adapt(task, _answer("7"), extractor).response.retrieved_data == [7]
        assert server.requests == []
        adapted = adapt(task, _answer("There were 3 orders and 4 returns"), extractor)
    assert adapted.response.retrieved_data == [3, 4] and adapted.ambiguous
    assert "extractor failed" in adapted.notes[0]


# --- answers the real evaluator scores ------------------------------------------------------

REAL_CASES = [
    (1, "The best-selling brand is:\n- **Sprite**", True),
    (11, "There are 6 reviews that mention it.", True),
    (94, "The grand total was $36.39.", True),
    (36, "Yes, it is.", True),
    (52, "`7min`", True),
    (8, "I could not find it: the place does not exist on the map", False),
    (107, "- month: May, count: 8\n- month: June, count: 13\n- month: July, count: 9\n"
          "- month: August, count: 8\n- month: September, count: 10\n"
          "- month: October, count: 4\n- month: November, count: 5\n"
          "- month: December, count: 10", True),
    (11, "There are 7 reviews that mention it.", True),
]


@pytest.fixture(scope="module")
def evaluator(wv_env: BuiltEnv) -> Iterator[EvaluatorProcess]:
    with EvaluatorProcess.for_env(wv_env) as process:
        yield process


def test_adapted_answers_score_with_the_real_evaluator(
        tmp_path: Path, dataset: WebDataset, local_cfg: WebEnvConfig,
        evaluator: EvaluatorProcess) -> None:
    scores = []
    for i, (task_id, text, success) in enumerate(REAL_CASES):
        task = dataset.tasks[task_id]
        response = adapt(task, _answer(text, success)).response
        folder = tmp_path / str(i)
        folder.mkdir()
        (folder / "network.har").write_text(json.dumps(har([start_entry(task, local_cfg)])))
        verdict = evaluator.evaluate(EvalRequest(
            id=str(i), task_id=task_id, agent_response=response.model_dump(mode="json"),
            har_path=folder / "network.har", config=local_cfg.evaluator_environments()))
        assert verdict.status is not EvalStatus.ERROR, verdict.error_msg
        scores.append(verdict.score)
    assert scores == [1.0] * (len(REAL_CASES) - 1) + [0.0]
