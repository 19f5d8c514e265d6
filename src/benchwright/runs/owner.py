"""`open_run` (also `runs.open`): the run in a folder and the track that owns it, named by its
manifest's header and found in `benchwright.registry.TRACKS` (the kernel imports no track)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.protocols import AnyTrack
from benchwright.registry import TRACKS
from benchwright.runs.manifest import ManifestHeader, read_header


@dataclass(frozen=True)
class OpenRun:
    """A run folder and the track that owns it."""

    path: Path
    """The run folder."""
    header: ManifestHeader
    """Its manifest's common fields."""
    track: AnyTrack
    """The track named by the manifest (`track`, or for older runs the exact `format`)."""


def open_run(path: Path, expect: str | None = None) -> OpenRun:
    """The run in `path` with its track; a folder that holds no run, or (with `expect`) a run
    of another track, is the user's error."""
    expected = TRACKS.get(expect) if expect is not None else None
    header = (read_header(path, expected.noun, expected.command) if expected is not None
              else read_header(path))
    track = TRACKS.get(header.track_name)
    if expected is not None and track is not expected:
        raise UserInputError(f"{path} is a {track.name} run, not a {expect} run",
                             hint=f"continue it with: {track.resume_command(path)}")
    return OpenRun(path=path, header=header, track=track)


open = open_run  # `runs.open(path)`; this package never calls the builtin `open`

