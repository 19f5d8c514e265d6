"""Grading overhead: `benchwright eval checkpoint` against plain pytest on the same snapshot.

Both use the same prebuilt (cached) environments; plain pytest runs in a workspace laid out once
beforehand, with no sandbox. Prints the median of each and their ratio (target <= 1.15).

Usage: python bench/grade_overhead.py [--problem-dir DIR] [--checkpoint NAME] [--repeat N]
Without --problem-dir it uses the bundled kv_server problem. For the figure in the docs, point it
at SCBench's problems/log_query with --checkpoint checkpoint_5.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perf_row import print_row
from plain_pytest import lay_out

from benchwright.coding.grading.grader import entrypoint_command, pytest_args
from benchwright.coding.problems.examples import example_problem_dir


def _timed(argv: list[str], **kwargs: object) -> float:
    kwargs.setdefault("env", _env())
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   **kwargs)  # type: ignore[call-overload]
    return time.perf_counter() - start


def _env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment both sides run in: bytecode written as a user's Python writes it (the warm-up
    run leaves the .pyc files; PYTHONDONTWRITEBYTECODE=1 would compile every module on each run)."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _plain_pytest_command(
    problem_dir: Path, checkpoint: str, scratch: Path
) -> tuple[list[str], dict[str, str], Path]:
    laid = lay_out(problem_dir, checkpoint, scratch)
    argv = [*laid.python, *pytest_args(laid.problem, laid.checkpoint, scratch / "report.json",
                                       anyio=laid.anyio, scratch=scratch)]
    assert entrypoint_command(laid.problem).startswith("python ")
    return argv, laid.env, laid.workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem-dir", type=Path, default=example_problem_dir("kv_server"))
    parser.add_argument("--checkpoint", default="checkpoint_3")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bw = [sys.executable, "-m", "benchwright", "eval", "checkpoint", "--problems-dir",
          str(args.problem_dir.parent), "--problem", args.problem_dir.name,
          "--checkpoint", args.checkpoint, "--json"]
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        bw += ["--out", str(scratch / "bw-out")]
        plain, env, workspace = _plain_pytest_command(args.problem_dir, args.checkpoint, scratch)
        _timed(bw)  # warm: builds the environments if they are not cached yet
        ours, theirs = [], []
        for _ in range(args.repeat):
            ours.append(_timed(bw))
            theirs.append(_timed(plain, cwd=workspace, env=_env(env)))
        shutil.rmtree(scratch / "bw-out", ignore_errors=True)
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"problem {args.problem_dir.name}/{args.checkpoint}, {args.repeat} runs each")
    print(f"benchwright eval checkpoint (bwrap sandbox): median {a:.2f} s")
    print(f"plain pytest, prebuilt environments:         median {b:.2f} s")
    print(f"ratio {a / b:.3f} (target <= 1.15; issue 40: <= 1.0)")
    print_row("grade_overhead.py", f"`eval checkpoint` (jail on), {args.problem_dir.name}/"
              f"{args.checkpoint}, wall median of {args.repeat}", "plain pytest, same tests",
              f"{a / b:.3f}x ({a:.2f} s against {b:.2f} s)", "<= 1.0x")


if __name__ == "__main__":
    main()
