"""What `--executor ray` costs against the local executor, at the same parallelism.

Starts a Ray lab on this machine (a head and two worker nodes of one CPU each, separate
`ray start` processes in a private network namespace: benchwright.testing.ray_lab; needs root),
then runs `benchwright run coding` on the bundled problems with the oracle agent twice per round:
`--workers 2` on the local executor, and `--workers 2 --executor ray`. Prints the wall times, the
ratio (target <= 1.15) and the overhead per job (one problem x trial) in milliseconds: what the
driver pays to pack problems, ship snapshots both ways, write what comes back and connect.

Usage: python bench/ray_overhead.py [--trials N] [--rounds N] [--metrics]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perf_row import print_row

from benchwright.coding.problems.examples import examples_dir
from benchwright.testing.ray_lab import RayLab

WORKERS = 2


def _problems() -> list[str]:
    return sorted(p.name for p in examples_dir().iterdir() if (p / "config.yaml").is_file())


def _run(lab: RayLab, out: Path, trials: int, metrics: bool, ray: bool) -> float:
    argv = [sys.executable, "-m", "benchwright", "run", "coding", "--trials", str(trials),
            "--workers", str(WORKERS), "--json", "--out", str(out),
            *([] if metrics else ["--no-metrics"]),
            *(["--executor", "ray", "--ray-address", lab.address] if ray else [])]
    start = time.perf_counter()
    done = subprocess.run(lab.command(argv), capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the run failed: {done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--metrics", action="store_true", help="measure code quality too")
    options = parser.parse_args()
    jobs = len(_problems()) * options.trials
    local: list[float] = []
    remote: list[float] = []
    with tempfile.TemporaryDirectory() as scratch, RayLab(workers=2, cpus=1) as lab:
        _run(lab, Path(scratch) / "warm", 1, False, ray=True)  # environments built, nodes warm
        for index in range(options.rounds):
            local.append(_run(lab, Path(scratch) / f"local{index}", options.trials,
                              options.metrics, ray=False))
            remote.append(_run(lab, Path(scratch) / f"ray{index}", options.trials,
                               options.metrics, ray=True))
            shutil.rmtree(Path(scratch) / f"ray{index}")
    base, ours = statistics.median(local), statistics.median(remote)
    print(f"{jobs} jobs ({len(_problems())} problems x {options.trials} trials), "
          f"{WORKERS} at a time, median of {options.rounds} round(s)")
    print(f"local executor: {base:7.2f} s")
    print(f"ray executor:   {ours:7.2f} s")
    print(f"ratio ray/local: {ours / base:.3f} (target <= 1.15)")
    print(f"overhead per job: {1000 * (ours - base) / jobs:.0f} ms")
    print_row("ray_overhead.py", f"`--executor ray` (a head and two 1-CPU nodes), {jobs} jobs, "
              f"median of {options.rounds}", "the local executor at the same parallelism",
              f"{ours / base:.3f}x ({ours:.1f} s against {base:.1f} s; "
              f"{1000 * (ours - base) / jobs:.0f} ms a job)", "<= 1.15x")


if __name__ == "__main__":
    main()
