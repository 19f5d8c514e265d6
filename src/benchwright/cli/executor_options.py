"""The options that say where jobs run (`--executor`, `--ray-address`, `--job-cpus`,
`--job-memory-mb`), shared by `run coding`, `run web` and `eval RUN_DIR`; they build the executor
as the Python API does (`api/placement.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchwright.cli.option_values import EXECUTOR_DEFAULTS
from benchwright.registry import EXECUTORS

if TYPE_CHECKING:
    from benchwright.api.placement import Placement
    from benchwright.protocols import Executor

__all__ = ["EXECUTOR_DEFAULTS"]  # the commands' option defaults (protocols' own, copied)

# option names the commands' `--resume` lets change: where jobs run is not part of a run
MAY_CHANGE = {"executor", "ray_address", "job_cpus", "job_memory_mb"}

ExecutorOption = Annotated[str, typer.Option(
    metavar="NAME",
    help=f"Where jobs run: {' or '.join(EXECUTORS)} (a Ray cluster; docs/scale-out.md).")]
RayAddressOption = Annotated[str, typer.Option(
    metavar="ADDRESS",
    help="--executor ray: the cluster, auto (started on this machine with `ray start`), "
    "HOST:PORT or ray://HOST:PORT.")]
JobCpusOption = Annotated[float, typer.Option(
    min=0.01, max=1024, metavar="CPUS",
    help="--executor ray: CPUs each job asks the cluster for.")]
JobMemoryOption = Annotated[int, typer.Option(
    min=64, max=4 * 2**20, metavar="MIB",
    help="--executor ray: memory (MiB) each job asks the cluster for.")]


def placement(params: dict[str, Any]) -> Placement:
    """The placement options among a command's parameters."""
    return {k: params[k] for k in MAY_CHANGE if params.get(k) is not None}  # type: ignore[return-value]


def make_executor(params: dict[str, Any], workers: int,
                  on_event: Callable[[Any], None] | None = None) -> Executor:
    """The executor a command's options name."""
    from benchwright.api.placement import make_executor as placed

    return placed(placement(params), workers, on_event)
