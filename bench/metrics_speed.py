"""Metrics speed: `analyze_snapshot` on a >= 10,000-line Python snapshot, on one core.

Prints lines per second (target: the whole snapshot in <= 3 s), the ratio against running
the same underlying tools one file at a time (radon raw, cc and mi, ruff, ast-grep per file),
and the ratio against scb-check's own run on the snapshot (SCBench's tool, run directly from
its pinned environment, as `scb-check check DIR --report --include-all`): benchwright's own
analysis (target: <= 1.0x) and the whole of a checkpoint's metrics (scb-check sandboxed, our
own analysis beside it; on one core the two add up).

Usage: python bench/metrics_speed.py [--snapshot DIR] [--no-per-file]
SCBench v1.0's largest reference checkpoint: `--snapshot
<scb-problems>/database_migration/solutions/checkpoint_5 --no-per-file` (radon's command line
is quadratic on its 3.12 f-strings under an older Python: the per-file reference takes minutes).
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
from perf_row import print_row

from benchwright.metrics.astgrep import rules_dir
from benchwright.metrics.scbcheck import scb_check_env
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


def _scb_check(root: Path) -> float:
    """scb-check's own run on `root`, from an empty folder (no configuration found)."""
    binary = scb_check_env().path / "bin" / "scb-check"
    with tempfile.TemporaryDirectory() as empty:
        start = time.perf_counter()
        subprocess.run([str(binary), "check", str(root), "--report", "--include-all"],
                       capture_output=True, check=False, cwd=empty)
        return time.perf_counter() - start


def _timed(root: Path, scbench: bool) -> float:
    start = time.perf_counter()
    analyze_snapshot(root, scbench=scbench)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path)
    parser.add_argument("--no-per-file", action="store_true",
                        help="skip the one-file-at-a-time reference")
    args = parser.parse_args()
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, children too
    with tempfile.TemporaryDirectory() as tmp:
        root = args.snapshot or _default_snapshot(Path(tmp))
        files = sorted(root.rglob("*.py"))
        lines = sum(len(p.read_text(errors="replace").splitlines()) for p in files)
        analyze_snapshot(root)  # warm caches (tool versions, rule table, scb-check's env)
        start = time.perf_counter()
        metrics = analyze_snapshot(root, scbench=False)
        ours = time.perf_counter() - start
        reference = 0.0 if args.no_per_file else _per_file(files)
        scb = min(_scb_check(root) for _ in range(3))
        own = min([ours, *(_timed(root, False) for _ in range(2))])
        whole = min(_timed(root, True) for _ in range(3))
    print(f"snapshot: {len(files)} files, {lines} lines ({metrics.lines.sloc} SLOC), one core")
    print(f"benchwright metrics: {ours:.2f} s = {lines / ours:,.0f} lines/s (target: <= 3 s)")
    if reference:
        print(f"same tools one file at a time: {reference:.2f} s")
        print(f"speed-up {reference / ours:.1f}x")
    print(f"scb-check's own run: {scb:.2f} s; benchwright's own analysis: {own:.2f} s = "
          f"{own / scb:.2f}x scb-check (target: <= 1.0x); a checkpoint's metrics with "
          f"scb-check sandboxed: {whole:.2f} s = {whole / scb:.2f}x (best of 3 each)")
    print_row("metrics_speed.py", f"`analyze_snapshot` on {lines:,} lines, one core",
              "scb-check's own run on the same snapshot", f"{own / scb:.2f}x ({own:.2f} s "
              f"against {scb:.2f} s; {lines / ours:,.0f} lines/s)", "<= 1.0x; <= 3 s")


if __name__ == "__main__":
    main()
