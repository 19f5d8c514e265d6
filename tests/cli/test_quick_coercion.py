"""cli/quick_coercion.py: for every parameter of every command, the value the quick checker gives
for its default, for None and for a string of its type is the value typer's own pydantic
checker gives (the quick one only skips building that checker), and a value it does not take
as it is still gets typer's checking and message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from typer._coercion import build_runtime_param

from benchwright.cli.entry import command
from benchwright.cli.main import app
from benchwright.cli.quick_coercion import quick


def _params(group: Any) -> Iterator[Any]:
    yield from group.params
    for sub in getattr(group, "commands", {}).values():
        yield from _params(sub)


def _both(param: Any, value: Any) -> tuple[Any, Any]:
    """(typer's own result, the quick checker's) for one value, or the errors' messages."""
    results = []
    for runtime in (build_runtime_param(param.type_descriptor), QUICK[id(param)]):
        try:
            results.append(runtime.coerce(value, param=param, ctx=None))
        except Exception as exc:  # typer's BadParameter, the same from both
            results.append(("error", str(exc)))
    return results[0], results[1]


PARAMS = [p for p in _params(command(app)) if hasattr(p, "type_descriptor")]
QUICK = {id(p): p._runtime_param for p in PARAMS}
"""Each parameter's quick checker as installed (one that falls back replaces itself)."""


def test_every_parameter_got_the_quick_checker() -> None:
    assert len(PARAMS) > 200
    assert {type(checker).__name__ for checker in QUICK.values()} == {"Quick"}


def test_the_quick_value_is_typers() -> None:
    differ = []
    for param in PARAMS:
        samples = [None, param.default]
        kind = param.type_descriptor.annotation
        samples += {int: ["7", 7, 0, -1, 10**12], float: ["0.5", 2, 2.5, -1.0],
                    str: ["x", ""]}.get(kind, [])
        for value in samples:
            typer_value, quick_value = _both(param, value)
            if quick_value != typer_value or type(quick_value) is not type(typer_value):
                differ.append((param.name, value, typer_value, quick_value))
    assert differ == []


def test_an_unfit_value_gets_typers_message() -> None:
    [trials] = [p for p in command(app).commands["run"].commands["coding"].params
                if p.name == "trials"]
    quick(trials)
    with pytest.raises(Exception, match="greater than or equal to 1"):
        trials.get_runtime_param().coerce(0, param=trials, ctx=None)
