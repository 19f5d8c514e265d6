"""The `benchwright` command: every command group registered in one place."""

from __future__ import annotations

from typing import Annotated

import typer

from benchwright import __version__
from benchwright.cli import (
    agents_cmd,
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
from benchwright.cli.verbosity import set_verbosity

app = typer.Typer(
    name="benchwright",
    help="Run AI agents through checkpointed benchmarks and grade them deterministically, offline. "
    "Option defaults may come from benchwright.toml (docs/cli.md, Defaults).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(run_cmd.app, name="run")
app.add_typer(eval_cmd.app, name="eval")
app.command("report")(report_cmd.report_cmd)
app.add_typer(metrics_cmd.app, name="metrics")
app.add_typer(problems_cmd.app, name="problems")
app.add_typer(agents_cmd.app, name="agents")
app.add_typer(web_cmd.app, name="web")
app.add_typer(testing_cmd.app, name="testing")
app.command("view")(view_cmd.view_cmd)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"benchwright {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    verbose: Annotated[int, typer.Option(
        "--verbose", "-v", count=True, show_default=False,
        help="Log what benchwright does on stderr (-vv: debug detail).")] = 0,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress bars or notes on stderr (errors and warnings "
        "still print).")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Run AI agents through checkpointed benchmarks and grade them deterministically, offline."""
    set_verbosity(verbose, quiet)


def main() -> None:
    """Entry point of the `benchwright` command."""
    run_app(app)
