"""A synthetic batch of agent logs built from the tasks' own `eval` sections, for self-checks.

For RETRIEVE tasks the answer is the expected retrieved_data; for NAVIGATE and MUTATE tasks whose
network checks are simple enough (a literal URL, form fields with literal values) a minimal HAR
holds the last page navigation or the request the evaluator looks for. Other tasks get
deliberately wrong answers only. Used by the parity test (benchwright against the official CLI)
and by bench/web_eval_speed.py; it never contacts a site.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

from pydantic import BaseModel

from benchwright.files.atomic import write_json_atomic
from benchwright.web.evaluation.scoring import AGENT_RESPONSE, NETWORK_HAR
from benchwright.web.evaluation.tasks import TaskType, WebDataset, WebTask
from benchwright.web.sites.config import Site, SiteConfig, WebEnvConfig

LOCAL_PORTS: Final = {Site.SHOPPING: "7770", Site.SHOPPING_ADMIN: "7780/admin",
                      Site.REDDIT: "9999", Site.GITLAB: "8023", Site.WIKIPEDIA: "8888",
                      Site.MAP: "3000", Site.HOMEPAGE: "4399"}
_NAV_HEADERS: Final = {"sec-fetch-dest": "document", "sec-fetch-mode": "navigate",
                       "sec-fetch-user": "?1",
                       "accept": "text/html,application/xhtml+xml,application/xml;q=0.9"}
_SIMPLE_SPEC_KEYS: Final = {"evaluator", "expected", "ignored_query_params_patterns",
                            "ignored_query_params", "ignored_post_data_params_patterns",
                            "last_event_only"}
_SIMPLE_EXPECTED_KEYS: Final = {"url", "http_method", "post_data", "response_status",
                                "query_params"}


class Intent(StrEnum):
    """What a synthetic log is meant to earn."""

    RIGHT = "right"
    WRONG = "wrong"


class SyntheticLog(BaseModel):
    """One written task folder."""

    task_id: int
    """The task."""
    task_type: TaskType
    """Its type."""
    intent: Intent
    """Built to pass (right) or to fail (wrong)."""
    how: str
    """What was written, in a few words."""


def local_config(host: str = "127.0.0.1") -> WebEnvConfig:
    """Every site at http://HOST:<official port> (shopping_admin with /admin)."""
    return WebEnvConfig(sites={site: SiteConfig(urls=[f"http://{host}:{port}"])
                               for site, port in LOCAL_PORTS.items()})


def render(url: str, config: WebEnvConfig) -> str:
    """Placeholders such as __SHOPPING__ replaced with the configured base URLs."""
    for site in sorted(Site, key=lambda s: -len(s.placeholder)):
        base = config.site(site).url
        if base is not None:
            url = url.replace(site.placeholder, base)
    return url


def har_entry(method: str, url: str, *, status: int = 200, navigation: bool = False,
              form: dict[str, str] | None = None) -> dict[str, Any]:
    """A HAR entry with the request headers and body the evaluator reads."""
    headers = dict(_NAV_HEADERS) if navigation else {"accept": "*/*"}
    request: dict[str, Any] = {"method": method, "url": url, "httpVersion": "HTTP/1.1",
                               "headers": [{"name": k, "value": v} for k, v in headers.items()],
                               "queryString": [], "cookies": [], "headersSize": -1,
                               "bodySize": 0}
    if form is not None:
        request["postData"] = {"mimeType": "application/x-www-form-urlencoded",
                               "text": urlencode(form)}
    redirect = url if 300 <= status < 400 else ""
    response = {"status": status, "statusText": "", "httpVersion": "HTTP/1.1", "headers": [],
                "cookies": [], "content": {"size": 0, "mimeType": "text/html", "text": ""},
                "redirectURL": redirect, "headersSize": -1, "bodySize": 0}
    return {"startedDateTime": "2026-01-01T00:00:00.000Z", "time": 1.0, "request": request,
            "response": response, "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}}


def har(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A HAR document around these entries."""
    return {"log": {"version": "1.2", "creator": {"name": "benchwright-synthetic",
                                                  "version": "1"}, "entries": list(entries)}}


def start_entry(task: WebTask, config: WebEnvConfig) -> dict[str, Any]:
    """The navigation to the task's first start URL."""
    return har_entry("GET", render(task.start_urls[0], config), navigation=True)


def right_network(task: WebTask, config: WebEnvConfig) -> list[dict[str, Any]] | None:
    """Entries satisfying every network check of the task, or None when too complex to build."""
    specs = task.network_specs
    if not specs or not all(_simple(spec) for spec in specs):
        return None
    if task.task_type is TaskType.NAVIGATE and len(specs) != 1:
        return None
    return [start_entry(task, config), *(_entry_for(spec, config) for spec in specs)]


def _simple(spec: dict[str, Any]) -> bool:
    expected = spec["expected"]
    if set(spec) - _SIMPLE_SPEC_KEYS or set(expected) - _SIMPLE_EXPECTED_KEYS:
        return False
    urls = expected["url"] if isinstance(expected["url"], list) else [expected["url"]]
    post = expected.get("post_data") or {}
    return (not str(urls[0]).startswith("^")
            and all(_literal(k, v) for k, v in post.items())
            and all(isinstance(v, list) and len(v) == 1 and _literal("q", v[0])
                    for v in (expected.get("query_params") or {}).values()))


def _literal(key: str, value: Any) -> bool:
    return (not key.startswith("$") and isinstance(value, (str, int, float))
            and not isinstance(value, bool) and not str(value).startswith("^"))


def _entry_for(spec: dict[str, Any], config: WebEnvConfig) -> dict[str, Any]:
    expected = spec["expected"]
    url = expected["url"][0] if isinstance(expected["url"], list) else expected["url"]
    url = render(url, config)
    query = {k: v[0] for k, v in (expected.get("query_params") or {}).items()}
    if query:
        url += ("&" if "?" in url else "?") + urlencode(query)
    method = str(expected.get("http_method", "GET")).upper()
    form = {k: str(v) for k, v in (expected.get("post_data") or {}).items()} or None
    return har_entry(method, url, status=int(expected.get("response_status", 200)),
                     navigation=method == "GET", form=form if method != "GET" else None)


def expected_answer(task: WebTask) -> dict[str, Any]:
    """The agent response the task expects."""
    expected = task.expected_response
    return {"task_type": str(task.task_type), "status": task.expected_status,
            "retrieved_data": expected.get("retrieved_data"), "error_details": None}


def write_log(folder: Path, response: Any, entries: list[dict[str, Any]]) -> None:
    """agent_response.json and network.har in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / AGENT_RESPONSE, response)
    (folder / NETWORK_HAR).write_text(json.dumps(har(entries)), encoding="utf-8")


def _plain_retrieve(task: WebTask) -> bool:
    data = task.expected_response.get("retrieved_data")
    return (task.task_type is TaskType.RETRIEVE and task.expected_status == "SUCCESS"
            and isinstance(data, list) and not any(isinstance(x, list) for x in data))


def right_log(task: WebTask, config: WebEnvConfig) -> tuple[Any, list[dict[str, Any]]] | None:
    """(response, entries) that should pass, or None when the task is too complex to fake."""
    if task.network_specs:
        entries = right_network(task, config)
        return (expected_answer(task), entries) if entries is not None else None
    if _plain_retrieve(task) or task.expected_status != "SUCCESS":
        return expected_answer(task), [start_entry(task, config)]
    return None


def wrong_log(task: WebTask, config: WebEnvConfig, variant: int) -> tuple[Any, str,
                                                                           list[dict[str, Any]]]:
    """(response, how, entries) that should fail; `variant` picks the kind of mistake."""
    answer = expected_answer(task)
    entries = [start_entry(task, config)]
    if variant % 3 == 0:
        other = TaskType.NAVIGATE if task.task_type is not TaskType.NAVIGATE else TaskType.RETRIEVE
        return {**answer, "task_type": str(other)}, "wrong task_type", entries
    if variant % 3 == 1 and task.task_type is TaskType.RETRIEVE:
        return ({**answer, "retrieved_data": ["certainly not the answer"]}, "wrong data",
                entries)
    status = "NOT_FOUND_ERROR" if task.expected_status == "SUCCESS" else "SUCCESS"
    return {**answer, "status": status}, "wrong status, no network trace of the work", entries


def pick_tasks(dataset: WebDataset, per_group: int = 2) -> list[WebTask]:
    """Up to `per_group` fakeable tasks per (site, type), plus as many unfakeable ones per type."""
    config = local_config()
    chosen: dict[tuple[str, str, bool], list[WebTask]] = {}
    for task in dataset.tasks.values():
        if task.unpassable is not None:
            continue
        fakeable = right_log(task, config) is not None
        key = (task.sites[0], str(task.task_type), fakeable)
        group = chosen.setdefault(key, [])
        if len(group) < (per_group if fakeable else 1):
            group.append(task)
    return sorted((t for group in chosen.values() for t in group), key=lambda t: t.task_id)


def build_batch(root: Path, dataset: WebDataset, config: WebEnvConfig | None = None,
                per_group: int = 2) -> list[SyntheticLog]:
    """Write one folder per picked task under `root`: right answers where they can be built,
    every third fakeable task and every unfakeable one deliberately wrong."""
    config = config or local_config()
    logs: list[SyntheticLog] = []
    for i, task in enumerate(pick_tasks(dataset, per_group)):
        right = right_log(task, config)
        if right is not None and i % 3 != 2:
            write_log(root / str(task.task_id), right[0], right[1])
            logs.append(SyntheticLog(task_id=task.task_id, task_type=task.task_type,
                                     intent=Intent.RIGHT, how="expected answer and trace"))
            continue
        response, how, entries = wrong_log(task, config, i)
        write_log(root / str(task.task_id), response, entries)
        logs.append(SyntheticLog(task_id=task.task_id, task_type=task.task_type,
                                 intent=Intent.WRONG, how=how))
    return logs
