"""`benchwright problems`: the bundled example problems."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer

from benchwright.cli.json_output import echo_json
from benchwright.cli.option_checks import new_dir
from benchwright.cli.option_values import ProblemKind
from benchwright.cli.problems_validate import validate_cmd

app = typer.Typer(help="The bundled example problems; validate or scaffold a problem.",
                  no_args_is_help=True)
app.command("validate")(validate_cmd)


@app.command("new")
def new_cmd(
    name: Annotated[str, typer.Argument(help="The problem's name (and its folder's).")],
    kind: Annotated[ProblemKind, typer.Option(
        help="cli: a command-line tool; http: an HTTP server.")] = "cli",
    out: Annotated[Path, typer.Option(
        parser=new_dir, metavar="DIR", help="Where the problem's folder is made.")] = Path(),
    as_json: Annotated[bool, typer.Option("--json", help="Print the new folder as JSON.")]
    = False,
) -> None:
    """Write a working two-checkpoint problem to edit into your own (see docs/problem-format.md)."""
    from benchwright.coding.problems.scaffold import new_problem

    folder = new_problem(name, kind, out)
    if as_json:
        echo_json({"problem_dir": str(folder)})
        return
    typer.echo(f"wrote {folder}; check it with `benchwright problems validate {folder}`")


@app.command("list")
def list_problems(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
    = False,
) -> None:
    """List the bundled example problems and their checkpoints."""
    from rich.console import Console
    from rich.table import Table

    from benchwright.coding.problems.examples import example_names, example_problem_dir
    from benchwright.coding.problems.loader import load_problem

    rows: list[dict[str, Any]] = []
    for name in example_names():
        problem = load_problem(example_problem_dir(name))
        summary = re.split(r"[:.]\s", " ".join(problem.description.split()), maxsplit=1)[0]
        rows.append({"problem": name, "checkpoints": [c.name for c in
                                                      problem.ordered_checkpoints()],
                     "entry_file": problem.entry_filename, "description": summary})
    if as_json:
        echo_json(rows)
        return
    table = Table("problem", "checkpoints", "entry file", "description")
    for row in rows:
        table.add_row(str(row["problem"]), str(len(row["checkpoints"])), str(row["entry_file"]),
                      str(row["description"]))
    Console().print(table)
