"""The one place where a BenchwrightError becomes a one-line message and its exit code."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from benchwright.errors import BenchwrightError


def run_app(app: typer.Typer) -> None:
    """Run a Typer app; a BenchwrightError becomes one line on stderr and its exit code."""
    try:
        app()
    except BenchwrightError as exc:
        Console(stderr=True, highlight=False).print(f"[bold red]error:[/] {exc.one_line()}",
                                                    soft_wrap=True)
        sys.exit(exc.exit_code)
