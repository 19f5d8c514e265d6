"""The coding track's journal: one `CheckpointRecord` per finished checkpoint, and the files that
say an attempt stopped (an infrastructure error, or an error that broke it off).

The generic journal (append with fsync, torn-line tolerant reads, atomic rewrite) is the
kernel's `benchwright.runs.journal`; its functions are re-exported here for the coding loop.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from benchwright.coding.attempts.models import (
    AttemptErrorRecord,
    CheckpointRecord,
    InfraErrorRecord,
)
from benchwright.coding.attempts.record_rules import CheckpointRules
from benchwright.files.untrusted import read_untrusted_bytes
from benchwright.runs.journal import JOURNAL_HINT, append_record, read_jsonl, rewrite

__all__ = ["append_record", "read_attempt_error", "read_infra_error", "read_jsonl",
           "read_records", "rewrite"]


def read_records(path: Path) -> list[CheckpointRecord]:
    """The checkpoint journal's complete records, in order."""
    return read_jsonl(path, CheckpointRecord, CheckpointRules.of(path))


def read_infra_error(path: Path) -> InfraErrorRecord | None:
    """The attempt's infrastructure error, if it has one (an unreadable file counts as none)."""
    if not path.exists():
        return None
    data = read_untrusted_bytes(path, what="the infrastructure-error record", hint=JOURNAL_HINT)
    try:
        return InfraErrorRecord.model_validate_json(data)
    except ValidationError:
        return None


def read_attempt_error(path: Path) -> str | None:
    """Why the attempt broke off, if it did (an unreadable file still says it did)."""
    if not path.is_file():
        return None
    try:
        return AttemptErrorRecord.model_validate_json(path.read_bytes()).error
    except ValidationError:
        return f"the attempt broke off (its {path.name} is unreadable)"

