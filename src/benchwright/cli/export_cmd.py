"""`benchwright export atif RUN_DIR --out DIR`: an old run's trajectories in ATIF."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from benchwright.cli.json_output import echo_json
from benchwright.errors import UserInputError

if TYPE_CHECKING:
    from benchwright.files.atif import Export
    from benchwright.files.redaction import Redactor

app = typer.Typer(help="Write a run's files in other tools' formats.", no_args_is_help=True)


@app.command("atif")
def atif_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run's folder (coding or web).")],
    out: Annotated[Path, typer.Option(help="Folder to write the ATIF files into.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written and skipped "
                                          "as JSON.")] = False,
) -> None:
    """Write every agent trajectory of RUN_DIR as ATIF: each checkpoint's agent session of a
    coding run, each trial of a web run (docs/atif.md)."""
    from benchwright.files.redaction import Redactor

    if run_dir.is_symlink() or not run_dir.is_dir():
        raise UserInputError("not a run folder", path=run_dir,
                             hint="give the folder `benchwright run coding|web --out` wrote")
    if out.exists() and (out.is_symlink() or not out.is_dir()):
        raise UserInputError("--out exists and is not a folder", path=out)
    result = _export(run_dir, out, Redactor.from_environ())
    for line in result.skipped:
        print(f"skipped {line}", file=sys.stderr)
    if not result.written:
        raise UserInputError("no agent trajectory to export", path=run_dir,
                             hint="agents that call no model (oracle, command) leave none")
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    typer.echo(f"wrote {len(result.written)} ATIF trajectories under {out}")


def _export(run_dir: Path, out: Path, redactor: Redactor) -> Export:
    """The export of the track the run's manifest names; a folder without a manifest: every
    checkpoint trajectory found in it."""
    from benchwright.runs import open_run

    if (run_dir / "manifest.json").exists():
        return cast("Export", open_run(run_dir).track.export_atif(run_dir, out, redactor))
    from benchwright.coding.agents.atif import export_run

    return export_run(run_dir, out, redactor)


@app.command("harbor")
def harbor_cmd(
    problem_dir: Annotated[Path, typer.Argument(help="An SCBench-format problem folder.")],
    out: Annotated[Path, typer.Option(help="Folder to write the Harbor task into (as "
                                      "OUT/<problem name>).")],
    base_image: Annotated[str | None, typer.Option(
        help="The image the task's Dockerfile starts FROM (default: python:3.12-slim-bookworm)."
    )] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written as JSON."
                                          )] = False,
) -> None:
    """Write PROBLEM_DIR as a Harbor multi-step task: one step per checkpoint, benchwright's
    grading as the verifier (docs/harbor.md)."""
    from benchwright.harbor.export import DEFAULT_BASE_IMAGE, export_problem

    if out.exists() and (out.is_symlink() or not out.is_dir()):
        raise UserInputError("--out exists and is not a folder", path=out)
    result = export_problem(problem_dir, out, base_image or DEFAULT_BASE_IMAGE)
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    typer.echo(f"wrote the Harbor task {result.task_name} ({len(result.steps)} steps) to "
               f"{result.task_dir}")
