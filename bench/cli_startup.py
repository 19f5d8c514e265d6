"""CLI start-up cost: the CPU time of a few `benchwright` commands that do (almost) nothing.

Every CLI subprocess pays it: a user's every command, and the test suite's hundreds of CLI
probes. CPU (user + system of the child, from `os.wait4`), not wall time: on a busy machine
wall time measures the neighbours. Each command runs `--repeat` times; the median is printed
with its ratio against `python -c pass` measured in the same run (the interpreter's own
start-up, the floor no command can go under).

Usage: python bench/cli_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

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
    total = 0.0
    for command in COMMANDS:
        cpu = _median_cpu([sys.executable, "-m", "benchwright", *command], args.repeat)
        total += cpu
        print(f"benchwright {' '.join(command):24} {cpu * 1000:5.0f} ms CPU  "
              f"{cpu / floor:5.1f}x python -c pass")
    print(f"mean of the commands: {total / len(COMMANDS) * 1000:.0f} ms CPU, "
          f"{total / len(COMMANDS) / floor:.1f}x python -c pass")


if __name__ == "__main__":
    main()
