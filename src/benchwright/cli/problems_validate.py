"""`benchwright problems validate`: the command and its table."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchwright.cli.option_checks import MAX_REPEAT
from benchwright.cli.runtime_options import ImageOption, RuntimeOption
from benchwright.errors import UserInputError

if TYPE_CHECKING:  # the track and rich are imported when the command runs, not for --help
    from rich.table import Table
    from rich.text import Text

    from benchwright.coding.validation.models import ValidationReport


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
    runtime: RuntimeOption = "bwrap",
    image: ImageOption = None,
) -> None:
    """Grade every checkpoint's reference solution REPEAT times under varied conditions (hash
    seed, time zone, test-file order, a busy CPU, a clock near a power of two) and report
    flaky or failing tests, missing data, network needs, slow tests, unfilled spec
    placeholders and tests visible too early. Exit 0 clean, 1 findings."""
    if repeat < 1:
        raise UserInputError("--repeat must be at least 1", hint="e.g. --repeat 5")
    from benchwright.coding.grading.grader import GradeOptions
    from benchwright.coding.grading.scratch import sweep_leftovers
    from benchwright.coding.validation.validate import (
        count_checkpoints,
        problem_folders,
        validate_problems,
    )
    from benchwright.sandbox.bwrap import get_runtime
    from benchwright.sandbox.images.resolve import image_for_runtime

    image_id = image_for_runtime(runtime, image)
    folders = problem_folders(problems_dir, problem or [])
    total = count_checkpoints(folders) * repeat
    sweep_leftovers()  # scratch folders (hidden tests inside) of a killed predecessor
    options = GradeOptions(runtime=get_runtime(False, runtime, image_id), python=python)
    with _progress(total, quiet=as_json) as advance:
        report = validate_problems(folders, repeat, options, advance)
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        _print_report(report)
    if not report.clean:
        raise typer.Exit(1)


def _print_report(report: ValidationReport) -> None:
    """Where the problems came from heads the output, as in the run's report; the table and
    the findings follow; the one-line summary stays last, where scripts read it."""
    from rich.console import Console

    from benchwright.coding.report.sources import source_lines

    console = Console()
    sources = {p.problem: p.source for p in report.problems if p.source is not None}
    for origin in source_lines(sources):
        console.print(f"problems from: {origin}", highlight=False, markup=False, soft_wrap=True)
    console.print(report_table(report))
    for line in finding_lines(report):
        console.print(line, highlight=False)
    console.print(summary_line(report), highlight=False)


@contextlib.contextmanager
def _progress(total: int, quiet: bool) -> Iterator[Callable[[str], None]]:
    """A bar on a terminal; piped, a line per graded run on stderr (`[3/15] kv_server/...`)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    err = Console(stderr=True)
    if not err.is_terminal:
        done = [0]

        def line(what: str) -> None:
            done[0] += 1
            if not quiet:
                err.print(f"[{done[0]}/{total}] {what}", highlight=False, markup=False)
        yield line
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("validating", total=total)

        def advance(what: str) -> None:
            bar.update(task, description=what)
            bar.advance(task)
        yield advance


def report_table(report: ValidationReport) -> Table:
    """One row per checkpoint: Core and all-tests passes over the runs, its findings' kinds
    (each finding is a line below the table: `finding_lines`)."""
    from rich.table import Table

    table = Table("problem", "checkpoint", "core pass", "all pass", "findings",
                  title=f"reference solutions graded {report.repeat}x")
    for problem in report.problems:
        if problem.findings:
            table.add_row(problem.problem, "-", "-", "-", ", ".join(
                f"[red]{f.kind}[/]" for f in problem.findings))
        for checkpoint in problem.checkpoints:
            runs = checkpoint.runs
            kinds = Counter(str(f.kind) for f in checkpoint.findings)
            findings = ", ".join(f"[red]{k}[/]" + (f" x{n}" if n > 1 else "")
                                 for k, n in kinds.items()) or "[green]clean[/]"
            table.add_row(problem.problem, checkpoint.checkpoint,
                          f"{sum(r.core_passed for r in runs)}/{len(runs)}",
                          f"{sum(r.all_passed for r in runs)}/{len(runs)}", findings)
    return table


def finding_lines(report: ValidationReport) -> list[Text]:
    """Each finding on its own line: `problem/checkpoint kind test: detail`."""
    from rich.text import Text

    def line(where: str, kind: object, detail: str) -> Text:
        return Text.assemble(f"{where} ", (str(kind), "red"), f" {detail}")

    lines = []
    for problem in report.problems:
        lines += [line(problem.problem, f.kind, f.detail) for f in problem.findings]
        lines += [line(f"{problem.problem}/{checkpoint.checkpoint}", f.kind,
                       f"{f.test + ': ' if f.test else ''}{f.detail}")
                  for checkpoint in problem.checkpoints for f in checkpoint.findings]
    return lines


def summary_line(report: ValidationReport) -> str:
    """One line: how many checkpoints, how many clean, the findings by kind."""
    checkpoints = [c for p in report.problems for c in p.checkpoints]
    kinds = Counter(str(f.kind) for c in checkpoints for f in c.findings)
    kinds.update(str(f.kind) for p in report.problems for f in p.findings)
    clean = sum(not c.findings for c in checkpoints)
    found = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    return (f"{len(report.problems)} problem(s), {len(checkpoints)} checkpoint(s) graded "
            f"{report.repeat}x: {clean} clean" + (f"; findings: {found}" if found else ""))
