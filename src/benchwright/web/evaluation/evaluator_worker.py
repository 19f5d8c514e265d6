"""The WebArena Verified evaluator as a long-lived process: JSON lines in, JSON lines out.

Run by the evaluator environment's python, by file path; it imports only the standard library and
`webarena_verified` (never benchwright, which is not installed there).

Protocol, one JSON object per line:
- on start it writes `{"ready": true, "version", "evaluator_checksum", "data_checksum"}`;
- each request `{"id", "task_id", "agent_response", "har_path", "config", "dataset"}` (config:
  the `environments` mapping; dataset: a tasks JSON path, or null for the package's own) gets
  `{"id", "result": <TaskEvalResult as JSON>}`, or `{"id", "error": "..."}` when the request
  itself is unusable;
- end of input ends the process.
Anything the library prints goes to stderr, so stdout carries the protocol only.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO


def _protocol_stream() -> TextIO:
    """A private copy of stdout for the protocol; fd 1 itself is pointed at stderr."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    return str(value)


def _send(out: TextIO, message: dict[str, Any]) -> None:
    out.write(json.dumps(message, default=_jsonable, ensure_ascii=False) + "\n")
    out.flush()


def _identity() -> dict[str, Any]:
    from importlib.metadata import version

    from webarena_verified.core.utils.checksum import (  # type: ignore[import-not-found, unused-ignore]
        compute_data_file_checksum,
        compute_evaluator_checksum,
    )
    from webarena_verified.types.config import (  # type: ignore[import-not-found, unused-ignore]
        WebArenaVerifiedConfig,
    )

    return {"ready": True, "version": version("webarena-verified"),
            "evaluator_checksum": compute_evaluator_checksum(),
            "data_checksum": compute_data_file_checksum(WebArenaVerifiedConfig().test_data_file)}


class _Evaluators:
    """One WebArenaVerified per distinct config and dataset (normally just one per batch)."""

    def __init__(self) -> None:
        self._by_config: dict[str, Any] = {}

    def get(self, environments: Mapping[str, Any], dataset: str | None) -> Any:
        key = json.dumps([environments, dataset], sort_keys=True)
        if key not in self._by_config:
            self._by_config[key] = _evaluator(environments, dataset)
        return self._by_config[key]


def _evaluator(environments: Mapping[str, Any], dataset: str | None) -> Any:
    from webarena_verified import WebArenaVerified  # type: ignore[import-not-found, unused-ignore]
    from webarena_verified.types.config import (  # type: ignore[import-not-found, unused-ignore]
        WebArenaVerifiedConfig,
    )

    fields: dict[str, Any] = {"environments": dict(environments)}
    if not dataset:
        return WebArenaVerified(config=WebArenaVerifiedConfig.model_validate(fields))
    # the library silently falls back to its own tasks when the file is missing
    if not Path(dataset).is_file():
        raise FileNotFoundError(f"dataset {dataset} does not exist")
    fields["test_data_file"] = Path(dataset)
    return _custom_evaluator(WebArenaVerifiedConfig.model_validate(fields))


def _custom_evaluator(config: Any) -> Any:
    """The library's evaluator over a dataset of our own: loaded as a subset, which skips
    the library's check that a dataset holds exactly the 812 official tasks."""
    from webarena_verified.api.internal.data_reader import (  # type: ignore[import-not-found, unused-ignore]
        WebArenaVerifiedDataReader,
    )
    from webarena_verified.api.internal.evaluator import (  # type: ignore[import-not-found, unused-ignore]
        WebArenaVerifiedEvaluator,
    )
    from webarena_verified.types.data import TaskSubset  # type: ignore[import-not-found, unused-ignore]

    ids = sorted({int(task["task_id"]) for task in json.loads(config.test_data_file.read_text())})
    subset = TaskSubset(task_ids=ids, checksum=TaskSubset.compute_checksum(ids))
    reader = WebArenaVerifiedDataReader(config, subset=subset)
    return WebArenaVerifiedEvaluator(config=config, reader=reader)


def _answer(request: dict[str, Any], evaluators: _Evaluators) -> dict[str, Any]:
    try:
        evaluator = evaluators.get(request.get("config") or {}, request.get("dataset"))
        result = evaluator.evaluate_task(task_id=int(request["task_id"]),
                                         agent_response=request.get("agent_response"),
                                         network_trace=Path(request["har_path"]))
        return {"id": request.get("id"), "result": result.model_dump(mode="json")}
    except Exception as exc:  # the evaluator never raises; this is a bad request or config
        return {"id": request.get("id"), "error": f"{type(exc).__name__}: {exc}"}


def _memoize_data_checksum() -> None:
    """The library re-hashes its whole dataset file for every task it scores (a sixth of the
    time per task); the hash is kept while the file's size and mtime stay the same, so the
    checksum it records is unchanged."""
    from webarena_verified.api.internal import (  # type: ignore[import-not-found, unused-ignore]
        evaluator as module,
    )

    original = getattr(module, "compute_data_file_checksum", None)
    if original is None:
        return
    memo: dict[tuple[str, int, int], str] = {}

    def checksum(file_path: str | Path) -> str:
        stat = Path(file_path).stat()
        key = (str(file_path), stat.st_size, stat.st_mtime_ns)
        if key not in memo:
            memo[key] = original(file_path)
        return memo[key]

    module.compute_data_file_checksum = checksum


_BIG = float(2**63)


def _holds_big_float(root: Any) -> bool:
    """Whether a parsed document holds a float of magnitude 2^63 or more: where orjson, given
    an integer too big for 64 bits, returns a float and `json` an int."""
    stack = [root]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind is float and not -_BIG < node < _BIG:
            return True
    return False


class _FastJson:
    """Stands in for the `json` module where the library parses HAR files: orjson builds the
    same objects several times faster. Whatever orjson refuses (NaN, Infinity, 1e400, lone
    surrogates, deep nesting) or may read differently (integers beyond 64 bits) goes to
    `json.loads`, so the result, or the error, is always the standard library's."""

    JSONDecodeError = json.JSONDecodeError

    def __init__(self, orjson: Any) -> None:
        self._orjson = orjson

    def loads(self, text: str | bytes, **kwargs: Any) -> Any:
        if kwargs:
            return json.loads(text, **kwargs)
        try:
            parsed = self._orjson.loads(text)
        except (ValueError, TypeError):  # orjson's JSONDecodeError is a ValueError
            return json.loads(text)
        return json.loads(text) if _holds_big_float(parsed) else parsed


def _fast_har_parsing() -> None:
    """Parse HAR files with orjson when it is installed (EVALUATOR_REQUIREMENTS)."""
    try:
        import orjson  # type: ignore[import-not-found, unused-ignore]
        from webarena_verified.core.utils import (  # type: ignore[import-not-found, unused-ignore]
            network_event_utils,
        )
    except ImportError:
        return
    if getattr(network_event_utils, "json", None) is json:
        network_event_utils.json = _FastJson(orjson)


def main() -> int:
    """Serve requests until stdin closes; first fork the workers asked for with `--forks`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    forks = _fork_pipes(sys.argv[1:])
    out = _protocol_stream()
    hello = _identity()
    _memoize_data_checksum()
    _fast_har_parsing()
    if forks:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked workers are reaped by the kernel
    for index in range(len(forks)):
        if os.fork() == 0:
            return _serve_fork(forks, index, out, hello)
    for fd in (fd for pair in forks for fd in pair):
        os.close(fd)
    _send(out, {**hello, "pid": os.getpid()})
    return _serve(sys.stdin, out)


def _fork_pipes(args: list[str]) -> list[tuple[int, int]]:
    """`--forks IN:OUT,IN:OUT`: the pipe ends of each worker to fork (requests in, replies out)."""
    if len(args) != 2 or args[0] != "--forks":
        return []
    return [(int(a), int(b)) for a, b in (pair.split(":") for pair in args[1].split(","))]


def _serve_fork(forks: list[tuple[int, int]], index: int, parent_out: TextIO,
                hello: dict[str, Any]) -> int:
    """A forked worker: shares the imported library with its parent (no second start-up) and
    holds only its own pipe ends, so each side sees the other's end of input."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    in_fd, out_fd = forks[index]
    for fd in (fd for i, pair in enumerate(forks) if i != index for fd in pair):
        os.close(fd)
    parent_out.close()
    sys.stdin.close()
    out = os.fdopen(out_fd, "w", encoding="utf-8", buffering=1)
    _send(out, {**hello, "pid": os.getpid()})
    _serve(os.fdopen(in_fd, encoding="utf-8"), out)
    os._exit(0)


def _serve(requests: TextIO, out: TextIO) -> int:
    evaluators = _Evaluators()
    while line := requests.readline():
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as exc:
            _send(out, {"id": None, "error": f"request is not JSON: {exc}"})
            continue
        if not isinstance(request, dict):
            _send(out, {"id": None, "error": "request is not a JSON object"})
            continue
        _send(out, _answer(request, evaluators))
    return 0


if __name__ == "__main__":
    sys.exit(main())
