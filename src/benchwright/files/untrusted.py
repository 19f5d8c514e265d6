"""Reading files benchwright did not write (problem folders, run folders, agent logs, configs).

Every reader here turns what can go wrong with such a file into one error naming the file: it is
missing, a folder, a named pipe or device (opened without blocking, so a FIFO cannot hang us),
larger than a bound, not UTF-8, not valid JSON or YAML, nested too deeply, or (YAML) an alias
bomb that expands to millions of values.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from benchwright.errors import BenchwrightError, UserInputError

MAX_BYTES = 64 * 2**20
"""Default size bound: far above any config, spec, manifest or agent response."""
MAX_DEPTH = 100
"""Nesting bound for JSON and YAML values (deeper ones break recursive consumers)."""
MAX_NODES = 2_000_000
"""Bound on the values a YAML document expands to once its aliases are followed."""

ErrorType = type[BenchwrightError]


def read_untrusted_bytes(path: Path, *, what: str, max_bytes: int = MAX_BYTES,
                         error: ErrorType = UserInputError, hint: str | None = None) -> bytes:
    """The bytes of a regular file, or `error` saying why it cannot be read."""
    try:  # O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise error(f"cannot read {what}: no such file", path=path, hint=hint) from None
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror}", path=path, hint=hint) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a pipe, socket or device"
        raise error(f"{what} is {kind}, not a regular file", path=path, hint=hint)
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise error(f"cannot read {what}: {exc.strerror}", path=path, hint=hint) from None
    if len(data) > max_bytes:
        raise error(f"{what} is larger than {max_bytes // 2**20 or 1} MB", path=path,
                    hint=hint or "is this the right file?")
    return data


def decode_untrusted(data: bytes, path: Path, *, what: str,
                     error: ErrorType = UserInputError) -> str:
    """UTF-8 text, or `error` naming the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start})", path=path, hint="save it as UTF-8") from None


def read_untrusted_text(path: Path, *, what: str, max_bytes: int = MAX_BYTES,
                        error: ErrorType = UserInputError, hint: str | None = None) -> str:
    """A regular file's UTF-8 text."""
    data = read_untrusted_bytes(path, what=what, max_bytes=max_bytes, error=error, hint=hint)
    return decode_untrusted(data, path, what=what, error=error)


def read_untrusted_json(path: Path, *, what: str, max_bytes: int = MAX_BYTES,
                        error: ErrorType = UserInputError, hint: str | None = None) -> Any:
    """A regular file's JSON value, at most MAX_DEPTH deep."""
    text = read_untrusted_text(path, what=what, max_bytes=max_bytes, error=error, hint=hint)
    return parse_untrusted_json(text, path, what=what, error=error, hint=hint)


def read_json_object(path: Path, *, what: str, max_bytes: int = MAX_BYTES,
                     error: ErrorType = UserInputError, hint: str | None = None
                     ) -> dict[str, Any] | None:
    """A file of a run folder that holds one JSON object: None when there is no such file (a
    link counts as none: nothing in a run folder is followed), else its object or `error`."""
    if not path.is_file() or path.is_symlink():
        return None
    value = read_untrusted_json(path, what=what, max_bytes=max_bytes, error=error, hint=hint)
    if not isinstance(value, dict):
        raise error(f"{what} is not a JSON object", path=path, hint=hint)
    return value


def parse_untrusted_json(text: str | bytes, path: Path | None, *, what: str,
                         error: ErrorType = UserInputError, hint: str | None = None) -> Any:
    """JSON text's value, at most MAX_DEPTH deep, or `error`."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{what} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                    path=path, hint=hint) from None
    except (RecursionError, ValueError) as exc:
        reason = "is nested too deeply" if isinstance(exc, RecursionError) else "is not JSON"
        raise error(f"{what} {reason}", path=path, hint=hint) from None
    if _deeper_than(value, MAX_DEPTH):
        raise error(f"{what} is nested deeper than {MAX_DEPTH} levels", path=path, hint=hint)
    return value


def _deeper_than(root: Any, limit: int) -> bool:
    """Whether a JSON value nests deeper than `limit` (a tree: no sharing, no cycles)."""
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if not isinstance(node, dict | list):
            continue  # a scalar (a whole file of `null`, a number) has no children
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def read_untrusted_yaml(path: Path, *, what: str, max_bytes: int = MAX_BYTES,
                        error: ErrorType = UserInputError, hint: str | None = None) -> Any:
    """A regular file's YAML value (safe loader), bounded in depth and expanded size."""
    text = read_untrusted_text(path, what=what, max_bytes=max_bytes, error=error, hint=hint)
    return parse_untrusted_yaml(text, path, what=what, error=error, hint=hint)


def parse_untrusted_yaml(text: str, path: Path | None, *, what: str,
                         error: ErrorType = UserInputError, hint: str | None = None) -> Any:
    """YAML text's value (safe loader), bounded in depth and expanded size, or `error`."""
    import yaml

    # libyaml's parser (same safe constructor) when PyYAML has it: the pure-Python one is most of
    # `eval checkpoint`'s own start. libyaml refuses nesting past 1,000 levels itself.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        value = yaml.load(text, Loader=loader)  # a safe loader
    except yaml.YAMLError as exc:
        if "nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's own depth limit
            raise error(f"{what} is nested deeper than {MAX_DEPTH} levels", path=path,
                        hint=hint) from None
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise error(f"{what} is not valid YAML{where}", path=path,
                    hint=hint or "fix the syntax") from None
    except RecursionError:
        raise error(f"{what} is nested too deeply", path=path, hint=hint) from None
    depth, nodes = _measure(value)
    if depth > MAX_DEPTH:
        raise error(f"{what} is nested deeper than {MAX_DEPTH} levels", path=path, hint=hint)
    if nodes > MAX_NODES:
        raise error(f"{what} expands to more than {MAX_NODES:,} values (aliases?)", path=path,
                    hint=hint)
    return value


def _measure(root: Any) -> tuple[int, int]:
    """A YAML value's (depth, expanded value count), iteratively: a shared value (an alias) is
    counted at every use but walked once, and a value that contains itself counts as too deep.
    (A JSON value needs only its depth: its size is bounded by its bytes.)"""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes.get(id(c), 1) for c in children)
            depths[key] = 1 + max((depths.get(id(c), 0) for c in children), default=0)
            if sizes[key] > MAX_NODES or depths[key] > MAX_DEPTH:
                return depths[key], sizes[key]
            continue
        if key in on_path:
            return MAX_DEPTH + 1, 0
        if key in sizes or not children:
            continue
        on_path.add(key)
        stack.append((node, True))
        if len(on_path) > MAX_DEPTH:
            return len(on_path), 0
        stack.extend((c, False) for c in children if _children(c))
    return depths.get(id(root), 0), sizes.get(id(root), 1)


def _children(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    if isinstance(node, list | tuple | set | frozenset):
        return list(node)
    return []
