"""The one place where an error, Ctrl-C or SIGTERM becomes a one-line message and an exit code,
and where the command line is prepared: old option spellings rewritten (`old_spellings.py`),
option defaults read from benchwright.toml (`defaults.py`).

SIGTERM takes Ctrl-C's path: it is raised as KeyboardInterrupt in the main thread, so a run stops
its workers and sandboxes, removes its temporary folders and says how to resume, exactly as after
Ctrl-C; only the exit code differs (143 instead of 130, as shells expect).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn

import typer
from typer.core import TyperOption

from benchwright.cli.option_checks import user_path
from benchwright.cli.quick_coercion import quick
from benchwright.errors import BenchwrightError, disk_error

try:  # recent typer ships its own copy of click; older ones use click itself
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    from click import exceptions as click_errors  # type: ignore[no-redef]

INTERRUPTED_EXIT = 130
SIGTERM_EXIT = 128 + signal.SIGTERM
_terminated = False


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    global _terminated
    _terminated = True
    raise KeyboardInterrupt


def command(app: typer.Typer) -> Any:
    """The app as click runs it: a flag (`--help` too) shows no `<bool>` type in `--help`
    (a lazily loaded subcommand gets the same when it is loaded: `prepared`)."""
    return prepared(typer.main.get_command(app))


def prepared(root: Any) -> Any:
    """`root` and the subcommands it has loaded, with flags shown without a `<bool>` type,
    every path parameter checked by `option_checks.user_path` before its own parser runs, and
    click's plain `--help` (typer's rich one imports ~0.2 s of modules: rich's tables, markdown,
    syntax highlighting; bench/cli_startup.py)."""
    for each in _commands(root):
        each.rich_markup_mode = None
        for option in each.params:
            _no_bool_type(option)
            _check_paths(option)
            quick(option)
        each.get_help_option = _help_option(each.get_help_option)
    return root


def takes_paths(param: Any) -> bool:
    """Whether a parameter's values are paths: typed `Path` (`Path | None`, `list[Path]`), or
    a name or a path (a metavar such as `NAME|FILE`, `VERSION|PATH`: a name passes the check)."""
    descriptor = getattr(param, "type_descriptor", None)
    kinds = set(str(getattr(param, "metavar", None) or "").split("|"))
    return (descriptor is not None and "pathlib.Path" in repr(descriptor.annotation)) or bool(
        kinds & {"FILE", "PATH"})


def _check_paths(param: Any) -> None:
    """Every value of a path parameter, from the command line, an environment variable or
    benchwright.toml, passes `user_path` before the parameter's own conversion sees it."""
    if not takes_paths(param) or getattr(param, "paths_checked", False):
        return
    convert = param.process_value

    def process_value(ctx: Any, value: Any) -> Any:
        given = ctx.get_parameter_source(param.name)
        if value is not None and given is not None and given.name != "DEFAULT":
            for each in value if isinstance(value, (list, tuple)) else [value]:
                user_path(each)
        return convert(ctx, value)

    param.process_value = process_value
    param.paths_checked = True


def _commands(command: Any) -> list[Any]:
    commands = getattr(command, "commands", {})
    loaded = getattr(commands, "_loaded", commands)  # a lazy group: only what it has built
    return [command, *(c for sub in loaded.values() for c in _commands(sub))]


def _no_bool_type(option: Any) -> Any:
    if isinstance(option, TyperOption) and (option.is_flag or option.count):
        option.metavar = ""
    return option


def _help_option(make: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """click makes `--help` when it is first asked for: clear its type then (and check its
    value without pydantic, `quick_coercion.py`)."""

    def made(ctx: Any) -> Any:
        option = _no_bool_type(make(ctx))
        if option is not None:
            quick(option)
        return option

    return made


def run_app(app: typer.Typer, prefix: tuple[str, ...] = ()) -> None:
    """Run a Typer app; a BenchwrightError or a bad option becomes one line on stderr and its
    exit code (click's own handling draws a multi-line box for a bad option). `prefix`: the
    app's command path under `benchwright` (for a group run on its own)."""
    from benchwright.cli.defaults import default_map
    from benchwright.cli.old_spellings import upgrade

    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        root = command(app)
        args = upgrade(root, sys.argv[1:], prefix)
        code = root.main(args=args, standalone_mode=False,
                         default_map=default_map(root, args=args) if not prefix else None)
    except (BenchwrightError, OSError) as exc:
        _fail_known(exc)
    except click_errors.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError" and exc.ctx is not None:
            typer.echo(exc.ctx.get_help())  # a bare group: its help, as click would print it
            sys.exit(exc.exit_code)
        _fail(_usage_line(exc), exc.exit_code)
    except click_errors.ClickException as exc:
        _fail(" ".join(exc.format_message().split()), exc.exit_code)
    except typer.Abort:
        _interrupted()
    except SystemExit as exc:  # Typer may turn a bare KeyboardInterrupt into a silent exit 130
        if exc.code == INTERRUPTED_EXIT:
            _interrupted()
        raise
    if code == INTERRUPTED_EXIT:
        _interrupted()
    sys.exit(code if isinstance(code, int) else 0)


def _fail_known(exc: BenchwrightError | OSError) -> NoReturn:
    """Our error's line and code; a full or read-only disk under any command is one line too
    (any other OSError is a bug: its traceback stays)."""
    error = exc if isinstance(exc, BenchwrightError) else disk_error(
        exc, then="run the command again")
    if error is None:
        raise exc
    _fail(error.one_line(), _interrupt_code(error.exit_code))


def _interrupt_code(code: int) -> int:
    """130 (Ctrl-C) becomes 143 when SIGTERM was the cause."""
    return SIGTERM_EXIT if _terminated and code == INTERRUPTED_EXIT else code


def _interrupted() -> NoReturn:
    _fail("stopped by SIGTERM" if _terminated else "interrupted", _interrupt_code(INTERRUPTED_EXIT))


def _usage_line(exc: click_errors.UsageError) -> str:
    message = " ".join(exc.format_message().split())
    return f"{message} (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else message


def _printable(line: str) -> str:
    """Control characters (a newline in a file name) escaped, so the message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)


def _fail(line: str, code: int) -> NoReturn:
    sys.stderr.write(f"{_error_prefix()} {_printable(line)}\n")
    sys.stderr.flush()
    sys.exit(code)


def _error_prefix() -> str:
    """`error:`, bold red on a terminal as rich would draw it (rich itself is not imported for
    one line: importing it costs more than the rest of a failed command's start-up)."""
    forced = bool(os.environ.get("FORCE_COLOR"))
    if not forced and (not sys.stderr.isatty() or os.environ.get("TERM") == "dumb"):
        return "error:"
    return "\x1b[1merror:\x1b[0m" if "NO_COLOR" in os.environ else "\x1b[1;31merror:\x1b[0m"
