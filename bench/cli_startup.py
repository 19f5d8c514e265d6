"""CLI start-up cost: the CPU time of a few `benchwright` commands that do (almost) nothing.

Every CLI subprocess pays it: a user's every command, and the test suite's hundreds of CLI
probes. CPU (user + system of the child, from `os.wait4`), not wall time: on a busy machine
wall time measures the neighbours. Each command runs `--repeat` times; the median is printed
with its ratio against `python -c pass` measured in the same run (the interpreter's own
start-up, the floor no command can go under).

Target (issue 40): `--version` and `run coding --help` at most 0.25 s CPU each. Run it from a
folder without benchwright.toml or pyproject.toml (the defaults file is read at every start),
after the venv's bytecode is compiled (scripts/check does it; PYTHONDONTWRITEBYTECODE=1 would
otherwise make every start compile its imports again).

Usage: python bench/cli_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from perf_row import print_row

TARGET_S = 0.25
TARGETED = (("--version",), ("run", "coding", "--help"))
COMMANDS = [
    ["--version"],
    ["run", "coding", "--help"],
    ["report", "--help"],
    ["eval", "checkpoint", "--help"],
    ["metrics", "judge", "--help"],
    ["view", "--help"],
]


def _cpu(argv: list[str]) -> float:
    """User + system CPU seconds of one run of `argv` (its children included)."""
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}")
    return usage.ru_utime + usage.ru_stime


def _median_cpu(argv: list[str], repeat: int) -> float:
    return statistics.median(_cpu(argv) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (median)")
    args = parser.parse_args()
    floor = _median_cpu([sys.executable, "-c", "pass"], args.repeat)
    print(f"python -c pass: {floor * 1000:.0f} ms CPU (median of {args.repeat})")
    cpus = {}
    for command in COMMANDS:
        cpu = cpus[tuple(command)] = _median_cpu([sys.executable, "-m", "benchwright", *command],
                                                 args.repeat)
        print(f"benchwright {' '.join(command):24} {cpu * 1000:5.0f} ms CPU  "
              f"{cpu / floor:5.1f}x python -c pass")
    mean = statistics.mean(cpus.values())
    print(f"mean of the commands: {mean * 1000:.0f} ms CPU, {mean / floor:.1f}x python -c pass")
    worst = max(cpus[c] for c in TARGETED)
    print(f"target: --version and run coding --help <= {TARGET_S * 1000:.0f} ms CPU each: "
          f"{'met' if worst <= TARGET_S else 'NOT met'} (slower of the two {worst * 1000:.0f} ms)")
    print_row("cli_startup.py", "`--version`, `run coding --help` and four other `--help`s, CPU",
              "`python -c pass`", f"{worst * 1000:.0f} ms CPU at most of the two targeted "
              f"({worst / floor:.1f}x); mean {mean * 1000:.0f} ms", "<= 250 ms CPU each")


if __name__ == "__main__":
    main()
