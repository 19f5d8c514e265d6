"""The options that say where jobs run (`--executor`, `--ray-address`, `--job-cpus`,
`--job-memory-mb`), shared by `run coding`, `run web` and `eval RUN_DIR`, and the executor they
build through the registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from benchwright.protocols import Executor, ExecutorSetup
from benchwright.registry import EXECUTORS

# option names the commands' `--resume` lets change: where jobs run is not part of a run
MAY_CHANGE = {"executor", "ray_address", "job_cpus", "job_memory_mb"}

ExecutorOption = Annotated[str, typer.Option(
    help=f"Where jobs run: {' or '.join(EXECUTORS)} (a Ray cluster; docs/scale-out.md).")]
RayAddressOption = Annotated[str, typer.Option(
    help="--executor ray: the cluster, auto (started on this machine with `ray start`), "
    "HOST:PORT or ray://HOST:PORT.")]
JobCpusOption = Annotated[float, typer.Option(
    min=0.01, max=1024, help="--executor ray: CPUs each job asks the cluster for.")]
JobMemoryOption = Annotated[int, typer.Option(
    min=64, max=4 * 2**20, help="--executor ray: memory (MiB) each job asks the cluster for.")]


def make_executor(params: dict[str, Any], workers: int,
                  on_event: Callable[[Any], None] | None = None) -> Executor:
    """The executor a command's options name, built from one setup object."""
    name = params.get("executor") or "local"
    EXECUTORS.check(name)
    setup = ExecutorSetup(workers=workers, on_event=on_event,
                          address=params.get("ray_address") or "auto",
                          job_cpus=params.get("job_cpus") or 1.0,
                          job_memory_mb=params.get("job_memory_mb") or 2048)
    return EXECUTORS.get(name).from_setup(setup)
