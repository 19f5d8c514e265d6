"""The dataset read from the evaluator's wheel, and the task filters."""

from __future__ import annotations

from collections import Counter

import pytest

from benchwright.errors import UserInputError
from benchwright.web.evaluation.tasks import (
    KNOWN_UNPASSABLE,
    Subset,
    TaskFilter,
    TaskType,
    Unpassable,
    WebDataset,
    parse_sites,
    parse_task_ids,
    select,
)
from benchwright.web.sites.config import Site


def test_task_id_specs_take_ranges_and_singles() -> None:
    assert parse_task_ids("0-3,77, 9") == {0, 1, 2, 3, 9, 77}
    assert parse_task_ids("5-5") == {5}
    for bad in ("3-1", "a", "1-b", "1--2"):
        with pytest.raises(UserInputError, match="--task-ids"):
            parse_task_ids(bad)


def test_site_specs_accept_names_and_placeholders() -> None:
    assert parse_sites("shopping, __REDDIT__,SHOPPING_ADMIN") == {
        Site.SHOPPING, Site.REDDIT, Site.SHOPPING_ADMIN}
    with pytest.raises(UserInputError, match="unknown site 'shoping'"):
        parse_sites("shoping")


def test_the_dataset_matches_the_measured_facts(dataset: WebDataset) -> None:
    assert len(dataset.tasks) == 812
    assert len(dataset.subsets[Subset.HARD]) == 258
    assert len(dataset.subsets[Subset.NON_HARD]) == 554
    types = Counter(t.task_type for t in dataset.tasks.values())
    assert types == {TaskType.MUTATE: 374, TaskType.RETRIEVE: 325, TaskType.NAVIGATE: 113}
    assert len({t.intent_template_id for t in dataset.tasks.values()}) == 190
    assert sum(len(t.sites) == 2 for t in dataset.tasks.values()) == 48
    assert len(dataset.data_checksum) == 64


def test_unpassable_tasks_are_flagged_not_dropped(dataset: WebDataset) -> None:
    assert {t.task_id for t in dataset.tasks.values() if t.unpassable is Unpassable.KNOWN} \
        == KNOWN_UNPASSABLE
    assert dataset.tasks[678].unpassable is Unpassable.PROBABLE
    kept = select(dataset, TaskFilter(task_ids=parse_task_ids("318-320")))
    assert [t.task_id for t in kept] == [318, 319, 320]


def test_filters_combine(dataset: WebDataset) -> None:
    ids = select(dataset, TaskFilter(task_ids=parse_task_ids("0-50,77")))
    assert len(ids) == 52
    shopping = select(dataset, TaskFilter(sites=parse_sites("shopping")))
    assert len(shopping) == 192 and all(Site.SHOPPING in t.sites for t in shopping)
    either = select(dataset, TaskFilter(sites=parse_sites("wikipedia,map")))
    assert {t.task_id for t in either} >= {97, 265}
    template = select(dataset, TaskFilter(template_id=270))
    assert {107, 108} <= {t.task_id for t in template}
    assert all(t.intent_template_id == 270 for t in template)
    hard_admin = select(dataset, TaskFilter(sites=parse_sites("shopping_admin"),
                                            subset=Subset.HARD))
    assert hard_admin and all(dataset.in_subset(t.task_id, Subset.HARD) for t in hard_admin)
    non_hard = select(dataset, TaskFilter(subset=Subset.NON_HARD, task_ids=frozenset({108})))
    assert non_hard == []


def test_task_type_comes_from_the_expected_response(dataset: WebDataset) -> None:
    task = dataset.tasks[107]
    assert task.task_type is TaskType.RETRIEVE and task.expected_status == "SUCCESS"
    assert task.start_urls == ("__SHOPPING_ADMIN__",)
    assert task.expected_response["retrieved_data"][0] == {"month": "May", "count": 8}
    assert dataset.tasks[44].task_type is TaskType.NAVIGATE and dataset.tasks[44].network_specs
