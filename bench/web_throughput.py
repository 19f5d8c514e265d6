"""Trials per minute on the local suite, one read-only trial at a time per site against several.

Runs `benchwright run web --suite local` (scripted agent, real Chromium and browser-use) on the
suite's read-only tasks (RETRIEVE and NAVIGATE) with `--concurrency-per-site 1` and then with each
higher value asked for, and prints trials per minute for each, taken from the trials' own start
and end times in the journal (the first start to the last end: Chromium launches included,
the suite's start and the scoring afterwards left out), the wall-clock time of the whole command,
the pass count, and the ratio against concurrency 1 (target >= 1.6x at 2 on a 2-core machine).

Usage: python bench/web_throughput.py [--trials N] [--concurrency 2 ...] [--task-ids IDS]
(about two minutes with the defaults; needs /usr/bin/chromium and `pip install 'benchwright[web]'`)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from perf_row import print_row

from benchwright.web.evaluation.tasks import TaskType
from benchwright.web.local_suite import load_local_dataset

TARGET_RATIO = 1.6


def read_only_ids() -> str:
    """The local suite's RETRIEVE and NAVIGATE tasks."""
    tasks = load_local_dataset().tasks.values()
    return ",".join(str(t.task_id) for t in tasks if t.task_type is not TaskType.MUTATE)


def run(out: Path, ids: str, trials: int,
        concurrency: int) -> tuple[float, float, int, int, float]:
    """(trials per minute, wall seconds, trials, passed, CPU seconds) of one run."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "benchwright", "run", "web", "--suite", "local", "--task-ids", ids,
         "--trials", str(trials), "--concurrency-per-site", str(concurrency), "--out", str(out),
         "--json"], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    summary = json.loads(done.stdout)
    records = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    first = min(datetime.fromisoformat(r["started_at"]) for r in records)
    last = max(datetime.fromisoformat(r["ended_at"]) for r in records)
    span = (last - first).total_seconds()
    return (60 * len(records) / span, wall, len(records), int(summary["n_passed"]),
            _children_cpu() - cpu_before)


def _children_cpu() -> float:
    """CPU seconds of finished child processes (the run, its Chromium and the evaluator)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[2])
    parser.add_argument("--task-ids", default=None, help="default: the read-only tasks")
    parser.add_argument("--keep", type=Path, default=None, help="keep the runs in this folder")
    args = parser.parse_args()
    ids = args.task_ids or read_only_ids()
    print(f"local suite, tasks {ids}, {args.trials} trials each")
    base = 0.0
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        for level in [1, *args.concurrency]:
            folder = (args.keep or Path(tmp)) / f"c{level}"
            rate, wall, n, passed, cpu = run(folder, ids, args.trials, level)
            base = base or rate
            print(f"  --concurrency-per-site {level}: {rate:5.1f} trials/min "
                  f"({n} trials, {passed} passed; command {wall:.0f} s, CPU {cpu:.0f} s, "
                  f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores) "
                  f"-> {rate / base:.2f}x concurrency 1")
            figures.append(f"{rate / base:.2f}x at {level} ({rate:.1f} trials/min)")
    print(f"target at 2: >= {TARGET_RATIO}x")
    print_row("web_throughput.py", f"trials a minute on the local suite's tasks {ids}, "
              f"{args.trials} trials each, several read-only trials a site",
              "one at a time (`--concurrency-per-site 1`)", "; ".join(figures),
              f">= {TARGET_RATIO}x at 2")


if __name__ == "__main__":
    main()
