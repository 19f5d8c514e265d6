"""The official WebArena Verified evaluator, isolated in its own environment and process.

webarena-verified pins pydantic==2.12.0, so it cannot share benchwright's environment: it gets a uv
environment of its own (cached by content hash, see `sandbox.environments`) and runs there as ONE
long-lived subprocess per batch (`evaluator_worker.py`, run by file path), fed JSON lines.
`EvaluatorProcess` starts it, sends requests one at a time, reads the verdicts, and kills it on
exit. Every verdict carries the evaluator's version and both checksums.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from pydantic import BaseModel, ConfigDict, Field

from benchwright.errors import InfrastructureError
from benchwright.sandbox.environments import BuiltEnv, ensure_env
from benchwright.sandbox.interpreters import resolve_python

EVALUATOR_PACKAGE = "webarena-verified"
EVALUATOR_VERSION = "1.2.3"
EVALUATOR_REQUIREMENTS = (f"{EVALUATOR_PACKAGE}=={EVALUATOR_VERSION}",
                          # parses HAR files several times faster (evaluator_worker._FastJson)
                          "orjson==3.13.0")
ENV_LABEL = "webarena-verified"
WORKER_SCRIPT = Path(__file__).with_name("evaluator_worker.py")
START_TIMEOUT_S = 120.0
TASK_TIMEOUT_S = 120.0
_STOP_GRACE_S = 5.0
PIPELINE_WINDOW = 16
TASKS_PER_EXTRA_WORKER = 150


def evaluator_env(python: str | None = None) -> BuiltEnv:
    """The evaluator's environment, built with uv on first use and cached after."""
    return ensure_env(ENV_LABEL, resolve_python(python), list(EVALUATOR_REQUIREMENTS))


def package_dir(env: BuiltEnv) -> Path:
    """`site-packages/webarena_verified` inside the environment."""
    found = sorted(env.path.glob("lib/python*/site-packages/webarena_verified"))
    if not found:
        raise InfrastructureError("webarena_verified is not installed in its environment",
                                  path=env.path, hint="delete that folder to have it rebuilt")
    return found[0]


def dataset_dir(env: BuiltEnv) -> Path:
    """The dataset folder shipped in the wheel."""
    return package_dir(env) / "assets" / "dataset"


def official_cli(env: BuiltEnv) -> Path:
    """The official `webarena-verified` command of the environment."""
    return env.path / "bin" / "webarena-verified"


class EvalStatus(StrEnum):
    """The evaluator's verdict on one task."""

    SUCCESS = "success"
    FAILURE = "failure"
    ERROR = "error"


class EvaluatorIdentity(BaseModel):
    """Which evaluator produced a verdict."""

    model_config = ConfigDict(frozen=True)

    version: str
    """The webarena-verified version."""
    evaluator_checksum: str
    """sha256 over the evaluator's Python files."""
    data_checksum: str
    """sha256 of the dataset file it scored against."""


class EvalRequest(BaseModel):
    """One task to score."""

    id: str
    """Echoed back with the verdict."""
    task_id: int
    """The task's id."""
    agent_response: dict[str, Any] | list[Any] | str | None = None
    """The agent's final answer: the file's text (as the official CLI reads it) or parsed JSON."""
    har_path: Path
    """The network trace (HAR) recorded during the run."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The evaluator's `environments` mapping."""
    dataset: Path | None = None
    """The tasks JSON to score against; None for the package's own 812 tasks."""


class EvaluatorVerdict(BaseModel):
    """The evaluator's answer for one request."""

    id: str
    """The request's id."""
    task_id: int
    """The task's id."""
    score: float
    """1.0 only when every evaluator of the task scored 1; errors score 0."""
    status: EvalStatus
    """success, failure or error."""
    error_msg: str | None = None
    """Why the status is error."""
    result: dict[str, Any] = Field(default_factory=dict)
    """The evaluator's TaskEvalResult as JSON; empty when it never got to evaluate."""
    evaluator: EvaluatorIdentity
    """Version and checksums of the evaluator that answered."""


class EvaluatorProcess:
    """The worker subprocess; use as a context manager so it never outlives the batch."""

    def __init__(self, python: Path, *, task_timeout_s: float = TASK_TIMEOUT_S,
                 start_timeout_s: float = START_TIMEOUT_S, worker: Path = WORKER_SCRIPT) -> None:
        self._argv = [str(python), "-I", str(worker)]
        self.forks_workers = worker == WORKER_SCRIPT
        """Whether its worker can start copies of itself (`--forks`)."""
        self._task_timeout_s = task_timeout_s
        self._start_timeout_s = start_timeout_s
        self._proc: subprocess.Popen[str] | _ForkedWorker | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader: threading.Thread | None = None
        self._log: IO[bytes] | None = None
        self._identity: EvaluatorIdentity | None = None

    @classmethod
    def for_env(cls, env: BuiltEnv, task_timeout_s: float = TASK_TIMEOUT_S) -> EvaluatorProcess:
        """A process run by the environment's interpreter."""
        return cls(env.python, task_timeout_s=task_timeout_s)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(graceful=exc_type is None)

    @property
    def identity(self) -> EvaluatorIdentity:
        """The running evaluator's version and checksums."""
        if self._identity is None:
            raise RuntimeError("the evaluator process has not started")
        return self._identity

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Spawn the worker and wait for its ready line."""
        self.spawn()
        self.wait_ready()

    def spawn(self, forks: list[EvaluatorProcess] | None = None) -> None:
        """Start the worker without waiting for it (it imports the library meanwhile). The
        `forks` are started as copies of it once it has imported the library: one start-up
        (~0.6 s of CPU) for all of them."""
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the worker)
        pipes = [fork._pipes_for_fork(self._log) for fork in forks or []]
        argv = [*self._argv, "--forks", ",".join(f"{a}:{b}" for a, b in pipes)] if pipes else \
            self._argv
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=self._log, text=True, encoding="utf-8", bufsize=1,
                                    pass_fds=[fd for pair in pipes for fd in pair])
        finally:
            for fd in (fd for pair in pipes for fd in pair):
                os.close(fd)
        self._attach(proc)

    def _attach(self, proc: subprocess.Popen[str] | _ForkedWorker) -> None:
        self._lines = queue.Queue()
        self._identity = None
        self._proc = proc
        self._reader = threading.Thread(target=_pump, args=(proc.stdout, self._lines),
                                        daemon=True)
        self._reader.start()

    def _pipes_for_fork(self, log: IO[bytes]) -> tuple[int, int]:
        """Our ends of a forked worker's pipes; returns the ends the worker keeps."""
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        self._log = os.fdopen(os.dup(log.fileno()), "rb")
        self._attach(_ForkedWorker(os.fdopen(requests_w, "w", encoding="utf-8"),
                                   os.fdopen(replies_r, encoding="utf-8")))
        return requests_r, replies_w

    def wait_ready(self) -> None:
        """Read the worker's ready line (once); a worker that never says it is ready is an error."""
        if self._identity is not None:
            return
        if self._proc is None:
            self.spawn()
        try:
            hello = self._next_message(self._start_timeout_s)
        except TimeoutError:
            hello = None
        if not hello or not hello.get("ready"):
            tail = self._stderr_tail()
            self.close(graceful=False)
            raise InfrastructureError(f"the WebArena Verified evaluator did not start: {tail}",
                                      hint="delete its environment under "
                                      "~/.cache/benchwright/envs to have it rebuilt")
        if isinstance(self._proc, _ForkedWorker):
            self._proc.pid = int(hello.get("pid", 0)) or None
        self._identity = EvaluatorIdentity(version=hello["version"],
                                           evaluator_checksum=hello["evaluator_checksum"],
                                           data_checksum=hello["data_checksum"])

    def evaluate_all(self, requests: Iterable[EvalRequest],
                     window: int = PIPELINE_WINDOW) -> Iterator[EvaluatorVerdict]:
        """Verdicts in request order. Up to `window` requests are in flight, so the worker never
        waits for us; a hung or crashed worker fails the request at the head and is restarted,
        and the requests behind it are sent again."""
        pending: deque[EvalRequest] = deque()
        upcoming = iter(requests)
        self._ensure_running()
        self._fill(pending, upcoming, window)
        while pending:
            yield self._next_verdict(pending)
            self._fill(pending, upcoming, window)

    def evaluate(self, request: EvalRequest) -> EvaluatorVerdict:
        """Score one task."""
        return next(self.evaluate_all([request]))

    def _ensure_running(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            self._restart()
        self.wait_ready()

    def _fill(self, pending: deque[EvalRequest], upcoming: Iterator[EvalRequest],
              window: int) -> None:
        while len(pending) < window and (request := next(upcoming, None)) is not None:
            self._send(request)
            pending.append(request)

    def _next_verdict(self, pending: deque[EvalRequest]) -> EvaluatorVerdict:
        head = pending[0]
        try:
            reply = self._next_message(self._task_timeout_s)
        except TimeoutError:
            failed = f"the evaluator did not answer within {self._task_timeout_s:.0f} s"
        else:
            if reply is not None:
                pending.popleft()
                return self._verdict(head, reply)
            failed = f"the evaluator process died: {self._stderr_tail()}"
        pending.popleft()
        self._restart()
        for request in pending:
            self._send(request)
        return self._error(head, failed)

    def close(self, graceful: bool = True) -> None:
        """End the worker: close its input and wait briefly, then kill it."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _stop(proc, _STOP_GRACE_S if graceful else 0.0)
        if self._reader is not None:
            self._reader.join(timeout=_STOP_GRACE_S)
            self._reader = None
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    def _restart(self) -> None:
        self.close(graceful=False)
        self.start()

    def _send(self, request: EvalRequest) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        line = json.dumps(request.model_dump(mode="json"), ensure_ascii=False)
        with contextlib.suppress(BrokenPipeError, OSError):
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()

    def _next_message(self, timeout_s: float) -> dict[str, Any] | None:
        """The next JSON line; None at end of output; TimeoutError when nothing comes."""
        while True:
            try:
                line = self._lines.get(timeout=timeout_s)
            except queue.Empty:
                raise TimeoutError from None
            if line is None:
                return None
            with contextlib.suppress(json.JSONDecodeError):
                message = json.loads(line)
                if isinstance(message, dict):
                    return message

    def _verdict(self, request: EvalRequest, reply: dict[str, Any]) -> EvaluatorVerdict:
        if "result" not in reply:
            return self._error(request, f"the evaluator refused the request: {reply.get('error')}")
        result = reply["result"]
        return EvaluatorVerdict(
            id=request.id, task_id=request.task_id, score=float(result.get("score", 0.0)),
            status=EvalStatus(result.get("status", "error")), error_msg=result.get("error_msg"),
            result=result, evaluator=_identity_of(result, self.identity))

    def _error(self, request: EvalRequest, message: str) -> EvaluatorVerdict:
        return EvaluatorVerdict(id=request.id, task_id=request.task_id, score=0.0,
                                status=EvalStatus.ERROR, error_msg=message,
                                evaluator=self.identity)

    def _stderr_tail(self) -> str:
        if self._log is None:
            return "no output"
        size = self._log.seek(0, 2)
        self._log.seek(max(0, size - 4096))
        lines = self._log.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(lines[-3:]) or "no output"


class EvaluatorPool:
    """Several workers scoring one batch side by side: the library is CPU-bound, so one worker
    per core divides the time. Requests are dealt round-robin; verdicts come back in order."""

    def __init__(self, processes: list[EvaluatorProcess]) -> None:
        self._processes = processes

    @classmethod
    def for_env(cls, env: BuiltEnv, workers: int = 1,
                task_timeout_s: float = TASK_TIMEOUT_S) -> EvaluatorPool:
        """`workers` processes run by the environment's interpreter (not started yet)."""
        return cls([EvaluatorProcess.for_env(env, task_timeout_s) for _ in range(max(1, workers))])

    def __enter__(self) -> Self:
        first, *others = self._processes
        if first.forks_workers:
            first.spawn(forks=others)
            return self
        for process in self._processes:
            process.spawn()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # nothing to flush (a clean exit of the library costs ~0.2 s); the forked workers go
        # first, while the worker that reaps them still runs
        for process in reversed(self._processes):
            process.close(graceful=False)

    @property
    def identity(self) -> EvaluatorIdentity:
        """The evaluator's version and checksums (waits for the first worker to be ready)."""
        self._processes[0].wait_ready()
        return self._processes[0].identity

    def evaluate_all(self, requests: Iterable[EvalRequest]) -> Iterator[EvaluatorVerdict]:
        """Verdicts in request order."""
        items = list(requests)
        count = min(len(self._processes), len(items))
        if count <= 1:
            yield from self._processes[0].evaluate_all(items)
            return
        done: queue.Queue[tuple[int, EvaluatorVerdict | BaseException]] = queue.Queue()
        for k in range(count):
            threading.Thread(target=_serve_share, daemon=True,
                             args=(self._processes[k], items, k, count, done)).start()
        yield from _in_order(done, len(items))


def workers_for(n_requests: int) -> int:
    """How many workers a batch deserves: one per core we may run on (`taskset` narrows it),
    but only when each has enough work to pay for its start (importing the library costs
    about as much as 150 verdicts)."""
    return max(1, min(len(os.sched_getaffinity(0)), 1 + n_requests // TASKS_PER_EXTRA_WORKER))


def _serve_share(process: EvaluatorProcess, items: list[EvalRequest], k: int, step: int,
                 done: queue.Queue[tuple[int, EvaluatorVerdict | BaseException]]) -> None:
    try:
        for j, verdict in enumerate(process.evaluate_all(items[k::step])):
            done.put((k + j * step, verdict))
    except BaseException as exc:  # handed to the consumer, which raises it
        done.put((-1, exc))


def _in_order(done: queue.Queue[tuple[int, EvaluatorVerdict | BaseException]],
              total: int) -> Iterator[EvaluatorVerdict]:
    ready: dict[int, EvaluatorVerdict] = {}
    for next_index in range(total):
        while next_index not in ready:
            index, item = done.get()
            if isinstance(item, BaseException):
                raise item
            ready[index] = item
        yield ready.pop(next_index)


def _identity_of(result: dict[str, Any], fallback: EvaluatorIdentity) -> EvaluatorIdentity:
    return EvaluatorIdentity(
        version=result.get("webarena_verified_version") or fallback.version,
        evaluator_checksum=(result.get("webarena_verified_evaluator_checksum")
                            or fallback.evaluator_checksum),
        data_checksum=result.get("webarena_verified_data_checksum") or fallback.data_checksum)


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    """Move the worker's output lines into a queue; None marks the end."""
    with contextlib.suppress(ValueError, OSError):
        for line in stream:
            lines.put(line)
    lines.put(None)


class _ForkedWorker:
    """A worker forked by another worker (not our child): the part of Popen that
    EvaluatorProcess uses, over its pipes and the pid it reports when ready."""

    def __init__(self, stdin: IO[str], stdout: IO[str]) -> None:
        self.stdin, self.stdout = stdin, stdout
        self.pid: int | None = None

    def poll(self) -> int | None:
        if self.pid is None:
            return None
        try:  # a zombie (dead, not yet reaped by whoever inherited it) counts as gone
            state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return -1
        return -1 if state in ("Z", "X") else None

    def kill(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (timeout if timeout is not None else 3600.0)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("forked evaluator worker", timeout or 0)
            time.sleep(0.01)
        return -1


def _stop(proc: subprocess.Popen[str] | _ForkedWorker, grace_s: float) -> None:
    """Close the worker's input (it exits at end of input); kill it if it lingers."""
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin is not None:
            proc.stdin.close()
    if grace_s <= 0:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    proc.kill()
    proc.wait()
