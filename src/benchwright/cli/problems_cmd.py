"""`benchwright problems`: the bundled example problems."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from benchwright.cli.option_checks import new_dir
from benchwright.cli.problems_validate import validate_cmd
from benchwright.coding.examples import example_names, example_problem_dir
from benchwright.coding.loader import load_problem
from benchwright.coding.scaffold import Kind, new_problem

app = typer.Typer(help="The bundled example problems; validate or scaffold a problem.",
                  no_args_is_help=True)
app.command("validate")(validate_cmd)


@app.command("new")
def new_cmd(
    name: Annotated[str, typer.Argument(help="The problem's name (and its folder's).")],
    kind: Annotated[Kind, typer.Option(help="cli: a command-line tool; http: an HTTP server.")]
    = "cli",
    out: Annotated[Path, typer.Option(
        parser=new_dir, help="Where the problem's folder is made.")] = Path(),
) -> None:
    """Write a working two-checkpoint problem to edit into your own (see docs/problem-format.md)."""
    folder = new_problem(name, kind, out)
    typer.echo(f"wrote {folder}; check it with `benchwright problems validate {folder}`")


@app.command("list")
def list_problems() -> None:
    """List the bundled example problems and their checkpoints."""
    table = Table("problem", "checkpoints", "entry file", "description")
    for name in example_names():
        problem = load_problem(example_problem_dir(name))
        summary = re.split(r"[:.]\s", " ".join(problem.description.split()), maxsplit=1)[0]
        table.add_row(name, str(len(problem.checkpoints)), problem.entry_filename, summary)
    Console().print(table)
