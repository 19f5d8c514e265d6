"""`grade_checkpoint`: one checkpoint of a problem graded on a workspace snapshot, as SCBench
grades it. `benchwright eval checkpoint` parses its options and calls it. Kept apart from the
runs (`api/coding.py`) so grading one checkpoint loads only what grading needs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from benchwright.coding.problems.examples import example_problem_dir
from benchwright.coding.problems.loader import get_checkpoint, load_problem, require_tests

if TYPE_CHECKING:
    from benchwright.coding.grading.evaluation import CheckpointEvaluation

log = logging.getLogger(__name__)


def grade_checkpoint(problem: Path | str, checkpoint: str, workspace: Path | str | None = None,
                     *, out: Path | str | None = None, python: str | None = None,
                     unsafe_no_sandbox: bool = False, runtime: str = "bwrap",
                     image: str | None = None, wall_clock_s: float = 1800.0,
                     memory_mb: int | None = None, max_processes: int = 256,
                     max_output_mb: int = 8, max_write_mb: int = 1024,
                     max_write_files: int = 100_000,
                     progress: Callable[[str], None] | None = None) -> CheckpointEvaluation:
    """Grade one checkpoint of a problem (a folder, or a bundled example's name) on a workspace
    snapshot (default: the checkpoint's reference solution), as SCBench grades it. With `out`,
    evaluation.json, grading.json and pytest's raw output are written there (`max_output_mb` of
    each of its streams, the head and the tail). Past `max_write_mb` MiB or `max_write_files`
    files and folders added to the sandbox's writable folders, the checkpoint fails (rule
    cap_exceeded). `runtime`: bwrap, podman or docker (on
    `image`, `--image`'s value; default: the grading image)."""
    from benchwright.coding.grading import grader as grading
    from benchwright.coding.grading.artifacts import save_grade_output
    from benchwright.coding.grading.scratch import sweep_leftovers
    from benchwright.sandbox.bwrap import Limits, get_runtime
    from benchwright.sandbox.images.resolve import image_for_runtime

    image_id = image_for_runtime(runtime, image, unsafe_no_sandbox)
    sweep_leftovers()  # scratch folders (hidden tests inside) of a killed predecessor
    loaded = load_problem(problem_folder(problem))
    require_tests(loaded)
    config = get_checkpoint(loaded, checkpoint)
    snapshot = Path(workspace) if workspace is not None else loaded.solution_dir(checkpoint)
    limits = Limits(wall_clock_s=wall_clock_s, memory_mb=memory_mb, max_processes=max_processes,
                    max_output_mb=max_output_mb, max_write_mb=max_write_mb,
                    max_write_files=max_write_files)
    options = grading.GradeOptions(runtime=get_runtime(unsafe_no_sandbox, runtime, image_id),
                                   limits=limits, python=python)
    log.info("grading %s/%s on %s", loaded.name, checkpoint, snapshot)
    output = grading.grade_checkpoint(loaded, config, snapshot, options,
                                      progress=progress or (lambda _message: None))
    log.info("%s/%s: %s", loaded.name, checkpoint, output.evaluation.status)
    if out is not None:
        save_grade_output(output, Path(out))
    return output.evaluation


def problem_folder(problem: Path | str) -> Path:
    """A problem folder as given, or the bundled example of that name."""
    if isinstance(problem, Path) or "/" in problem or Path(problem).is_dir():
        return Path(problem)
    return example_problem_dir(problem)
