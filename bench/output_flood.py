"""Output amplification: `eval checkpoint` on a submission that prints 10 MB to stderr per call,
which the tests echo into 23 assertion messages. Prints the harness's peak resident memory and
the bytes it wrote for the checkpoint (its --out folder, and every byte it passed to write()),
against the same grading of a quiet submission in the same run (the reference).

Targets (issue 25, point 4): under 300 MB resident and under 50 MB written.

Usage: python bench/output_flood.py [--mb-per-call 10] [--tests 23]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from perf_row import print_row

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the scenario the test measures too
from tests.helpers.output_flood import (
    flood_problem,
    flood_workspace,
    grade_measured,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb-per-call", type=int, default=10)
    parser.add_argument("--tests", type=int, default=23)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        problem = flood_problem(root, args.tests)
        quiet = grade_measured(problem, flood_workspace(root, "quiet", 0), root / "quiet-out")
        flood = grade_measured(problem, flood_workspace(root, "flood", args.mb_per_call),
                               root / "flood-out")
    for name, figures in (("quiet (reference)", quiet), ("flood", flood)):
        print(f"{name:18} peak RSS {figures['peak_rss_mb']:7.1f} MB   wrote (write()) "
              f"{figures['wchar_mb']:8.1f} MB   --out {figures['out_mb']:7.1f} MB   "
              f"status {figures['status']}, exit {figures['exit']:.0f}, cut {figures['cut']}")
    print(f"ratio flood/quiet: peak RSS {flood['peak_rss_mb'] / quiet['peak_rss_mb']:.2f}x, "
          f"--out {flood['out_mb'] / max(quiet['out_mb'], 1e-6):.1f}x")
    ok = flood["peak_rss_mb"] < 300 and flood["wchar_mb"] < 50 and flood["out_mb"] < 50
    print("targets (peak RSS < 300 MB, < 50 MB written):", "met" if ok else "NOT met")
    print_row("output_flood.py", f"`eval checkpoint` on a submission printing "
              f"{args.mb_per_call} MB to stderr a call ({args.tests} tests): memory and bytes "
              "written", "the same grading of a quiet submission",
              f"peak RSS {flood['peak_rss_mb']:.0f} MB (quiet {quiet['peak_rss_mb']:.0f} MB), "
              f"wrote {flood['wchar_mb']:.1f} MB, --out {flood['out_mb']:.1f} MB",
              "< 300 MB resident, < 50 MB written")


if __name__ == "__main__":
    main()
