"""Where to look next, printed at the end of every `run coding` and `run web`: the viewer."""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.console import Console


def print_look_next(run_dir: Path) -> None:
    """The `benchwright view` command for the run just finished (on stderr, as the report's
    path is)."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        f"[dim]see it: benchwright view {shlex.quote(str(run_dir))}[/]")
