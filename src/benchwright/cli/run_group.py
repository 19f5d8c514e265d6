"""`benchwright run`: the run commands, each imported when it runs (`run coding` loads no web
track, `run web` no coding track: the CLI's start-up is paid by every run and every test that
starts it)."""

from __future__ import annotations

import typer

from benchwright.cli.entry import prepared
from benchwright.cli.lazy_group import lazy_group

COMMANDS = {
    "coding": "benchwright.cli.run_cmd:coding_cmd",
    "web": "benchwright.cli.run_web_cmd:run_web_cmd",
    "harbor": "benchwright.cli.run_harbor_cmd:run_harbor_cmd",
}

app = typer.Typer(help="Run agents through benchmarks.", no_args_is_help=True,
                  cls=lazy_group(COMMANDS, prepared))
