"""`-v/--verbose` and `-q/--quiet` on the root command.

-q: no progress bars, spinners or "wrote ..." notes on stderr (errors and warnings still print;
`--json` output is unchanged). -v: benchwright's log lines (and the libraries') at INFO on
stderr; -vv at DEBUG.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

_state = {"quiet": False}


def set_verbosity(verbose: int, quiet: bool) -> None:
    """Apply the root command's -v/-q (called once, before any subcommand)."""
    _state["quiet"] = quiet
    if verbose and not quiet:
        import logging  # only with -v: not at every start

        logging.basicConfig(level=logging.DEBUG if verbose > 1 else logging.INFO,
                            format="%(levelname)s %(name)s: %(message)s")


def quiet() -> bool:
    """Whether -q was given."""
    return _state["quiet"]


def notes_console() -> Console:
    """The stderr console for progress bars, spinners and notes: silent under -q."""
    from rich.console import Console  # not at start-up: `--help` prints none

    return Console(stderr=True, quiet=quiet())


class Status(Protocol):
    """A spinner's line, updated as work goes on."""

    def update(self, status: str) -> None:
        """Show `status` in place of the line's text."""


class _Silent:
    def update(self, status: str) -> None:
        pass


@contextmanager
def spinner(text: str) -> Iterator[Status]:
    """A spinner on stderr while the block runs; none under -q or when stderr is not a terminal,
    where rich would draw nothing, so one-shot commands (`eval checkpoint --json` in a script)
    do not pay for importing it."""
    if quiet() or not (sys.stderr.isatty() or os.environ.get("FORCE_TERMINAL")):
        yield _Silent()
        return
    with notes_console().status(text) as status:
        yield status
