"""The run kernel, shared by every track: a run folder's layout, manifest header, journals,
lock and clock; `new_or_resumed`, every run's front door; `start`, the one lifecycle of every
run (lifecycle.py); `amend`, a step over a saved run (the judge); `regrade`; and `open_run`
(also `open`), which hands a run folder to the track that owns it.

It imports no track: tracks are found by name in `benchwright.registry.TRACKS`.
"""

from __future__ import annotations

from benchwright.runs.lifecycle import amend, new_or_resumed, open_saved, regrade, start
from benchwright.runs.owner import OpenRun, open, open_run

__all__ = ["OpenRun", "amend", "new_or_resumed", "open", "open_run", "open_saved", "regrade",
           "start"]
