"""The timestamp formats of run files (manifests, journals, results) and run folders."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """Now, in UTC, ISO 8601 to the second: `2026-11-23T09:14:02+00:00`."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def minute_stamp(now: datetime | None = None) -> str:
    """Now (or `now`), in UTC, to the minute, as SCBench stamps run folders: `20261123T0914`."""
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M")


def folder_stamp() -> str:
    """Now, in UTC, as default output folders are named: `20261123T091402Z`."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
