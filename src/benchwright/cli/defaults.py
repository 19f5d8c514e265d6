"""Option defaults from a file: `benchwright.toml` in the current folder, else the
`[tool.benchwright]` table of its `pyproject.toml` (`BENCHWRIGHT_CONFIG=FILE` names another).

A table per command, keys named as the options are (`step-limit` or `step_limit`); keys at the
top apply to the root command (`quiet = true`):

    [run.coding]
    agent = "mini"
    step-limit = 50

Precedence: the command line, then an option's environment variable, then this file, then the
built-in default (docs/cli.md, "Defaults"). An unknown command or option, or a value of the
wrong type, is an error naming the file and the key for the command it belongs to; any other
command warns about it on stderr and goes on (one typo under `[run.coding]` does not stop
`report` or `view --help`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperOption

from benchwright.errors import UserInputError
from benchwright.files.untrusted import decode_untrusted, read_untrusted_bytes

CONFIG_ENV = "BENCHWRIGHT_CONFIG"
FILE = "benchwright.toml"
PYPROJECT = "pyproject.toml"
MAX_BYTES = 2**20


def defaults_file(cwd: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The defaults file in effect and its table, or None."""
    folder = cwd or Path.cwd()
    named = os.environ.get(CONFIG_ENV)
    if named:
        return Path(named), _read(Path(named))
    if (folder / FILE).exists():
        return folder / FILE, _read(folder / FILE)
    if (folder / PYPROJECT).is_file():
        table = _read(folder / PYPROJECT).get("tool", {}).get("benchwright")
        if isinstance(table, dict):
            return folder / PYPROJECT, table
    return None


def default_map(root: Any, cwd: Path | None = None,
                args: list[str] | None = None) -> dict[str, Any] | None:
    """click's `default_map` for `root` from the defaults file, checked; None without one.

    With `args` (the command line), a bad key of another command than the one invoked is a
    warning on stderr and left out; without, every bad key is an error."""
    found = defaults_file(cwd)
    if found is None:
        return None
    path, table = found
    problems: list[tuple[tuple[str, ...], UserInputError]] = []
    out = _check(root, table, path, (), problems)
    invoked = None if args is None else invoked_path(root, args)
    for where, exc in problems:
        if invoked is None or where == invoked:
            raise exc
        typer.echo(f"warning: {exc.one_line()}: ignored", err=True)
    return out


def invoked_path(root: Any, args: list[str]) -> tuple[str, ...]:
    """The command path the arguments name (`run coding`), options skipped."""
    path: list[str] = []
    command = root
    for arg in args:
        commands = getattr(command, "commands", None)
        if arg.startswith("-"):
            continue
        if not commands or arg not in commands:
            break
        command = commands[arg]
        path.append(arg)
    return tuple(path)


def _read(path: Path) -> dict[str, Any]:
    import tomllib  # only when there is a file: not at every start

    data = read_untrusted_bytes(path, what="the defaults file", max_bytes=MAX_BYTES)
    try:
        return tomllib.loads(decode_untrusted(data, path, what="the defaults file"))
    except tomllib.TOMLDecodeError as exc:
        raise UserInputError(f"not valid TOML: {exc}", path=path) from None
    except RecursionError:  # tomllib parses nested arrays and tables by recursion
        raise UserInputError("the defaults file is nested too deeply", path=path,
                             hint="a defaults file holds a table per command") from None


def _check(command: Any, table: dict[str, Any], path: Path, where: tuple[str, ...],
           problems: list[tuple[tuple[str, ...], UserInputError]]) -> dict[str, Any]:
    """The table as a default map: subcommands by name, options by parameter name; each bad
    key is left out and added to `problems` with the command path it belongs to."""
    options = [p for p in command.params if p.name and isinstance(p, TyperOption)]
    params = {_key(flag): p for p in options for flag in [*p.opts, p.name or ""]}
    subcommands = getattr(command, "commands", {})
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key in subcommands and isinstance(value, dict):
            out[key] = _check(subcommands[key], value, path, (*where, key), problems)
        elif _key(key) in params:
            param = params[_key(key)]
            try:
                out[str(param.name)] = _value(command, param, value, path, (*where, key))
            except UserInputError as exc:
                problems.append((where, exc))
        else:
            choices = sorted([*subcommands, *(_flag(p) for p in options)])
            problems.append((where, UserInputError(
                f"unknown key {'.'.join((*where, key))!r} (no such command or option)",
                path=path, hint=f"here: {', '.join(choices)}")))
    return out


def _value(command: Any, param: TyperOption, value: Any, path: Path,
           key: tuple[str, ...]) -> Any:
    """The value converted as the option converts its own (a bad one named now)."""
    try:
        param.process_value(typer.Context(command), value)
    except Exception as exc:  # click's BadParameter, or a parser's own error
        raise UserInputError(f"{'.'.join(key)}: {exc}", path=path) from None
    return value


def _key(name: str) -> str:
    """An option as a key: `--step-limit`, `step-limit` and `step_limit` are one."""
    return name.lstrip("-").replace("-", "_")


def _flag(param: TyperOption) -> str:
    longs = [o for o in param.opts if o.startswith("--")]
    return str(longs[0] if longs else param.opts[0]).lstrip("-")
