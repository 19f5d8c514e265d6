"""`benchwright web package RUN_DIR --out FILE`: the official submission package of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchwright.cli.json_output import echo_json
from benchwright.cli.option_values import TrialChoice
from benchwright.cli.verbosity import notes_console


def package_cmd(
    run_dir: Annotated[Path, typer.Argument(
        help="A run directory (`benchwright run web`) or a folder of <task_id>/ logs.")],
    out: Annotated[Path, typer.Option(
        help="The package: NAME.tar.gz for an archive, any other name for a folder.")],
    trial: Annotated[TrialChoice, typer.Option(
        help="first: each task's lowest-numbered complete trial; best: the lowest-numbered of "
        "its highest-scoring trials (from eval_result.json).")] = TrialChoice.FIRST,
    python: Annotated[str | None, typer.Option(
        metavar="VERSION|PATH",
        help="Python version or path for the evaluator's environment.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the packaging as JSON.")]
    = False,
) -> None:
    """Package a run for the WebArena Verified leaderboard with the official tools (one trial
    per task; HARs trimmed of static resources)."""
    from rich.console import Console

    from benchwright.runs.layout import MANIFEST
    from benchwright.web.submission.package import TrialChoice as Choice
    from benchwright.web.submission.package import package

    with notes_console().status("packaging"):
        result = package(run_dir, out.expanduser().resolve(), Choice(trial.value), python)
    if as_json:
        echo_json({"path": str(result.path), "trials": result.trials,
                   "packaged": result.packaged, "har_bytes_before": result.har_bytes_before,
                   "har_bytes_after": result.har_bytes_after})
        return
    Console(soft_wrap=True).print(
        f"{len(result.packaged)} tasks packaged ({trial} trial each): {result.path}\n"
        f"network.har: {_size_change(result.har_bytes_before, result.har_bytes_after)}",
        highlight=False)
    if (run_dir / MANIFEST).is_file():
        folder = result.path if result.path.is_dir() else "FOLDER (the archive unpacked)"
        notes_console().print(f"[dim]re-score it: benchwright web eval {folder} --run "
                              f"{run_dir}[/]", soft_wrap=True, highlight=False)
    left_out = sorted(set(result.trials) - set(result.packaged))
    if left_out:
        Console(stderr=True).print(f"[yellow]left out by the packager (see its summary.json): "
                                   f"{', '.join(map(str, left_out))}[/]")


def _size_change(before: int, after: int) -> str:
    """What trimming did to the HARs' size; the official trimmer writes indented JSON, so HARs
    with no static resource to drop come out larger."""
    share = 100 * abs(before - after) / before if before else 0.0
    if after <= before:
        return (f"{before:,} -> {after:,} bytes, trimming saved {before - after:,} bytes "
                f"({share:.0f}%)")
    return (f"{before:,} -> {after:,} bytes, {after - before:,} bytes more ({share:.0f}%): "
            "nothing to trim, and the packager writes indented JSON")
