"""The run kernel, shared by every track: a run folder's layout, manifest header, journals,
lock and clock; `start`, the one lifecycle of every run (lifecycle.py); `regrade`; and `open_run`
(also `open`), which hands a run folder to the track that owns it.

It imports no track: tracks are found by name in `benchwright.registry.TRACKS`.
"""

from __future__ import annotations

from benchwright.runs.lifecycle import open_saved, regrade, start
from benchwright.runs.owner import OpenRun, open, open_run

__all__ = ["OpenRun", "open", "open_run", "open_saved", "regrade", "start"]
