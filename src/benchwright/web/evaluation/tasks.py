"""The 812 WebArena Verified tasks and the hard / non-hard subsets, read from the evaluator's wheel.

The dataset ships inside `webarena_verified/assets/dataset/`; benchwright reads those JSON files
directly (no import of the package, which lives in its own environment) into `WebTask` models.
Filters: task ids with ranges (`0-50,77`), sites (a task matches when it touches any listed
site), template id and subset. Known-unpassable tasks are flagged, never dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchwright.errors import BenchwrightError, InfrastructureError, UserInputError
from benchwright.files.untrusted import (
    decode_untrusted,
    parse_untrusted_json,
    read_untrusted_bytes,
)
from benchwright.web.sites.config import Site

DATASET_FILE = "webarena-verified.json"
SUBSET_FILES = {"hard": "subsets/webarena-verified-hard.json",
                "non-hard": "subsets/webarena-verified-non-hard.json"}
UNKNOWN_TEMPLATE = -1
MAX_TASK_ID = 99_999
"""Ids above it are refused (WebArena's run to 811, the local suite's to about 9100)."""


class TaskType(StrEnum):
    """What the task asks for, from its expected agent response."""

    RETRIEVE = "RETRIEVE"
    MUTATE = "MUTATE"
    NAVIGATE = "NAVIGATE"


class Subset(StrEnum):
    """The dataset's published subsets."""

    HARD = "hard"
    NON_HARD = "non-hard"


class Unpassable(StrEnum):
    """Why a task cannot be passed with webarena-verified 1.2.3."""

    KNOWN = "known"
    PROBABLE = "probable"


# Measured on webarena-verified 1.2.3: no correct agent can score these.
KNOWN_UNPASSABLE: frozenset[int] = frozenset({319, 429, 699, 700, 811})
PROBABLY_UNPASSABLE: frozenset[int] = frozenset(range(676, 681))


def unpassable_flag(task_id: int) -> Unpassable | None:
    """`known`, `probable`, or None for a task that can be passed."""
    if task_id in KNOWN_UNPASSABLE:
        return Unpassable.KNOWN
    return Unpassable.PROBABLE if task_id in PROBABLY_UNPASSABLE else None


class WebTask(BaseModel):
    """One WebArena Verified task."""

    model_config = ConfigDict(frozen=True)

    task_id: int = Field(ge=0, strict=True)
    """The task's id (0-811 for the official tasks): a non-negative JSON integer, since it names
    the task's folders and script (`tasks/<task_id>/trial_<n>/`, `scripts/<task_id>.yaml`)."""
    sites: tuple[Site, ...]
    """The sites it touches."""
    intent_template_id: int
    """The template it was instantiated from; tasks of one template are near-duplicates."""
    start_urls: tuple[str, ...]
    """Where the agent starts, with placeholders such as `__SHOPPING__`."""
    intent: str
    """The instruction given to the agent."""
    eval: tuple[dict[str, Any], ...]
    """The evaluator specifications, as the dataset has them."""
    revision: int
    """The task's revision."""
    task_type: TaskType
    """RETRIEVE, MUTATE or NAVIGATE, from the expected agent response."""
    expected_status: str
    """The status a correct agent reports (SUCCESS or an error status)."""
    unpassable: Unpassable | None = None
    """Set when the task cannot be passed with this evaluator version."""

    @property
    def expected_response(self) -> dict[str, Any]:
        """The expected agent response of the AgentResponseEvaluator."""
        return dict(_agent_response_spec(self.eval)["expected"])

    @property
    def network_specs(self) -> list[dict[str, Any]]:
        """The NetworkEventEvaluator specifications."""
        return [e for e in self.eval if e.get("evaluator") == "NetworkEventEvaluator"]


class WebDataset(BaseModel):
    """The dataset and its subsets as shipped in one evaluator version."""

    tasks: dict[int, WebTask]
    """Every task by id."""
    subsets: dict[Subset, frozenset[int]]
    """Task ids of each subset."""
    data_checksum: str
    """sha256 of the dataset file (the evaluator's `data_checksum`)."""
    source: Path
    """The dataset folder it was read from."""
    evaluator_file: Path | None = None
    """The tasks JSON the evaluator must load for these tasks; None for its own 812."""

    def in_subset(self, task_id: int, subset: Subset) -> bool:
        """True when the task belongs to the subset."""
        return task_id in self.subsets[subset]


class TaskFilter(BaseModel):
    """Which tasks to keep; every given criterion must hold."""

    task_ids: frozenset[int] | None = None
    """Only these ids."""
    sites: frozenset[Site] | None = None
    """Tasks touching at least one of these sites."""
    template_id: int | None = None
    """Only this intent template."""
    subset: Subset | None = None
    """Only this subset."""

    def keeps(self, task: WebTask, dataset: WebDataset) -> bool:
        """True when the task passes every criterion."""
        return ((self.task_ids is None or task.task_id in self.task_ids)
                and (self.sites is None or not self.sites.isdisjoint(task.sites))
                and (self.template_id is None or task.intent_template_id == self.template_id)
                and (self.subset is None or dataset.in_subset(task.task_id, self.subset)))


def parse_task_ids(spec: str) -> frozenset[int]:
    """`0-50,77` -> {0, ..., 50, 77}; a bad part, or no id at all, is a one-line
    UserInputError. Ids are ASCII digits up to MAX_TASK_ID (int() would also read full-width
    digits, and a huge range would take forever)."""
    ids: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        low, sep, high = (s.strip() for s in part.partition("-"))
        if not _is_id(low) or (sep and not _is_id(high)):
            raise UserInputError(f"--task-ids: {part!r} is neither an id nor a range",
                                 hint=f"write ids (0 to {MAX_TASK_ID}) and ranges such as "
                                 "0-50,77") from None
        first, last = int(low), int(high) if sep else int(low)
        if last < first:
            raise UserInputError(f"--task-ids: range {part!r} runs backwards", hint="write 50-60")
        ids.update(range(first, last + 1))
    if not ids:
        raise UserInputError("--task-ids: no id given", hint="write ids and ranges such as "
                             "0-50,77, or leave the option out for every task")
    return frozenset(ids)


def _is_id(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= len(str(MAX_TASK_ID)) \
        and int(text) <= MAX_TASK_ID


def parse_sites(spec: str) -> frozenset[Site]:
    """`shopping,reddit` -> the sites; an unknown name is a one-line UserInputError."""
    sites = set()
    for name in (p.strip() for p in spec.split(",") if p.strip()):
        site = Site.parse(name)
        if site is None:
            raise UserInputError(f"--sites: unknown site {name!r}",
                                 hint=f"known sites: {', '.join(s.value for s in Site)}")
        sites.add(site)
    if not sites:
        raise UserInputError("--sites: no site given", hint="write sites such as shopping,reddit, "
                             "or leave the option out for every site")
    return frozenset(sites)


def require_known_ids(dataset: WebDataset, ids: frozenset[int] | None,
                      suite: str = "webarena-verified") -> None:
    """Refuse `--task-ids` naming a task the dataset does not have (rather than list nothing)."""
    unknown = sorted((ids or frozenset()) - set(dataset.tasks))
    if unknown:
        known = sorted(dataset.tasks)
        span = f"{known[0]}-{known[-1]}" if known else "(none)"
        raise UserInputError(f"--task-ids: no task {', '.join(map(str, unknown[:10]))}"
                             f"{' ...' if len(unknown) > 10 else ''} in suite {suite}",
                             hint=f"the suite has ids {span}")


def select(dataset: WebDataset, task_filter: TaskFilter) -> list[WebTask]:
    """The tasks the filter keeps, by id."""
    return [t for _, t in sorted(dataset.tasks.items()) if task_filter.keeps(t, dataset)]


def load_env_dataset(python: str | None = None) -> WebDataset:
    """The dataset inside the evaluator's environment (built on first use)."""
    from benchwright.web.evaluation.evaluator import dataset_dir, evaluator_env

    return load_dataset(dataset_dir(evaluator_env(python)))


def load_dataset(dataset_dir: Path) -> WebDataset:
    """The tasks and subsets in a `webarena_verified/assets/dataset` folder."""
    path = dataset_dir / DATASET_FILE
    raw_bytes = _read_bytes(path)
    parsed = (_to_task(raw, path) for raw in _json_list(json.loads(raw_bytes), path))
    tasks = {task.task_id: task for task in parsed}
    subsets = {Subset(name): _subset_ids(dataset_dir / rel) for name, rel in SUBSET_FILES.items()}
    return WebDataset(tasks=tasks, subsets=subsets, source=dataset_dir,
                      data_checksum=hashlib.sha256(raw_bytes).hexdigest())


def load_task_file(path: Path) -> WebDataset:
    """Tasks in one dataset-format JSON file of our own (e.g. the local suite, or a user's
    `--suite FILE`: its faults are bad input, exit 2); no subsets."""
    raw_bytes = read_untrusted_bytes(path, what="the tasks file")
    data = parse_untrusted_json(decode_untrusted(raw_bytes, path, what="the tasks file"), path,
                                what="the tasks file")
    parsed = (_to_task(raw, path, UserInputError) for raw in _json_list(data, path,
                                                                         UserInputError))
    tasks = {task.task_id: task for task in parsed}
    return WebDataset(tasks=tasks, subsets={subset: frozenset() for subset in Subset},
                      source=path.parent, data_checksum=hashlib.sha256(raw_bytes).hexdigest(),
                      evaluator_file=path)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InfrastructureError(f"cannot read the WebArena Verified dataset: {exc.strerror}",
                                  path=path, hint="the evaluator environment may be broken; "
                                  "delete it under ~/.cache/benchwright/envs") from None


def _json_list(data: Any, path: Path,
               error: type[BenchwrightError] = InfrastructureError) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise error("the dataset is not a list of tasks (JSON objects)", path=path)
    return data


def _subset_ids(path: Path) -> frozenset[int]:
    data = json.loads(_read_bytes(path))
    return frozenset(int(i) for i in data["task_ids"])


def _to_task(raw: dict[str, Any], path: Path,
             error: type[BenchwrightError] = InfrastructureError) -> WebTask:
    try:
        expected = _agent_response_spec(raw["eval"])["expected"]
        return WebTask(
            task_id=raw["task_id"], sites=tuple(raw["sites"]),
            intent_template_id=raw["intent_template_id"], start_urls=tuple(raw["start_urls"]),
            intent=raw["intent"], eval=tuple(raw["eval"]), revision=raw["revision"],
            task_type=TaskType(str(expected["task_type"]).upper()),
            expected_status=str(expected["status"]).upper(),
            unpassable=unpassable_flag(raw["task_id"]))
    except (KeyError, TypeError, ValueError, ValidationError) as exc:
        raise error(f"task {raw.get('task_id')!r} does not parse: {_first_line(exc)}",
                    path=path) from None


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return f"missing key {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]


def _agent_response_spec(evals: Iterable[dict[str, Any]]) -> dict[str, Any]:
    for spec in evals:
        if spec.get("evaluator") == "AgentResponseEvaluator":
            return spec
    raise KeyError("no AgentResponseEvaluator")

