"""How `benchwright cache` shows the caches and what a prune did."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rich.table import Table

from benchwright.sandbox.caches import KINDS, NOTES_RUNS, CacheEntry, PruneResult, kind_root


def human_bytes(count: int) -> str:
    """1536 -> `1.5 KiB`."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _ago(when: datetime) -> str:
    seconds = max(0.0, (datetime.now(UTC) - when).total_seconds())
    for unit, length in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= length:
            return f"{seconds / length:.0f}{unit} ago"
    return "just now"


def caches_table(found: list[CacheEntry], base: Path, kinds: list[str] | None) -> Table:
    """One row per cache: its entries, their size, how many are in use, the last use, how many
    runs used them, where (what each holds: `benchwright cache --help`, docs/cli.md; each
    entry's runs: `--json`)."""
    table = Table(title=f"caches under {base}", title_justify="left", show_edge=False)
    for header in ("cache", "entries", "size", "in use", "last used", "runs"):
        table.add_column(header, no_wrap=True)  # names and counts whole on a narrow terminal
    table.add_column("where", overflow="fold")
    for kind in kinds or list(KINDS):
        own = [e for e in found if e.kind == kind]
        newest = max((e.last_used for e in own), default=None)
        root = kind_root(kind, base)
        where = str(root) if KINDS[kind][1] is not None else f"{root}/{KINDS[kind][2]}*"
        table.add_row(kind, str(len(own)), human_bytes(sum(e.bytes for e in own)),
                      str(sum(e.in_use for e in own)), _ago(newest) if newest else "-",
                      str(len({r for e in own for r in e.runs})) if kind in NOTES_RUNS else "-",
                      where)
    return table


def prune_lines(result: PruneResult, dry_run: bool) -> str:
    """What went (or would go), what was kept because in use, and the space freed."""
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {e.kind}/{e.name} ({human_bytes(e.bytes)}, last used "
             f"{_ago(e.last_used)})" for e in result.removed]
    lines += [f"kept {e.kind}/{e.name}: in use by a running process" for e in result.kept_in_use]
    lines.append(f"{verb} {len(result.removed)} entries, {human_bytes(result.freed_bytes)}"
                 f"{'' if dry_run else ' freed'}; {len(result.kept_in_use)} kept in use")
    return "\n".join(lines)
