"""Metrics speed: `analyze_snapshot` on a >= 10,000-line Python snapshot, on one core.

Prints lines per second (target: the whole snapshot in <= 3 s) and the ratio against running
the same underlying tools one file at a time (radon raw, cc and mi, ruff, ast-grep per file).

Usage: python bench/metrics_speed.py [--snapshot DIR] [--reference-files N]
Without --snapshot: the `rich` package's modules under 1,500 lines, copied to a scratch folder
(radon itself is quadratic on rich's largest data module, which would only slow the reference).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import rich

from benchwright.metrics.astgrep import rules_dir
from benchwright.metrics.static import analyze_snapshot
from benchwright.metrics.tools import executable


def _default_snapshot(dest: Path) -> Path:
    for path in Path(rich.__file__).parent.glob("*.py"):
        if len(path.read_text().splitlines()) < 1500:
            shutil.copy(path, dest / path.name)
    return dest


def _per_file(files: list[Path]) -> float:
    radon = str(Path(sys.executable).with_name("radon"))
    start = time.perf_counter()
    for path in files:
        for argv in ([radon, "raw", "-j", str(path)], [radon, "cc", "-j", str(path)],
                     [radon, "mi", "-j", str(path)],
                     [executable("ruff"), "check", "--isolated", "--exit-zero", "--no-cache",
                      "--output-format", "json", str(path)],
                     [executable("ast-grep"), "scan", "-c", str(rules_dir() / "sgconfig.yml"),
                      "--json=stream", str(path)]):
            subprocess.run(argv, capture_output=True, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path)
    args = parser.parse_args()
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, children too
    with tempfile.TemporaryDirectory() as tmp:
        root = args.snapshot or _default_snapshot(Path(tmp))
        files = sorted(root.rglob("*.py"))
        lines = sum(len(p.read_text(errors="replace").splitlines()) for p in files)
        analyze_snapshot(root)  # warm caches (tool versions, rule table)
        start = time.perf_counter()
        metrics = analyze_snapshot(root)
        ours = time.perf_counter() - start
        reference = _per_file(files)
    print(f"snapshot: {len(files)} files, {lines} lines ({metrics.lines.sloc} SLOC), one core")
    print(f"benchwright metrics: {ours:.2f} s = {lines / ours:,.0f} lines/s (target: <= 3 s)")
    print(f"same tools one file at a time: {reference:.2f} s")
    print(f"speed-up {reference / ours:.1f}x")


if __name__ == "__main__":
    main()
