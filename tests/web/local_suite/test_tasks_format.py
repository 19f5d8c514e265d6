"""The suite's tasks are valid WebArena Verified tasks, cannot collide with the official ones,
cover every task type, and each has a valid reference script."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.sandbox.environments import BuiltEnv
from benchwright.web.evaluation.tasks import TaskType, WebDataset
from benchwright.web.local_suite import (
    ActionScript,
    dataset_path,
    load_local_dataset,
    load_script,
    reference_script,
    script_path,
    wrong_script_ids,
)

_VALIDATE = """
import json, sys
from webarena_verified.types.task import WebArenaVerifiedTask
tasks = [WebArenaVerifiedTask.model_validate(t) for t in json.load(open(sys.argv[1]))]
print(json.dumps([t.task_id for t in tasks]))
"""


def test_every_task_validates_with_the_official_model(wv_env: BuiltEnv) -> None:
    out = subprocess.run([str(wv_env.python), "-c", _VALIDATE, str(dataset_path())],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == sorted(load_local_dataset().tasks)


def test_ids_and_templates_do_not_collide_with_the_official_dataset(dataset: WebDataset) -> None:
    local = load_local_dataset().tasks.values()
    assert len(local) >= 10 and all(task.task_id >= 9001 for task in local)
    assert not {t.task_id for t in local} & set(dataset.tasks)
    official_templates = {t.intent_template_id for t in dataset.tasks.values()}
    assert not {t.intent_template_id for t in local} & official_templates


def test_types_sites_and_an_unachievable_task() -> None:
    local = list(load_local_dataset().tasks.values())
    assert {t.task_type for t in local} == set(TaskType)
    assert {s.value for t in local for s in t.sites} == {"shopping", "shopping_admin", "reddit",
                                                         "wikipedia"}
    assert any(t.expected_status != "SUCCESS" for t in local)
    for task in local:
        assert all(url.startswith(tuple(s.placeholder for s in task.sites))
                   for url in task.start_urls)
        raw = json.dumps(task.eval)
        assert all(f"__{name}__" not in raw or any(s.placeholder == f"__{name}__"
                                                    for s in task.sites)
                   for name in ("SHOPPING", "SHOPPING_ADMIN", "REDDIT", "WIKIPEDIA"))


def test_every_task_has_a_reference_script() -> None:
    for task_id in load_local_dataset().tasks:
        script = reference_script(task_id)
        assert script.task_id == task_id and script.steps[0].kind == "navigate"
    assert wrong_script_ids()
    for task_id in wrong_script_ids():
        assert load_script(script_path(task_id, wrong=True)).task_id == task_id


def test_a_bad_script_is_one_friendly_error(tmp_path: Path) -> None:
    cases = {"no_done.yaml": "task_id: 1\nsteps:\n  - navigate: {url: x}\n",
             "two.yaml": "task_id: 1\nsteps:\n  - {navigate: {url: x}, click: {match: y}}\n",
             "typo.yaml": "task_id: 1\nsteps:\n  - clik: {match: y}\n",
             "yaml.yaml": "task_id: [\n"}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(UserInputError) as info:
            load_script(tmp_path / name)
        assert name in str(info.value)
    with pytest.raises(UserInputError):
        load_script(tmp_path / "absent.yaml")


def test_placeholders_become_site_urls() -> None:
    urls = {"shopping": "http://127.0.0.1:5/", "shopping_admin": "http://127.0.0.1:6/admin"}
    script = ActionScript.model_validate({"task_id": 1, "steps": [
        {"navigate": {"url": "__SHOPPING_ADMIN__/sales/order"}},
        {"navigate": {"url": "__SHOPPING__"}}, {"done": {"text": "ok"}}]}).with_sites(urls)
    assert [step.args["url"] for step in script.steps[:2]] == [
        "http://127.0.0.1:6/admin/sales/order", "http://127.0.0.1:5"]
