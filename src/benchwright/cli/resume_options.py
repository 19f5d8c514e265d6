"""`--resume` continues a run with its saved configuration: an option given on the command line
that says otherwise is an error listing every such option (docs/runs.md names those that may
change)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import typer

from benchwright.errors import UserInputError

# Each option's saved value, in the option's own terms; an option missing from the map (and not
# allowed to change) conflicts whenever it is given.
Saved = Mapping[str, Any]
Normalise = Mapping[str, Callable[[Any], Any]]


def refuse_conflicts(ctx: typer.Context, saved: Saved, may_change: set[str],
                     normalise: Normalise | None = None, command: str = "run") -> None:
    """Raise if an option given on the command line differs from the saved configuration."""
    conflicts = []
    for param in ctx.command.params:
        name = param.name or ""
        if name in may_change or not _given(ctx, name):
            continue
        value = ctx.params.get(name)
        if normalise and name in normalise and value is not None:
            value = normalise[name](value)
        if name not in saved or value != saved[name]:
            conflicts.append(_flag(param))
    if conflicts:
        allowed = ", ".join(sorted(_flag(p) for p in ctx.command.params
                                   if p.name in may_change and _flag(p) != "--resume"))
        raise UserInputError(
            f"--resume uses the run's saved configuration; these options conflict with it: "
            f"{', '.join(conflicts)}",
            hint=f"drop them (only {allowed} may change), or start a new run with `{command}`")


def given_options(ctx: typer.Context, names: tuple[str, ...]) -> dict[str, Any]:
    """The options among `names` given on the command line (not defaulted), with their values:
    what a command hands its API with `resume`, which refuses each one."""
    return {name: ctx.params[name] for name in names if _given(ctx, name)}


def _given(ctx: typer.Context, name: str) -> bool:
    # by name: Typer vendors its own click, whose enum is not the installed click's
    return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"


def _flag(param: Any) -> str:
    options = [o for o in getattr(param, "opts", []) if o.startswith("--")]
    return options[0] if options else (param.name or "?")
