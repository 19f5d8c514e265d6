"""typer (0.2x) checks each parameter's value with a pydantic TypeAdapter, built the first time
the parameter is processed, and click processes every parameter a command has (one left out
as None) before it runs or prints its help: every command, `--help` too, imported pydantic
(~0.1 s CPU of a start-up of ~0.2 s, bench/cli_startup.py).

`quick(param)` gives a parameter a checker that returns, without pydantic, the values typer's
adapter would return unchanged: None (typer's own None and empty-list rule), and a value that
already has the parameter's own type (a count, a default, a string option's string, an enum
member; an int default of a float option becomes its float) within the parameter's bounds,
when no parser or click type applies to it. Any other value goes to typer's
adapter, built then, so conversions and error messages stay typer's.
"""

from __future__ import annotations

import functools
from enum import Enum
from typing import Any

_PLAIN = (int, float, str, bool)


def quick(param: Any) -> None:
    """Install the quick checker on one typer parameter (nothing on a typer that has no
    pydantic coercion, or for a parameter that needs a parser, a click type or a path)."""
    descriptor = getattr(param, "type_descriptor", None)
    checker = _checker_class()
    if checker is None or descriptor is None or getattr(param, "_runtime_param", 0) is not None:
        return
    info = getattr(descriptor, "parameter_info", None)
    kind = getattr(descriptor, "annotation", None)
    plain = kind in _PLAIN or (isinstance(kind, type) and issubclass(kind, Enum))
    if not plain or getattr(descriptor, "file_annotation", None) is not None or any(
            getattr(info, name, None) is not None for name in ("parser", "click_type")):
        kind = None  # only None is taken as it is
    try:
        param._runtime_param = checker(parameter_info=info, annotation=descriptor.annotation,
                                       descriptor=descriptor, kind=kind)
    except (TypeError, AttributeError):  # a typer whose internals moved: its own checker
        return


@functools.cache
def _checker_class() -> type[Any] | None:
    """The checker, a typer `RuntimeParam` (None when this typer has none)."""
    try:
        from dataclasses import dataclass

        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # a typer that coerces with click's own types: nothing to avoid
        return None

    @dataclass(frozen=True)
    class Quick(RuntimeParam):
        descriptor: Any
        """typer's description of the parameter, to build its own checker from."""
        kind: type[Any] | None
        """The type whose values pass as they are (None: only None does)."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.kind is float and type(value) is int:  # an int default: as pydantic does
                value = float(value)
            if self.kind is not None and type(value) is self.kind and _in_bounds(
                    value, self.parameter_info):
                return value
            full = build_runtime_param(self.descriptor)
            param._runtime_param = full
            return full._coerce_value(value, param=param, ctx=ctx)

    return Quick


def _in_bounds(value: Any, info: Any) -> bool:
    """A number inside the parameter's min and max (clamping would leave it as it is)."""
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    return (low is None or value >= low) and (high is None or value <= high)
