"""The grader's pytest start with and without anyio's plugin (`-p no:anyio`, see `wants_anyio`).

The tests' environment holds anyio (httpx needs it), whose pytest plugin every pytest there
auto-loads unless told not to; the grader tells it not to for problems whose tests never name
anyio. This lays out one checkpoint's workspace (the reference solution, no sandbox) and runs
the grader's own pytest arguments both ways, alternating: collection only (pytest's start) and
the whole checkpoint. CPU (user + system of pytest and what it waited for, from `os.wait4`),
not wall time: on a busy machine wall time measures the neighbours. Prints the medians and the
ratio without/with, measured in the same run.

Usage: python bench/grader_pytest_start.py [--problem-dir DIR] [--checkpoint NAME] [--repeat N]
Without --problem-dir it uses the bundled kv_server problem.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from perf_row import print_row
from plain_pytest import lay_out

from benchwright.coding.grading.grader import pytest_args
from benchwright.coding.problems.examples import example_problem_dir


def _cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """User + system CPU seconds of one run of `argv` (its waited-for children included)."""
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: some tests failed, still a whole run
        raise SystemExit(f"pytest exited {code}: {' '.join(argv)}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem-dir", type=Path, default=example_problem_dir("kv_server"))
    parser.add_argument("--checkpoint", default="checkpoint_1")
    parser.add_argument("--repeat", type=int, default=7, help="runs of each (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        problem, config, python, workspace, env, _ = lay_out(args.problem_dir, args.checkpoint,
                                                             Path(tmp))
        env = {**env, **problem.env_for(config)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # doubles start-up CPU when set
        print(f"problem {problem.name}/{args.checkpoint}, {args.repeat} runs each, CPU medians")
        ratios = []
        for label, extra in (("collection only", ["--collect-only", "-q"]), ("whole run", [])):
            cpu: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(args.repeat):
                for anyio in (True, False):
                    argv = [*python, *pytest_args(problem, config, Path(tmp) / "report.json",
                                                  anyio=anyio, scratch=Path(tmp)), *extra]
                    cpu[anyio].append(_cpu(argv, workspace, env))
            with_, without = (statistics.median(cpu[k]) for k in (True, False))
            print(f"{label:16} with anyio's plugin {with_ * 1000:5.0f} ms, "
                  f"-p no:anyio {without * 1000:5.0f} ms, ratio {without / with_:.2f}")
            ratios.append(f"{label} {without / with_:.2f}x ({without * 1000:.0f} ms against "
                          f"{with_ * 1000:.0f} ms)")
    print_row("grader_pytest_start.py", f"the grader's pytest with `-p no:anyio`, "
              f"{problem.name}/{args.checkpoint}, CPU median of {args.repeat}",
              "the same with anyio's plugin", "; ".join(ratios), "-")


if __name__ == "__main__":
    main()
