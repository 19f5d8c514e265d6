"""`benchwright problems`: the bundled example problems."""

from __future__ import annotations

import re

import typer
from rich.console import Console
from rich.table import Table

from benchwright.cli.problems_validate import validate_cmd
from benchwright.coding.examples import example_names, example_problem_dir
from benchwright.coding.loader import load_problem

app = typer.Typer(help="The bundled example problems; validate or scaffold a problem.",
                  no_args_is_help=True)
app.command("validate")(validate_cmd)


@app.command("list")
def list_problems() -> None:
    """List the bundled example problems and their checkpoints."""
    table = Table("problem", "checkpoints", "entry file", "description")
    for name in example_names():
        problem = load_problem(example_problem_dir(name))
        summary = re.split(r"[:.]\s", " ".join(problem.description.split()), maxsplit=1)[0]
        table.add_row(name, str(len(problem.checkpoints)), problem.entry_filename, summary)
    Console().print(table)
