"""Carry-forward: a flag of checkpoint N-1 whose lines the diff shows unchanged, and that the
judge did not raise again at N (same item and file, start within 2 lines), is kept at N with its
lines shifted and `carried_over` naming the checkpoint that first raised it (SCBench's rule).

The diff is read line by line, not hunk by hunk: a flag on an unchanged context line inside a
hunk is carried with its exact new position (SCBench treats a whole hunk, context lines
included, as changed, and shifts by hunk totals). A span is unchanged when every one of its old
lines survives and nothing was inserted between them. A flag on a file that is gone from the
judged files is not carried (SCBench carries it when the file has no diff text).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.files.nofollow import read_regular
from benchwright.judge.batching import SourceFile
from benchwright.judge.flags import RubricFlag

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class LineMap:
    """Old line numbers of one file -> new ones, from a unified diff (none: unchanged file)."""

    inside: dict[int, int | None] = field(default_factory=dict)
    """Old lines inside hunks: their new number, None when removed."""
    shifts: list[tuple[int, int]] = field(default_factory=list)
    """(last old line of a hunk, total shift after it), in order."""

    def new_line(self, old: int) -> int | None:
        """Where an old line is now, None if it was removed or replaced."""
        if old in self.inside:
            return self.inside[old]
        shift = 0
        for last, total in self.shifts:
            if old > last:
                shift = total
        return old + shift

    def moved_span(self, start: int, end: int) -> tuple[int, int] | None:
        """The span's new lines when it is unchanged, else None."""
        lines = [self.new_line(n) for n in range(start, end + 1)]
        first, last = lines[0], lines[-1]
        if first is None or last is None or any(n is None for n in lines):
            return None
        return (first, last) if last - first == end - start else None


def line_map(patch: str | None) -> LineMap:
    """The map of a unified diff of one file (`None` or empty: nothing changed)."""
    mapping = LineMap()
    old = new = 0
    total = 0
    for line in (patch or "").splitlines():
        hunk = _HUNK.match(line)
        if hunk:
            a, b, c, d = (int(g) if g is not None else 1 for g in hunk.groups())
            old, new = (a if b else a + 1), (c if d else c + 1)
            total += d - b
            mapping.shifts.append((a + b - 1 if b else a, total))
        elif old and line[:1] == " ":  # before the first hunk: the ---/+++ header
            mapping.inside[old] = new
            old, new = old + 1, new + 1
        elif old and line[:1] == "-":
            mapping.inside[old] = None
            old += 1
        elif old and line[:1] == "+":
            new += 1
    return mapping


def patch_between(before: str, after: str) -> str:
    """A unified diff of two texts (for a file whose patch diff.json left out)."""
    return "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                          "a", "b", lineterm=""))


@dataclass(frozen=True)
class Changes:
    """How a snapshot's files changed since the previous one, as the track recorded it."""

    modified: frozenset[str] = frozenset()
    """The files changed."""
    patches: Mapping[str, str] = field(default_factory=dict)
    """A unified diff per changed file, where one was kept (the others are diffed here)."""


def line_maps(files: list[SourceFile], before: Path,
              changes: Changes) -> dict[str, LineMap | None]:
    """For each file judged now: how its lines moved since the snapshot `before` (None:
    unchanged); a file new since then has no entry (nothing to carry onto it)."""
    maps: dict[str, LineMap | None] = {}
    for file in files:
        old = read_regular(before, file.path)
        if old is None:
            continue
        text = old.decode("utf-8", errors="replace")
        if file.path in changes.modified:
            patch = changes.patches.get(file.path)
            maps[file.path] = line_map(patch if patch is not None
                                       else patch_between(text, file.text))
        elif text == file.text:
            maps[file.path] = None
        else:  # the recorded changes disagree with the snapshots: trust the files
            maps[file.path] = line_map(patch_between(text, file.text))
    return maps


def carry_forward(previous: list[RubricFlag], current: list[RubricFlag],
                  maps: dict[str, LineMap | None], previous_checkpoint: str) -> list[RubricFlag]:
    """The flags of N-1 to keep at N. `maps` has an entry per file judged at N: its line map,
    or None when unchanged; a flag on a file without an entry is not carried."""
    carried = []
    for flag in previous:
        if flag.file_name not in maps:
            continue
        lines = maps[flag.file_name]
        span = (flag.start, flag.end) if lines is None else lines.moved_span(flag.start, flag.end)
        if span is None or any(flag.same_place(new, start=span[0]) for new in current):
            continue
        carried.append(flag.model_copy(update={
            "start": span[0], "end": span[1],
            "carried_over": flag.carried_over or previous_checkpoint}))
    return carried
