"""The `benchwright` command: every command group registered in one place."""

from __future__ import annotations

import typer

from benchwright import __version__
from benchwright.cli import (
    eval_cmd,
    metrics_cmd,
    problems_cmd,
    report_cmd,
    run_cmd,
    testing_cmd,
    view_cmd,
    web_cmd,
)
from benchwright.cli.entry import run_app

app = typer.Typer(
    name="benchwright",
    help="Run AI agents through checkpointed benchmarks and grade them deterministically, offline.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(run_cmd.app, name="run")
app.add_typer(eval_cmd.app, name="eval")
app.command("report")(report_cmd.report_cmd)
app.add_typer(metrics_cmd.app, name="metrics")
app.add_typer(problems_cmd.app, name="problems")
app.add_typer(web_cmd.app, name="web")
app.add_typer(testing_cmd.app, name="testing")
app.command("view")(view_cmd.view_cmd)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"benchwright {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Run AI agents through checkpointed benchmarks and grade them deterministically, offline."""


def main() -> None:
    """Entry point of the `benchwright` command."""
    run_app(app)
