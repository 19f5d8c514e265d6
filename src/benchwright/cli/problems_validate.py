"""`benchwright problems validate`: the command and its table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from benchwright.cli.option_checks import MAX_REPEAT
from benchwright.coding.grading import GradeOptions
from benchwright.coding.scratch import sweep_leftovers
from benchwright.coding.validate import count_checkpoints, problem_folders, validate_problems
from benchwright.coding.validate_models import ValidationReport
from benchwright.errors import UserInputError
from benchwright.sandbox import get_runtime


def validate_cmd(
    problems_dir: Annotated[Path, typer.Argument(
        help="A folder of problems, or one problem's folder.")],
    problem: Annotated[list[str] | None, typer.Option(
        "--problem", help="Only this problem (repeatable).")] = None,
    repeat: Annotated[int, typer.Option(
        min=1, max=MAX_REPEAT, help="Gradings of each reference solution.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON document.")] = False,
    python: Annotated[str | None, typer.Option(
        metavar="VERSION|PATH", help="Interpreter for the environments.")] = None,
) -> None:
    """Grade every checkpoint's reference solution REPEAT times under varied conditions (hash
    seed, time zone, test-file order, a busy CPU, a clock near a power of two) and report
    flaky or failing tests, missing data, network needs, slow tests, unfilled spec
    placeholders and tests visible too early. Exit 0 clean, 1 findings."""
    if repeat < 1:
        raise UserInputError("--repeat must be at least 1", hint="e.g. --repeat 5")
    folders = problem_folders(problems_dir, problem or [])
    total = count_checkpoints(folders) * repeat
    sweep_leftovers()  # scratch folders (hidden tests inside) of a killed predecessor
    options = GradeOptions(runtime=get_runtime(), python=python)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("validating", total=total)

        def advance(what: str) -> None:
            bar.update(task, description=what)
            bar.advance(task)

        report = validate_problems(folders, repeat, options, advance)
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        Console().print(report_table(report))
    if not report.clean:
        raise typer.Exit(1)


def report_table(report: ValidationReport) -> Table:
    """One row per checkpoint: Core and all-tests passes over the runs, then its findings."""
    table = Table("problem", "checkpoint", "core pass", "all pass",
                  title=f"reference solutions graded {report.repeat}x")
    table.add_column("findings", overflow="fold")
    for problem in report.problems:
        for checkpoint in problem.checkpoints:
            runs = checkpoint.runs
            findings = "\n".join(
                f"[red]{f.kind}[/] {f.test + ': ' if f.test else ''}{f.detail}"
                for f in checkpoint.findings) or "[green]clean[/]"
            table.add_row(problem.problem, checkpoint.checkpoint,
                          f"{sum(r.core_passed for r in runs)}/{len(runs)}",
                          f"{sum(r.all_passed for r in runs)}/{len(runs)}", findings)
    return table
