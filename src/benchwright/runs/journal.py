"""Journals: append-only JSON-lines files that say which units of work are finished.

A record is appended (and fsynced) only after every file of its unit is written, so a unit is
finished exactly when its record is there. A kill -9 can leave at most a torn last line, which
readers ignore; resume rewrites the journal atomically to its valid prefix. The coding track
journals checkpoints (`benchwright.coding.runs.journal`), the web track trials; the record type is
a parameter, so this module knows neither.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from benchwright.fileio import write_text_atomic
from benchwright.untrusted_files import read_untrusted_bytes

MAX_JOURNAL_BYTES = 1024 * 2**20
JOURNAL_HINT = "the run folder was changed by hand; restore it or start a new run"

RecordT = TypeVar("RecordT", bound=BaseModel)


def read_jsonl(path: Path, model: type[RecordT]) -> list[RecordT]:
    """A journal's complete records, in order; a torn or unreadable line ends it."""
    if not path.exists():
        return []
    records = []
    for line in read_untrusted_bytes(path, what="the journal", max_bytes=MAX_JOURNAL_BYTES,
                                     hint=JOURNAL_HINT).splitlines():
        try:  # bytes: a line torn inside a UTF-8 character fails here, not the whole read
            records.append(model.model_validate_json(line))
        except ValidationError:
            break
    return records


def append_record(path: Path, record: BaseModel) -> None:
    """Append one record durably."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(record.model_dump_json() + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def rewrite(path: Path, records: Sequence[BaseModel]) -> None:
    """Replace the journal with exactly these records, atomically."""
    write_text_atomic(path, "".join(r.model_dump_json() + "\n" for r in records))
