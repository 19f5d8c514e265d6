"""The one place where a BenchwrightError, Ctrl-C or SIGTERM becomes a message and an exit code.

SIGTERM takes Ctrl-C's path: it is raised as KeyboardInterrupt in the main thread, so a run stops
its workers and sandboxes, removes its temporary folders and says how to resume, exactly as after
Ctrl-C; only the exit code differs (143 instead of 130, as shells expect).
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

import typer
from rich.console import Console

from benchwright.errors import BenchwrightError

SIGTERM_EXIT = 128 + signal.SIGTERM
_terminated = False


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    global _terminated
    _terminated = True
    raise KeyboardInterrupt


def run_app(app: typer.Typer) -> None:
    """Run a Typer app; a BenchwrightError becomes one line on stderr and its exit code."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    err = Console(stderr=True, highlight=False)
    try:
        app()
    except BenchwrightError as exc:
        err.print(f"[bold red]error:[/] {exc.one_line()}", soft_wrap=True)
        sys.exit(SIGTERM_EXIT if _terminated and exc.exit_code == 130 else exc.exit_code)
    except SystemExit as exc:  # Typer turns a bare KeyboardInterrupt into a silent exit 130
        if _terminated and exc.code == 130:
            err.print("[bold red]error:[/] stopped by SIGTERM", soft_wrap=True)
            sys.exit(SIGTERM_EXIT)
        raise
