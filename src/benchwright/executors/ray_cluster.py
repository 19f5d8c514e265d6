"""Run jobs on a Ray cluster (`--executor ray`): many machines, no shared filesystem.

A job runs as a Ray task that yields items (a streaming generator); each item reaches the caller
as soon as it is yielded, so a finished checkpoint is written and journaled by the driver while
the job goes on. Ray's own retry is off: a generator retried by Ray would start again from its
first arguments and redo what the driver already journaled. Instead, a job whose worker or node
is lost is submitted again from `job.ready()` (the state the driver holds), up to
`max_restarts` times, and Ray places it on a machine that is still there.

Ctrl-C, an error or a caller that stops reading cancels every running job: first as a
KeyboardInterrupt inside it (its sandbox and browser are torn down as locally), then, after a
grace period, by killing its worker process.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from benchwright.errors import (
    BenchwrightError,
    InfrastructureError,
    PrerequisiteError,
    UserInputError,
    install_command,
    missing_extra,
)
from benchwright.protocols import EXECUTOR_DEFAULTS, ExecutorSetup
from benchwright.version import __version__

JobT = TypeVar("JobT")
ResultT = TypeVar("ResultT")
ItemT = TypeVar("ItemT")

CANCEL_GRACE_S = 10.0
START_CLUSTER = "start one with `ray start --head` (see docs/scale-out.md)"


@dataclass(frozen=True)
class JobResources:
    """What each job asks the cluster for (Ray places it on a node that has it free)."""

    cpus: float = EXECUTOR_DEFAULTS.job_cpus
    """Logical CPUs."""
    memory_mb: int = EXECUTOR_DEFAULTS.job_memory_mb
    """Memory, MiB (Ray's `memory` resource: a reservation, not a limit)."""


def ray_module() -> ModuleType:
    """`ray`, imported with usage statistics off, or the install command."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise missing_extra("--executor ray needs Ray", "ray") from None
    return ray


def connect(address: str) -> ModuleType:
    """Join the cluster at `address` (auto, HOST:PORT or ray://HOST:PORT), once per process."""
    ray = ray_module()
    if ray.is_initialized():
        return ray
    _require_listening(address)
    on_sigterm = signal.getsignal(signal.SIGTERM)
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UserInputError(f"no Ray cluster at --ray-address {address} ({_first_line(exc)})",
                             hint=START_CLUSTER) from None
    finally:
        _restore_sigterm(on_sigterm)
    return ray


def _restore_sigterm(handler: Any) -> None:
    """The SIGTERM handler the process had before `ray.init` put its own (a bare
    `sys.exit(15)`): the CLI's takes Ctrl-C's path, so jobs stop and the exit code is 143."""
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def _require_listening(address: str) -> None:
    """Refuse at once an address where nothing listens (Ray itself would retry for minutes)."""
    from ray._private.services import canonicalize_bootstrap_address

    target = address.removeprefix("ray://")
    try:
        resolved = target if address.startswith("ray://") else \
            canonicalize_bootstrap_address(target)
    except (ConnectionError, ValueError) as exc:
        resolved, error = None, _first_line(exc)
    else:
        error = "no running cluster found"
    if resolved is not None:
        host, _, port = resolved.rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
            return
        except (OSError, ValueError) as exc:
            error = f"nothing answers at {resolved}: {exc}"
    raise UserInputError(f"no Ray cluster at --ray-address {address} ({error})",
                         hint=START_CLUSTER)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _streamed(fn: Callable[[JobT], Iterator[ItemT]], job: JobT) -> Iterator[ItemT]:
    """The task body: the job's items, one Ray object each."""
    yield from fn(job)


def _single(fn: Callable[[JobT], ResultT], job: JobT) -> Iterator[ResultT]:
    yield fn(job)


def _submit(task: Any, fn: Any, job: Any, restarts: int, running: dict[Any, Any]) -> None:
    """Start `job` as `job.ready()` makes it, unless that says nothing is left to do."""
    ready = job.ready() if hasattr(job, "ready") else job
    if ready is not None:
        running[task.remote(fn, ready)] = (ready, restarts)


def _on_node(fn: Callable[[], ResultT]) -> tuple[str, ResultT]:
    return __version__, fn()


class _Host:
    """The actor behind `Executor.host`."""

    def __init__(self, factory: Callable[..., object], *args: object) -> None:
        self.target = factory(*args)

    def call(self, method: str, *args: object) -> Any:
        return getattr(self.target, method)(*args)


class RayExecutor:
    """At most `workers` jobs at a time on the Ray cluster at `address`."""

    shares_filesystem = False

    def __init__(self, workers: int = 1, on_event: Callable[[Any], None] | None = None, *,
                 address: str = EXECUTOR_DEFAULTS.address, resources: JobResources = JobResources(),
                 max_restarts: int = 3) -> None:
        self.workers = max(1, workers)
        self.on_event = on_event  # jobs report through their items; kept for the interface
        self.address = address
        self.resources = resources
        self.max_restarts = max_restarts

    @classmethod
    def from_setup(cls, setup: ExecutorSetup) -> RayExecutor:
        """The executor a command's `--executor ray` options describe."""
        return cls(setup.workers, setup.on_event, address=setup.address,
                   resources=JobResources(cpus=setup.job_cpus, memory_mb=setup.job_memory_mb))

    def _ray(self) -> ModuleType:
        ray = connect(self.address)
        _check_fits(ray, self.resources)
        return ray

    def _options(self) -> dict[str, Any]:
        return {"num_cpus": self.resources.cpus, "memory": self.resources.memory_mb * 2**20}

    def run(self, fn: Callable[[JobT], ResultT], jobs: Sequence[JobT]) -> Iterator[ResultT]:
        """Each job's result as it finishes."""
        return self.stream(functools.partial(_single, fn), jobs)

    def stream(self, fn: Callable[[JobT], Iterator[ItemT]], jobs: Sequence[JobT]
               ) -> Iterator[ItemT]:
        """Every item of every job as it arrives; lost jobs restarted (see the module)."""
        ray = self._ray()
        task = ray.remote(_streamed).options(max_retries=0, **self._options())
        waiting = list(reversed(jobs))
        running: dict[Any, tuple[Any, int]] = {}
        try:
            while waiting or running:
                while waiting and len(running) < self.workers:
                    _submit(task, fn, waiting.pop(), 0, running)
                if not running:
                    continue
                ready, _ = ray.wait(list(running), num_returns=1)
                for generator in ready:
                    yield from self._next(ray, task, fn, generator, running)
        except BaseException:
            _cancel(ray, list(running))
            raise

    def _next(self, ray: ModuleType, task: Any, fn: Any, generator: Any,
              running: dict[Any, tuple[Any, int]]) -> Iterator[Any]:
        """The generator's next item, or its end, or its loss (then the job starts again)."""
        try:
            item = ray.get(next(generator))
        except StopIteration:
            running.pop(generator)
            return
        except ray.exceptions.RayTaskError as exc:
            raise _cause(exc) from None
        except _lost(ray) as exc:
            job, restarts = running.pop(generator)
            if restarts >= self.max_restarts:
                raise InfrastructureError(
                    f"a job was lost {restarts + 1} times with its worker ({_first_line(exc)})",
                    hint="check the cluster's nodes, then continue with --resume") from None
            _submit(task, fn, job, restarts + 1, running)
            return
        yield item

    def each_node(self, fn: Callable[[], ResultT]) -> dict[str, ResultT]:
        """`fn()` on every alive node that can take a job, by "address (node id)"."""
        ray = self._ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        refs = {}
        for node in job_nodes(ray, self.resources):
            strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
            refs[node_name(node)] = ray.remote(_on_node).options(
                num_cpus=0, max_retries=0, scheduling_strategy=strategy).remote(fn)
        return {name: _node_result(ray, name, ref) for name, ref in refs.items()}

    def host(self, factory: Callable[..., object], *args: object) -> RayHosted:
        """`factory(*args)` in an actor holding one job's resources."""
        return RayHosted(self._ray(), self._options(), factory, args, self.max_restarts)


class RayHosted:
    """An object in a Ray actor; a call that loses its actor is made again on a new one."""

    def __init__(self, ray: ModuleType, options: dict[str, Any], factory: Callable[..., object],
                 args: tuple[object, ...], max_restarts: int) -> None:
        self._ray, self._options = ray, options
        self._factory, self._args = factory, args
        self._max_restarts = max_restarts
        self._actor: Any = None

    def _started(self) -> Any:
        if self._actor is None:
            cls = self._ray.remote(_Host).options(max_restarts=0, **self._options)
            self._actor = cls.remote(self._factory, *self._args)
        return self._actor

    def call(self, method: str, *args: object) -> Any:
        """The method's result; an actor lost with its node is replaced and the call made again
        (nothing of the call reached the caller's files)."""
        for attempt in range(self._max_restarts + 1):
            try:
                return self._ray.get(self._started().call.remote(method, *args))
            except self._ray.exceptions.RayTaskError as exc:
                raise _cause(exc) from None
            except _lost(self._ray) as exc:
                self._kill()
                if attempt == self._max_restarts:
                    raise InfrastructureError(f"a worker was lost ({_first_line(exc)})",
                                              hint="check the cluster's nodes") from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        """The object's `close()` (its browser and sandboxes end), then the actor."""
        if self._actor is None:
            return
        try:
            self._ray.get(self._actor.call.remote("close"), timeout=60)
        except Exception:  # a dead actor has nothing left to close
            logging.getLogger(__name__).debug("closing a hosted object failed", exc_info=True)
        self._kill()

    def _kill(self) -> None:
        if self._actor is not None:
            self._ray.kill(self._actor, no_restart=True)
        self._actor = None


def _lost(ray: ModuleType) -> tuple[type[BaseException], ...]:
    """The errors that mean a job's worker or node is gone (not the job's own failure)."""
    errors = ray.exceptions
    return (errors.WorkerCrashedError, errors.NodeDiedError, errors.ObjectLostError,
            errors.OutOfMemoryError, errors.LocalRayletDiedError, errors.RayActorError)


def _cause(exc: Any) -> BaseException:
    """A job's own exception as it was raised on the worker (benchwright's errors keep their
    class, so exit codes and messages are as locally)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BenchwrightError | KeyboardInterrupt):
        return cause
    if isinstance(cause, Exception):
        return exc.as_instanceof_cause()  # type: ignore[no-any-return]
    return exc  # type: ignore[no-any-return]


def _cancel(ray: ModuleType, generators: list[Any], grace_s: float = CANCEL_GRACE_S) -> None:
    """Stop running jobs: a KeyboardInterrupt in each (its clean-up runs), then kill those that
    have not ended after `grace_s`.

    A job whose end has arrived is never force-cancelled: its end reaches the driver before
    Ray's reply that the task is over, and a force-cancel in between makes Ray 2.60's driver
    abort (a failed check in its task manager, "Tried to complete task that was not pending":
    a C++ stack trace and exit 1 instead of the interrupted run's 130)."""
    for generator in generators:
        ray.cancel(generator, force=False)
    ends = {generator.completed(): generator for generator in generators}
    ray.wait(list(ends), num_returns=len(ends), timeout=grace_s)
    for end, generator in ends.items():
        if ray.wait([end], timeout=0)[0]:  # asked again just before: one that ended meanwhile
            continue
        try:
            ray.cancel(generator, force=True)
        except Exception:  # already over
            logging.getLogger(__name__).debug("force-cancel failed", exc_info=True)


def job_nodes(ray: ModuleType, resources: JobResources) -> list[dict[str, Any]]:
    """The alive nodes with room for one job (a head started with --num-cpus 0 is not one)."""
    return [node for node in ray.nodes() if node.get("Alive")
            and node["Resources"].get("CPU", 0) >= resources.cpus
            and node["Resources"].get("memory", 0) >= resources.memory_mb * 2**20]


def node_name(node: dict[str, Any]) -> str:
    """How a node is named in messages: its address and the start of its id."""
    return f"{node['NodeManagerAddress']} (node {node['NodeID'][:8]})"


def _check_fits(ray: ModuleType, resources: JobResources) -> None:
    if not job_nodes(ray, resources):
        raise UserInputError(
            f"no node of the Ray cluster has {resources.cpus:g} CPU and "
            f"{resources.memory_mb} MiB of memory for one job",
            hint="lower --job-cpus / --job-memory-mb, or add a node with `ray start --address`")


def _node_result(ray: ModuleType, name: str, ref: Any) -> Any:
    try:
        version, result = ray.get(ref, timeout=300)
    except ray.exceptions.RayError as exc:
        raise PrerequisiteError(
            f"node {name}: benchwright could not run there ({_first_line(_cause(exc))})",
            hint=f"install benchwright {__version__} there: "
            f"{install_command('ray', version=__version__)}",
        ) from None
    if version != __version__:
        raise PrerequisiteError(
            f"node {name} has benchwright {version}, this machine {__version__}",
            hint="install the same version on every node: "
            f"{install_command('ray', version=__version__)}")
    return result
