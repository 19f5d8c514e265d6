"""Old option spellings, kept for one release as hidden aliases: before the command line is
parsed, each is rewritten to today's spelling and one deprecation line goes to stderr. None of
them appears in any `--help` (docs/cli.md, "Old spellings"; tests/cli/test_cli_vocabulary.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.core import TyperGroup

from benchwright.errors import UserInputError

Args = list[str]
Rewrite = Callable[[Args, int, str | None], Args]
"""(the arguments, the old option's index, its `=value` if written so) -> new arguments."""


@dataclass(frozen=True)
class OldSpelling:
    """One old spelling of one command's option."""

    command: tuple[str, ...]
    """The command, as typed after `benchwright` ("run", "web")."""
    old: str
    """The old option."""
    new: str
    """What to type now (said in the deprecation line)."""
    rewrite: Rewrite
    """How the arguments are rewritten."""


def _value(args: Args, at: int, inline: str | None) -> tuple[str, int]:
    """The old option's value and how many arguments it took (with the option)."""
    if inline is not None:
        return inline, 1
    if at + 1 >= len(args):
        raise UserInputError(f"{args[at]} needs a value")
    return args[at + 1], 2


def renamed(new: str) -> Rewrite:
    """The same option under a new name."""
    def rewrite(args: Args, at: int, inline: str | None) -> Args:
        return [*args[:at], new if inline is None else f"{new}={inline}", *args[at + 1:]]
    return rewrite


def positional(args: Args, at: int, inline: str | None) -> Args:
    """`--option VALUE` that is now the command's argument: `VALUE`."""
    value, taken = _value(args, at, inline)
    return [*args[:at], value, *args[at + taken:]]


def format_to_json(args: Args, at: int, inline: str | None) -> Args:
    """`report --format md|json`: `--json`, or nothing for md."""
    value, taken = _value(args, at, inline)
    if value not in ("md", "json"):
        raise UserInputError(f"--format {value!r}: give md or json (or, today, --json)")
    return [*args[:at], *(["--json"] if value == "json" else []), *args[at + taken:]]


def problem_dir(args: Args, at: int, inline: str | None) -> Args:
    """`eval checkpoint --problem-dir DIR/NAME`: `--problems-dir DIR --problem NAME`."""
    value, taken = _value(args, at, inline)
    folder = Path(value).resolve()
    return [*args[:at], "--problems-dir", str(folder.parent), "--problem", folder.name,
            *args[at + taken:]]


def resume_flag(args: Args, at: int, inline: str | None) -> Args:
    """`run web --out RUN_DIR --resume` (a flag then): `--resume RUN_DIR`."""
    rest = [*args[:at], *args[at + 1:]]
    for index, arg in enumerate(rest):
        if arg == "--out" and index + 1 < len(rest):
            return [*rest[:index], "--resume", rest[index + 1], *rest[index + 2:]]
        if arg.startswith("--out="):
            return [*rest[:index], "--resume", arg.partition("=")[2], *rest[index + 1:]]
    raise UserInputError("--resume needs the run directory", hint="pass --resume RUN_DIR")


OLD_SPELLINGS: tuple[OldSpelling, ...] = (
    OldSpelling(("run", "web"), "--max-steps", "--step-limit N", renamed("--step-limit")),
    OldSpelling(("run", "web"), "--resume", "--resume RUN_DIR (instead of --out RUN_DIR "
                "--resume)", resume_flag),
    OldSpelling(("web", "eval"), "--output-dir", "benchwright web eval LOGS_DIR", positional),
    OldSpelling(("eval", "checkpoint"), "--problem-dir", "--problems-dir DIR --problem NAME",
                problem_dir),
    OldSpelling(("report",), "--format", "--json", format_to_json),
)


def upgrade(root: Any, args: Sequence[str], prefix: tuple[str, ...] = ()) -> Args:
    """`args` with every old spelling rewritten to today's, one warning line each on stderr.
    `prefix`: the command path of `root` under `benchwright` (for a group run on its own)."""
    out = list(args)
    path, start = command_path(root, out)
    path = (*prefix, *path)
    for spelling in (s for s in OLD_SPELLINGS if s.command == path):
        found = _find(out, start, spelling)
        if found is None:
            continue
        at, inline = found
        out = spelling.rewrite(out, at, inline)
        sys.stderr.write(f"warning: {spelling.old} is deprecated and will be removed in the "
                         f"next release; use {spelling.new}\n")
    return out


def _find(args: Args, start: int, spelling: OldSpelling) -> tuple[int, str | None] | None:
    for index in range(start, len(args)):
        arg = args[index]
        if arg == "--":
            return None
        if arg == spelling.old and _is_old_form(spelling, args, index):
            return index, None
        if arg.startswith(spelling.old + "="):
            return index, arg.partition("=")[2]
    return None


def _is_old_form(spelling: OldSpelling, args: Args, index: int) -> bool:
    """`run web --resume` is old only as a flag (today it takes the folder)."""
    if spelling.rewrite is not resume_flag:
        return True
    return index + 1 >= len(args) or args[index + 1].startswith("-")


def command_path(root: Any, args: Args) -> tuple[tuple[str, ...], int]:
    """The subcommands `args` name from `root` (a path given to `eval` means its `run`), and
    where the last one's own arguments start."""
    path: list[str] = []
    command, index = root, 0
    while isinstance(command, TyperGroup) and index < len(args):
        arg = args[index]
        index += 1
        if arg.startswith("-"):
            continue  # a group's options take no value
        sub = command.commands.get(arg)
        default = getattr(command, "default_command", None)  # `eval RUN_DIR`: `eval run`
        if sub is None and default is not None:
            return (*path, default), index - 1
        if sub is None:
            break
        path.append(arg)
        command = sub
    return tuple(path), index
