"""benchwright's SCBench figures against scb-check run directly, on every reference checkpoint.

Usage:
    python scripts/scb_check_parity.py PROBLEMS_DIR --reference /path/to/bin/scb-check
        [--only NAME | --start NAME --stop NAME]

PROBLEMS_DIR holds SCBench problems (`<problem>/solutions/checkpoint_N/`), e.g. a checkout of the
scb-problems repository (SCBench v1.0). `--reference` is scb-check installed on its own, e.g.
    uv venv --python 3.12 /tmp/scbc && uv pip install --python /tmp/scbc/bin/python scb-check==0.2.0
It runs on the host from an empty folder (so it finds no configuration file), as
`scb-check check DIR --report --include-all`. benchwright's side is `metrics.scbcheck.measure`,
what the coding run loop records for each checkpoint (sandboxed, pinned environment).

Prints one markdown row per checkpoint (verbosity, erosion, cognitive erosion: reference and
benchwright, and whether every figure of the report, parts included, agrees to 4 decimals),
then a summary line. Exit code 0 when every checkpoint agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchwright.metrics.scbcheck import ScbCheckFigures, measure

FIGURES = ("verbosity", "erosion", "cog_erosion", "total_loc", "clone_loc",
           "ast_grep_flagged_loc", "structural_rule_loc", "verbosity_flagged_loc",
           "total_mass", "high_cc_mass", "total_cog_mass", "high_cog_mass")


def checkpoints(problems: Path, only: str | None, start: str = "",
                stop: str | None = None) -> list[Path]:
    """Every `<problem>/solutions/checkpoint_N` folder, by problem then N (`only` one problem;
    `start`, `stop`: problems from `start` on and before `stop`, to split the run in parts)."""
    found = [p for p in problems.glob("*/solutions/checkpoint_*") if p.is_dir()
             and (only is None or p.parts[-3] == only) and p.parts[-3] >= start
             and (stop is None or p.parts[-3] < stop)]
    return sorted(found, key=lambda p: (p.parts[-3], int(p.name.rpartition("_")[2])))


def reference(binary: str, folder: Path) -> ScbCheckFigures | str:
    """scb-check's report, run directly; or its error."""
    with tempfile.TemporaryDirectory() as empty:
        proc = subprocess.run([binary, "check", str(folder), "--report", "--include-all"],
                              capture_output=True, text=True, cwd=empty)
    if proc.returncode not in (0, 1):
        return (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return ScbCheckFigures.model_validate(json.loads(proc.stdout))


def agree(a: ScbCheckFigures, b: ScbCheckFigures) -> list[str]:
    """The figures that differ at 4 decimals."""
    return [k for k in FIGURES if round(float(getattr(a, k)), 4) != round(float(getattr(b, k)), 4)]


def row(folder: Path, binary: str) -> tuple[str, bool]:
    """One table row and whether it agrees."""
    name = f"{folder.parts[-3]}/{folder.name.rpartition('_')[2]}"
    started = time.perf_counter()
    ref = reference(binary, folder)
    ref_s = time.perf_counter() - started
    ours = measure(folder)
    if isinstance(ref, str) or ours.figures is None:
        same = isinstance(ref, str) and ours.figures is None
        why = f"reference: {ref if isinstance(ref, str) else 'ok'}; ours: {ours.reason}"
        return f"| {name} | - | - | - | {'both unknown' if same else 'DIFFER'} ({why}) |" \
               f" {ref_s:.1f} | {ours.seconds:.1f} |", same
    o = ours.figures
    differ = agree(ref, o)
    cells = " | ".join(f"{getattr(ref, k):.4f} / {getattr(o, k):.4f}"
                       for k in ("verbosity", "erosion", "cog_erosion"))
    verdict = "equal" if not differ else "DIFFER: " + ", ".join(differ)
    return f"| {name} | {cells} | {verdict} | {ref_s:.1f} | {ours.seconds:.1f} |", not differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", type=Path)
    parser.add_argument("--reference", required=True, help="scb-check 0.2.0's executable")
    parser.add_argument("--only", help="one problem")
    parser.add_argument("--start", default="", help="problems from this name on")
    parser.add_argument("--stop", help="problems before this name")
    args = parser.parse_args()
    folders = checkpoints(args.problems, args.only, args.start, args.stop)
    print("| checkpoint | verbosity (scb-check / ours) | erosion | cognitive erosion | "
          "all figures to 4 decimals | scb-check s | ours s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    equal = 0
    for folder in folders:
        line, ok = row(folder, args.reference)
        equal += ok
        print(line, flush=True)
    print(f"\n{equal} of {len(folders)} checkpoints equal on every figure "
          f"({', '.join(FIGURES)}) to 4 decimals")
    return 0 if equal == len(folders) else 1


if __name__ == "__main__":
    sys.exit(main())
