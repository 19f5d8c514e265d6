"""The row a bench owns in docs/performance.md's table, printed at the end of its run: copy it
over the bench's row there (the page's figures are the last ones a bench printed, with the
machine and load they were measured under)."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime


def print_row(bench: str, compares: str, reference: str, figure: str, target: str) -> None:
    """`| bench | what it compares | against | figure (date, cores, load) | target | re-run |`."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    where = (f"{datetime.now(UTC):%Y-%m-%d}, {os.cpu_count()} cores, load {load:.1f}, "
             f"Python {platform.python_version()}")
    print(f"docs/performance.md row:\n| {bench} | {compares} | {reference} | {figure} ({where}) "
          f"| {target} | `python bench/{bench}` |")
