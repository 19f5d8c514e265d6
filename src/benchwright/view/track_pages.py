"""What the viewer asks of each track's pages (its entry's `view_pages` in `registry.TRACKS`, by
the track's name the kernel reads from a run's manifest): the viewer never tells tracks apart."""

from __future__ import annotations

from typing import Any, Protocol

from benchwright.view.catalog import RunRef
from benchwright.view.run_state import RunState


class TrackPages(Protocol):
    """The pages of one track's runs, as JSON-ready data."""

    track: str
    """The track's name."""

    def row(self, ref: RunRef, state: RunState) -> dict[str, Any]:
        """The run's row in the run list and the overview."""
        ...

    def ci(self, ref: RunRef) -> dict[str, Any]:
        """The run's headline rates with 95% CIs (`metrics`: name and estimate)."""
        ...

    def run_page(self, ref: RunRef, state: RunState) -> dict[str, Any]:
        """The run's own page."""
        ...

    def detail(self, ref: RunRef, rest: list[str]) -> dict[str, Any] | None:
        """A page below the run (its key's parts after `run/<rid>/`); None: no such page."""
        ...

    def compare(self, a: RunRef, b: RunRef) -> dict[str, Any]:
        """Run a against run b (of this track)."""
        ...

    def keys(self, ref: RunRef) -> list[str]:
        """Every data key of the run's pages (a bundle writes them all)."""
        ...
