"""The progress bar of long work on stderr (a run, a bundle, a judging). It appears with the
first thing it counts, so an error found before any work starts prints alone, and an error that
ends the work erases it: the error line is the last thing on the terminal. It is silent under
`-q` and `--json`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchwright.cli.verbosity import notes_console

if TYPE_CHECKING:
    from rich.progress import TaskID


class RunProgress:
    """A bar counting one kind of unit (checkpoints, trials); use it as a context manager."""

    def __init__(self, unit: str, quiet: bool) -> None:
        from rich.progress import (  # when a command starts its work, not at start-up
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.unit = unit
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=notes_console(), disable=quiet)
        self.task: TaskID | None = None

    def update(self, **fields: Any) -> None:
        """Update the bar (rich's `Progress.update` fields), showing it the first time."""
        if self.task is None:
            self.bar.start()
            self.task = self.bar.add_task(self.unit, total=None)
        self.bar.update(self.task, **fields)

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self.task is None:  # a bar never shown leaves nothing behind, not even a newline
            return
        if exc_type is not None:  # the error line is the last thing on the terminal: no bar
            self.bar.update(self.task, visible=False)
            self.bar.live.transient = True
        self.bar.stop()
