"""The `benchwright` command: every command group registered in one place, by name, and imported
only when it runs (`lazy_group.py`): start-up loads no track."""

from __future__ import annotations

from typing import Annotated

import typer

from benchwright.cli.entry import prepared, run_app
from benchwright.cli.lazy_group import lazy_group
from benchwright.cli.verbosity import set_verbosity
from benchwright.version import __version__

# name -> the Typer app (a group) or the function (a command) it runs, in `--help`'s order
COMMANDS = {
    "run": "benchwright.cli.run_group:app",
    "eval": "benchwright.cli.eval_cmd:app",
    "report": "benchwright.cli.report_cmd:report_cmd",
    "plan": "benchwright.cli.plan_cmd:plan_cmd",
    "metrics": "benchwright.cli.metrics_cmd:app",
    "problems": "benchwright.cli.problems_cmd:app",
    "agents": "benchwright.cli.agents_cmd:app",
    "web": "benchwright.cli.web_cmd:app",
    "testing": "benchwright.cli.testing_cmd:app",
    "view": "benchwright.cli.view_cmd:view_cmd",
    "export": "benchwright.cli.export_cmd:app",
    "llm": "benchwright.cli.llm_cmd:app",
    "images": "benchwright.cli.images_cmd:app",
    "cache": "benchwright.cli.cache_cmd:app",
}

app = typer.Typer(
    name="benchwright",
    help="Run AI agents through checkpointed benchmarks and grade them deterministically, offline. "
    "Option defaults may come from benchwright.toml (docs/cli.md, Defaults).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=lazy_group(COMMANDS, prepared),
)


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
