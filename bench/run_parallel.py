"""Speed-up of `run coding --workers 2` over `--workers 1` on four attempts (target >= 1.6).

Usage: python bench/run_parallel.py [--problems-dir DIR --problem A --problem B ...] [--trials N]
Without arguments: the two bundled problems, two trials each (four attempts), oracle agent.
Environments are built by a warm-up run first, so both timings measure the same work.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perf_row import print_row


def _timed_run(args: list[str], out: Path, workers: int) -> float:
    argv = [sys.executable, "-m", "benchwright", "run", "coding", *args,
            "--workers", str(workers), "--out", str(out), "--json"]
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems-dir", type=Path)
    parser.add_argument("--problem", action="append", default=[])
    parser.add_argument("--trials", type=int)
    args = parser.parse_args()
    run_args: list[str] = []
    if args.problems_dir:
        run_args += ["--problems-dir", str(args.problems_dir)]
    for name in args.problem:
        run_args += ["--problem", name]
    run_args += ["--trials", str(args.trials or (1 if args.problem else 2))]
    with tempfile.TemporaryDirectory() as tmp:
        _timed_run(run_args, Path(tmp) / "warm", 2)
        one = _timed_run(run_args, Path(tmp) / "w1", 1)
        two = _timed_run(run_args, Path(tmp) / "w2", 2)
    print(f"run coding {' '.join(run_args)}")
    print(f"--workers 1: {one:.1f} s")
    print(f"--workers 2: {two:.1f} s")
    print(f"speed-up {one / two:.2f} (target >= 1.6 on 2 cores)")
    print_row("run_parallel.py", f"`run coding --workers 2` ({' '.join(run_args)})",
              "`--workers 1`", f"{one / two:.2f}x ({two:.1f} s against {one:.1f} s)",
              ">= 1.6x")


if __name__ == "__main__":
    main()
