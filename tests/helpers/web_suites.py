"""A tiny suite of our own in the WebArena Verified dataset format, for run tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

SITE_URLS = {"shopping": "http://127.0.0.1:47770", "reddit": "http://127.0.0.1:49999",
             "wikipedia": "http://127.0.0.1:48888"}


def _task(task_id: int, sites: list[str], task_type: str, *, status: str = "SUCCESS",
          data: list[Any] | None = None, schema: dict[str, Any] | None = None,
          network: dict[str, Any] | None = None) -> dict[str, Any]:
    expected = {"task_type": task_type, "status": status, "retrieved_data": data}
    evals: list[dict[str, Any]] = [{"evaluator": "AgentResponseEvaluator",
                                    "results_schema": schema or {"type": "null"},
                                    "expected": expected}]
    if network is not None:
        evals.append({"evaluator": "NetworkEventEvaluator", "expected": network})
    start = f"__{sites[0].upper()}__"
    return {"sites": sites, "task_id": task_id, "intent_template_id": task_id,
            "start_urls": [start], "intent": f"Fixture task {task_id}.",
            "intent_template": f"Fixture task {task_id}.", "instantiation_dict": {},
            "eval": evals, "revision": 1}


NUMBERS = {"type": "array", "items": {"type": "number"}}
STRINGS = {"type": "array", "items": {"type": "string"}}
TASKS = [
    _task(7001, ["shopping"], "retrieve", data=[42.5], schema=NUMBERS),
    _task(7002, ["shopping"], "mutate", network={
        "url": "__SHOPPING__/cart/add", "http_method": "POST",
        "post_data": {"product": "3", "qty": "1"}, "response_status": 302}),
    _task(7003, ["shopping"], "retrieve", status="NOT_FOUND_ERROR"),
    _task(7004, ["reddit"], "retrieve", data=["gardener"], schema=STRINGS),
    _task(7005, ["reddit"], "mutate", network={
        "url": "__REDDIT__/submit", "http_method": "POST",
        "post_data": {"title": "Hello"}, "response_status": 302}),
    _task(7006, ["wikipedia"], "navigate", network={"url": "__WIKIPEDIA__/wiki/Some_Page"}),
    _task(7007, ["reddit", "shopping"], "retrieve", data=["both"], schema=STRINGS),
]


def write_suite(folder: Path) -> tuple[Path, Path]:
    """tasks.json, scripts/<id>.yaml and env.yaml in `folder`; returns (tasks, env)."""
    folder.mkdir(parents=True, exist_ok=True)
    tasks = folder / "tasks.json"
    tasks.write_text(json.dumps(TASKS, indent=1), encoding="utf-8")
    (folder / "scripts").mkdir(exist_ok=True)
    for task in TASKS:
        (folder / "scripts" / f"{task['task_id']}.yaml").write_text(
            yaml.safe_dump({"task_id": task["task_id"], "steps": [{"done": {"text": "x"}}]}))
    env = folder / "env.yaml"
    env.write_text(yaml.safe_dump({"sites": {k: {"url": v} for k, v in SITE_URLS.items()}}))
    return tasks, env
