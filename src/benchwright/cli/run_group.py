"""`benchwright run`: one command per registered track (`registry.TRACKS`: `run coding`, `run web`,
a plugin's), each imported when it runs (`run coding` loads no web track, `run web` no coding
track: the CLI's start-up is paid by every run and every test that starts it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import typer

from benchwright.cli.entry import prepared
from benchwright.cli.lazy_group import lazy_group
from benchwright.registry import TRACK_ENTRIES, TRACKS


class TrackCommands(Mapping[str, str]):
    """Track name -> its `run_command`; a built-in is found without reading the installed
    distributions' entry points (listing every command, as `--help` does, reads them)."""

    def __getitem__(self, name: str) -> str:
        if name in TRACK_ENTRIES:
            return TRACK_ENTRIES[name].run_command
        if name not in TRACKS:
            raise KeyError(name)
        return TRACKS.entry(name).run_command

    def __iter__(self) -> Iterator[str]:
        return iter(TRACKS.names())

    def __len__(self) -> int:
        return len(TRACKS.names())


COMMANDS = TrackCommands()

app = typer.Typer(help="Run agents through benchmarks.", no_args_is_help=True,
                  cls=lazy_group(COMMANDS, prepared))
