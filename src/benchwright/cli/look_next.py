"""Where to look next, printed at the end of every `run coding` and `run web`: the viewer."""

from __future__ import annotations

import shlex
from pathlib import Path

from benchwright.cli.verbosity import quiet


def print_look_next(run_dir: Path) -> None:
    """The `benchwright view` command for the run just finished (on stderr, as the report's
    path is)."""
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True, quiet=quiet()).print(
        f"[dim]see it: benchwright view {shlex.quote(str(run_dir))}[/]")
