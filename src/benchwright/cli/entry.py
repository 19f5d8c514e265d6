"""The one place where an error becomes a one-line message and its exit code."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

from benchwright.errors import BenchwrightError

try:  # recent typer ships its own copy of click; older ones use click itself
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    from click import exceptions as click_errors  # type: ignore[no-redef]


def run_app(app: typer.Typer) -> None:
    """Run a Typer app; a BenchwrightError or a bad option becomes one line on stderr and its
    exit code (click's own handling draws a multi-line box for a bad option)."""
    try:
        code = app(standalone_mode=False)
    except BenchwrightError as exc:
        _fail(exc.one_line(), exc.exit_code)
    except click_errors.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError" and exc.ctx is not None:
            typer.echo(exc.ctx.get_help())  # a bare group: its help, as click would print it
            sys.exit(exc.exit_code)
        _fail(_usage_line(exc), exc.exit_code)
    except click_errors.ClickException as exc:
        _fail(" ".join(exc.format_message().split()), exc.exit_code)
    except typer.Abort:
        _fail("interrupted", 130)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_line(exc: click_errors.UsageError) -> str:
    message = " ".join(exc.format_message().split())
    return f"{message} (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else message


def _printable(line: str) -> str:
    """Control characters (a newline in a file name) escaped, so the message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)


def _fail(line: str, code: int) -> NoReturn:
    # markup only in the prefix: a message may hold brackets (paths, user input)
    console = Console(stderr=True, highlight=False)
    console.print("[bold red]error:[/] ", end="")
    console.print(_printable(line), soft_wrap=True, markup=False)
    sys.exit(code)
