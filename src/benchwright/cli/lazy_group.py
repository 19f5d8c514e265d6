"""The root command's subcommands, imported when one is asked for: `benchwright eval checkpoint`
loads the eval command's module and nothing of `run`, `web`, `view` or `report` (start-up time is
part of every graded checkpoint, bench/grade_overhead.py). Walking all of them (`--help`, the
defaults file, the tests) loads them all.

Each subcommand is written "module:attribute", as the registry names parts: a Typer app (a
group) or a command function.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

import typer
from typer.core import TyperGroup


class LazyCommands(MutableMapping[str, Any]):
    """click's `Group.commands`: names known up front, each command built on first use."""

    def __init__(self, eager: Mapping[str, Any], table: Mapping[str, str],
                 prepare: Callable[[Any], Any]) -> None:
        self._loaded = dict(eager)
        self._table = table  # kept as given: a table may find its names only when listed
        self._removed: set[str] = set()
        self._prepare = prepare

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            if name in self._removed or name not in self._table:
                raise KeyError(name)
            self._loaded[name] = self._prepare(_build(name, self._table[name]))
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or (name not in self._removed and name in self._table)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*(n for n in self._table if n not in self._removed),
                                   *self._loaded]))

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __setitem__(self, name: str, command: Any) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._removed.add(name)
        self._loaded.pop(name, None)


def _build(name: str, target: str) -> Any:
    """The click command of "module:attribute": a Typer app as its group, a function as one
    command."""
    module, _, attribute = target.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    if isinstance(found, typer.Typer):  # a group even with one command (`testing fake-llm`)
        group = typer.main.get_group(found)
        group.name = name
        return group
    single = typer.Typer(add_completion=False)  # the root has none; neither has a command
    single.command(name)(found)
    return typer.main.get_command(single)


def lazy_group(table: Mapping[str, str], prepare: Callable[[Any], Any] = lambda c: c
               ) -> type[TyperGroup]:
    """A root group class whose subcommands are `table`'s, each imported when asked for and
    passed through `prepare` (the CLI's tweaks to every command) once built."""

    class LazyGroup(TyperGroup):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.commands = LazyCommands(self.commands, table, prepare)

    return LazyGroup
