"""Where a run's jobs run (`executor`, `ray_address`, `job_cpus`, `job_memory_mb`): keyword
arguments of `run_coding` and `run_web`, not part of a run's configuration (a resumed run may
move), and the executor they build through the registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict, cast

from benchwright.protocols import EXECUTOR_DEFAULTS, Executor, ExecutorSetup
from benchwright.registry import EXECUTORS


class Placement(TypedDict, total=False):
    """Where jobs run; every key is optional (its CLI option in brackets)."""

    executor: str
    """`local` (this machine, the default) or `ray` (a Ray cluster) [--executor]."""
    ray_address: str
    """The cluster: auto, HOST:PORT or ray://HOST:PORT [--ray-address]; default auto
    (`protocols.EXECUTOR_DEFAULTS` holds the defaults)."""
    job_cpus: float
    """CPUs each job asks the cluster for [--job-cpus]; default 1."""
    job_memory_mb: int
    """Memory (MiB) each job asks the cluster for [--job-memory-mb]; default 2048."""


def make_executor(placement: Placement | None, workers: int,
                  on_event: Callable[[Any], None] | None = None) -> Executor:
    """The executor `placement` names, built from one setup object."""
    where = placement or {}
    name = where.get("executor") or "local"
    EXECUTORS.check(name)
    setup = ExecutorSetup(workers=workers, on_event=on_event,
                          address=where.get("ray_address") or EXECUTOR_DEFAULTS.address,
                          job_cpus=where.get("job_cpus") or EXECUTOR_DEFAULTS.job_cpus,
                          job_memory_mb=where.get("job_memory_mb")
                          or EXECUTOR_DEFAULTS.job_memory_mb)
    return EXECUTORS.get(name).from_setup(setup)


def take_placement(options: Placement) -> Placement:
    """Where jobs run, taken out of a run's options (a `Placement` with more keys; the rest
    describe the run)."""
    given = cast(dict[str, Any], options)
    return cast(Placement, {key: given.pop(key) for key in Placement.__annotations__
                            if key in given})
