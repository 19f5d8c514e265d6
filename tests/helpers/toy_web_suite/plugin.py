"""The toy web benchmark: a suite function, a site, a tiny site server and an evaluator.

Everything here goes through benchwright's public seams only: `Suite` (tasks, scripts, `opener`,
`scorer`), `Site`, and the evaluator's request/verdict models.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchwright.web.evaluation.evaluator import (
    EvalRequest,
    EvalStatus,
    EvaluatorIdentity,
    EvaluatorVerdict,
)
from benchwright.web.evaluation.tasks import WebDataset, load_task_file
from benchwright.web.sites.config import Site, WebEnvConfig
from benchwright.web.trials.suites import Suite, SuiteSession

HERE = Path(__file__).parent
TASKS = HERE / "tasks.json"
TOYSHOP = Site("toyshop")
PAGE = (b"<!doctype html><html><head><title>Toy shop</title></head><body><h1>Toy shop</h1>"
        b"<p id=robot>Toy robot: $12.50</p><p id=train>Toy train: $30.00</p></body></html>")
VERSION = "toy-evaluator/1"


def open_toy(env_config: Path | None = None) -> Suite:
    """The registered suite `toy` (`env_config` unused: the suite serves its own site)."""
    return Suite(name="toy", dataset=load_task_file(TASKS), dataset_file=TASKS,
                 starts_clean=True, scripts_dir=HERE / "scripts", opener=serve_toyshop,
                 scorer=ToyScorer())


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        return None


class _Session:
    """The toy shop on loopback; it has no state, so a reset changes nothing."""

    def __init__(self, url: str) -> None:
        self.site_urls = {TOYSHOP.value: url}

    def reset_scope(self, sites: frozenset[str]) -> frozenset[str]:
        return frozenset(self.site_urls)

    def reset(self, sites: frozenset[str]) -> frozenset[str]:
        return frozenset(self.site_urls)


@contextlib.contextmanager
def serve_toyshop() -> Iterator[SuiteSession]:
    """The toy shop served on 127.0.0.1 for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield _Session(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


class ToyScorer:
    """The toy benchmark's evaluator: the answer must equal the task's expected data, and the
    browser must have loaded the toy shop (its HAR holds a request to the site)."""

    def salt(self, dataset: WebDataset, config: WebEnvConfig) -> str:
        return json.dumps([VERSION, dataset.data_checksum, config.evaluator_environments()])

    @contextlib.contextmanager
    def start(self, workers: int) -> Iterator[ToyEvaluator]:
        yield ToyEvaluator(load_task_file(TASKS))


class ToyEvaluator:
    """Scores in this process (no environment of its own to build)."""

    def __init__(self, dataset: WebDataset) -> None:
        self.dataset = dataset
        self.identity = EvaluatorIdentity(
            version=VERSION, data_checksum=dataset.data_checksum,
            evaluator_checksum=hashlib.sha256(Path(__file__).read_bytes()).hexdigest())

    def evaluate_all(self, requests: Iterable[EvalRequest]) -> Iterator[EvaluatorVerdict]:
        for request in requests:
            yield self._verdict(request)

    def _verdict(self, request: EvalRequest) -> EvaluatorVerdict:
        task = self.dataset.tasks[request.task_id]
        answer = request.agent_response
        parsed = json.loads(answer) if isinstance(answer, str) else answer
        got = parsed.get("retrieved_data") if isinstance(parsed, dict) else None
        visited = _visited_toyshop(request)
        expected = task.expected_response.get("retrieved_data") or []
        right = _amounts(got) == _amounts(expected) and visited
        return EvaluatorVerdict(
            id=request.id, task_id=request.task_id, score=1.0 if right else 0.0,
            status=EvalStatus.SUCCESS if right else EvalStatus.FAILURE,
            result={"evaluators_results": [{"evaluator_name": "ToyEvaluator", "score":
                                            1.0 if right else 0.0, "answer": got,
                                            "visited_toyshop": visited}]},
            evaluator=self.identity)


def _amounts(values: Any) -> list[float] | None:
    """Answers as amounts ("12.50", 12.5 and "$12.5" are one answer), or None."""
    try:
        return [float(str(v).strip().lstrip("$")) for v in values]
    except (TypeError, ValueError):
        return None


def _visited_toyshop(request: EvalRequest) -> bool:
    urls = request.config.get(TOYSHOP.placeholder, {}).get("urls") or []
    entries = json.loads(request.har_path.read_text(encoding="utf-8"))["log"]["entries"]
    return any(entry["request"]["url"].startswith(tuple(urls)) for entry in entries if urls)
