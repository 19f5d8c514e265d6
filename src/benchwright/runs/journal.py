"""Journals: append-only JSON-lines files that say which units of work are finished.

A record is appended (and fsynced) only after every file of its unit is written, so a unit is
finished exactly when its record is there. A kill -9 can leave at most a torn last line (no
newline after it, not whole JSON), which readers ignore; resume rewrites the journal atomically
to its records. Every other line is read as untrusted: a line that is not JSON, not a record of
this version's format (a newer format is named as such, never dropped and redone), a number
that is not finite, a record that breaks its track's bounds (`RecordRules.check`) or repeats an
earlier unit (`RecordRules.key`) is one error naming the file and the line, exit 2, so an edited
or duplicated line can never change a figure. The coding track journals checkpoints
(`benchwright.coding.attempts.journal`), the web track trials; the record type and its rules are
parameters, so this module knows neither.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from benchwright.errors import UserInputError, needing
from benchwright.files.atomic import write_text_atomic
from benchwright.files.untrusted import parse_untrusted_json, read_untrusted_bytes

MAX_JOURNAL_BYTES = 1024 * 2**20
MAX_LINE_BYTES = 64 * 2**20
"""Far above any record: how far back an append looks for the start of a torn last line."""
JOURNAL_HINT = "the run folder was changed by hand; restore it or start a new run"

RecordT = TypeVar("RecordT", bound=BaseModel)
RecordT_contra = TypeVar("RecordT_contra", bound=BaseModel, contravariant=True)


class RecordRules(Protocol[RecordT_contra]):
    """What a track knows of its records beyond their schema."""

    def key(self, record: RecordT_contra) -> Hashable:
        """The unit of work the record finishes (a second record of it is an error)."""
        ...

    def check(self, record: RecordT_contra, previous: RecordT_contra | None) -> str | None:
        """Why the record cannot be (a bound, a name that does not match its folder), or None."""
        ...


class JournalError(UserInputError):
    """A journal line that is not a valid record of this version (named by file and line)."""


def read_jsonl(path: Path, model: type[RecordT],
               rules: RecordRules[RecordT] | None = None) -> list[RecordT]:
    """A journal's records, in order; a torn last line is ignored, any other bad line is a
    `JournalError`."""
    if not path.exists() and not path.is_symlink():
        return []
    data = read_untrusted_bytes(path, what="the journal", max_bytes=MAX_JOURNAL_BYTES,
                                hint=JOURNAL_HINT)
    lines = data.split(b"\n")
    last = lines.pop()  # b"" when the file ends with a newline
    reader = _Reader(path, model, rules)
    for number, line in enumerate(lines, 1):
        if line.strip():
            reader.add(number, line)
    if last.strip() and _is_whole(last):
        reader.add(len(lines) + 1, last)
    return reader.records


def _is_whole(line: bytes) -> bool:
    """Whether a last line with no newline after it is whole JSON (else kill -9 tore it)."""
    try:
        parse_untrusted_json(line, None, what="the line")
    except UserInputError:
        return False
    return True


class _Reader(Generic[RecordT]):
    """The records read so far, and the units they finish."""

    def __init__(self, path: Path, model: type[RecordT],
                 rules: RecordRules[RecordT] | None) -> None:
        self.path, self.model, self.rules = path, model, rules
        self.records: list[RecordT] = []
        self.lines: dict[Hashable, int] = {}

    def fail(self, number: int, why: str, hint: str = JOURNAL_HINT) -> JournalError:
        return JournalError(f"line {number}: {why}", path=self.path, hint=hint)

    def add(self, number: int, line: bytes) -> None:
        record = self.parse(number, line)
        if self.rules is not None:
            self.follow_rules(number, record, self.rules)
        self.records.append(record)

    def follow_rules(self, number: int, record: RecordT, rules: RecordRules[RecordT]) -> None:
        key = rules.key(record)
        if key is not None and key in self.lines:
            raise self.fail(number, f"repeats the record of line {self.lines[key]} ({key})")
        why = rules.check(record, self.records[-1] if self.records else None)
        if why is not None:
            raise self.fail(number, why)
        if key is not None:
            self.lines[key] = number

    def parse(self, number: int, line: bytes) -> RecordT:
        try:
            value = parse_untrusted_json(line, None, what="it")
        except UserInputError as exc:
            raise self.fail(number, exc.message) from None
        why = _format_mismatch(value, self.model)
        if why is not None and "newer" in why:
            raise self.fail(number, why, "upgrade benchwright to read this run")
        why = why or _not_finite(value)
        if why is not None:
            raise self.fail(number, why)
        try:  # strict: `true` is not a trial number, "1" not a count
            return self.model.model_validate_json(line, strict=True)
        except ValidationError as exc:
            raise self.fail(number, first_error(exc)) from None


def first_error(exc: ValidationError) -> str:
    """A validation error's first complaint, `field: reason`."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def _format_mismatch(value: Any, model: type[BaseModel]) -> str | None:
    """Why a record is not of the model's format (a newer version named as such), or None."""
    field = model.model_fields.get("format")
    expected = field.default if field is not None else None
    if not isinstance(value, dict):
        return "not a JSON object"
    found = value.get("format", expected)
    if expected is None or found == expected:
        return None
    family, _, version = str(expected).rpartition("/")
    theirs, _, their_version = str(found).rpartition("/")
    if theirs == family and their_version.isdigit() and version.isdigit() \
            and int(their_version) > int(version):
        return (f"format {found!r} was written by a newer benchwright (this one reads "
                f"{expected!r})")
    return f"format {str(found)[:80]!r} is not {expected!r}"


def _not_finite(value: Any) -> str | None:
    """The first number in a JSON value that is NaN or infinite, named by its path."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return f"{where.lstrip('.') or 'the value'}: {node} is not a finite number"
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{where}.{i}") for i, v in enumerate(node))
    return None


def append_record(path: Path, record: BaseModel) -> None:
    """Append one record durably, or not at all: a write that fails (a full disk) cuts the
    journal back to what it held, so no half record is left to be counted or mended; a full
    disk's error says how many bytes the record needed (`DiskFull`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = record.model_dump_json().encode() + b"\n"
    # unbuffered: a failed write leaves nothing pending that closing would try again
    with path.open("a+b", buffering=0) as handle:
        _end_torn_line(handle)
        size = handle.seek(0, os.SEEK_END)
        try:
            left = memoryview(line)
            while left:  # a disk filling up mid-write writes part, then fails
                left = left[handle.write(left) or 0:]
            os.fsync(handle.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):  # a truncate frees space: it works on a full disk
                os.ftruncate(handle.fileno(), size)
            full = needing(exc, len(line), path)
            if full is exc:
                raise
            raise full from exc


def _end_torn_line(handle: Any) -> None:
    """Before an append: end a whole last line that lacks its newline, cut a torn one off."""
    size = handle.seek(0, os.SEEK_END)
    if size == 0:
        return
    handle.seek(max(0, size - MAX_LINE_BYTES))
    tail = handle.read()
    if tail.endswith(b"\n"):
        return
    start = tail.rfind(b"\n") + 1
    if _is_whole(tail[start:]):
        handle.write(b"\n")
    else:
        handle.truncate(size - len(tail) + start)
        handle.seek(0, os.SEEK_END)


def rewrite(path: Path, records: Sequence[BaseModel]) -> None:
    """Replace the journal with exactly these records, atomically."""
    write_text_atomic(path, "".join(r.model_dump_json() + "\n" for r in records))
