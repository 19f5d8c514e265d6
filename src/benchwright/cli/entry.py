"""The one place where an error, Ctrl-C or SIGTERM becomes a one-line message and an exit code.

SIGTERM takes Ctrl-C's path: it is raised as KeyboardInterrupt in the main thread, so a run stops
its workers and sandboxes, removes its temporary folders and says how to resume, exactly as after
Ctrl-C; only the exit code differs (143 instead of 130, as shells expect).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import NoReturn

import typer
from rich.console import Console

from benchwright.errors import BenchwrightError

try:  # recent typer ships its own copy of click; older ones use click itself
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    from click import exceptions as click_errors  # type: ignore[no-redef]

INTERRUPTED_EXIT = 130
SIGTERM_EXIT = 128 + signal.SIGTERM
_terminated = False


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    global _terminated
    _terminated = True
    raise KeyboardInterrupt


def run_app(app: typer.Typer) -> None:
    """Run a Typer app; a BenchwrightError or a bad option becomes one line on stderr and its
    exit code (click's own handling draws a multi-line box for a bad option)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        code = app(standalone_mode=False)
    except BenchwrightError as exc:
        _fail(exc.one_line(), _interrupt_code(exc.exit_code))
    except click_errors.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError" and exc.ctx is not None:
            typer.echo(exc.ctx.get_help())  # a bare group: its help, as click would print it
            sys.exit(exc.exit_code)
        _fail(_usage_line(exc), exc.exit_code)
    except click_errors.ClickException as exc:
        _fail(" ".join(exc.format_message().split()), exc.exit_code)
    except typer.Abort:
        _interrupted()
    except SystemExit as exc:  # Typer may turn a bare KeyboardInterrupt into a silent exit 130
        if exc.code == INTERRUPTED_EXIT:
            _interrupted()
        raise
    if code == INTERRUPTED_EXIT:
        _interrupted()
    sys.exit(code if isinstance(code, int) else 0)


def _interrupt_code(code: int) -> int:
    """130 (Ctrl-C) becomes 143 when SIGTERM was the cause."""
    return SIGTERM_EXIT if _terminated and code == INTERRUPTED_EXIT else code


def _interrupted() -> NoReturn:
    _fail("stopped by SIGTERM" if _terminated else "interrupted", _interrupt_code(INTERRUPTED_EXIT))


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
