"""Grade SCBench reference solutions with benchwright and compare with SCBench's own runner.

Usage: python scripts/scbench_parity.py PROBLEMS_DIR [--problem NAME ...] [--out FILE.jsonl]
       [--runtime bwrap|podman|docker] [--image IMAGE] [--expected FILE.jsonl] [--diffs FILE.md]
       python scripts/scbench_parity.py --compare-saved OUT.jsonl --expected FILE.jsonl [--diffs MD]
       python scripts/scbench_parity.py --table OUT.jsonl [OUT2.jsonl ...] --expected FILE.jsonl

PROBLEMS_DIR is the `problems/` folder of a SlopCodeBench checkout (not part of this repo).
The expected figures are those SCBench's PytestRunner produced (docs/scbench-parity.md); for
the problems without them here, the rows of docs/scbench-parity.md's table (equal to SCBench's
runner's). With --expected (the SCBench v1.0 problems), the figures are the lines
scripts/scbench_v1_reference.py wrote (SCBench's Harbor grading, docs/scbench-v1-reference.jsonl);
each differing checkpoint then says which counts differ and which tests failed on one side only,
and --diffs appends them, with the first lines of benchwright's failure messages, to a Markdown
file. --table prints docs/scbench-parity.md's v1.0 table from the reference lines and the --out
lines of benchwright's runs (a later file's line for a checkpoint is its re-run).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.grading.policies import PassPolicy
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import get_runtime
from benchwright.sandbox.images.resolve import image_for_runtime

# problem/checkpoint: (collected, Core, Functionality, Error, Regression, exit); "" = no tests.
EXPECTED = {
    "file_backup/1": (32, "6/6", "15/22", "4/4", "", 1),
    "file_backup/2": (50, "3/3", "15/15", "", "25/32", 1),
    "file_backup/3": (68, "3/3", "15/15", "", "43/50", 1),
    "file_backup/4": (89, "4/4", "17/17", "", "61/68", 1),
    "log_query/1": (134, "10/10", "119/119", "5/5", "", 0),
    "log_query/2": (207, "5/5", "64/64", "4/4", "134/134", 0),
    "log_query/3": (262, "4/4", "47/47", "4/4", "207/207", 0),
    "log_query/4": (299, "2/2", "29/31", "4/4", "262/262", 1),
    "log_query/5": (336, "3/3", "30/30", "4/4", "293/299", 1),
    "execution_server/1": (45, "38/38", "7/7", "", "", 0),
    "execution_server/2": (58, "7/7", "", "6/6", "43/45", 1),
    "execution_server/3": (103, "16/16", "28/28", "1/1", "56/58", 1),
    "execution_server/4": (151, "16/16", "32/32", "", "101/103", 1),
    "execution_server/5": (187, "28/28", "", "", "157/159", 1),
    "execution_server/6": (70, "25/25", "", "9/9", "36/36", 0),
    "etl_pipeline/1": (41, "6/6", "8/9", "26/26", "", 1),
    "etl_pipeline/2": (73, "27/27", "", "5/5", "38/41", 1),
    "etl_pipeline/3": (117, "4/4", "31/31", "9/9", "70/73", 1),
    "etl_pipeline/4": (134, "3/3", "7/7", "7/7", "114/117", 1),
    "etl_pipeline/5": (164, "4/4", "18/18", "8/8", "133/134", 1),
}
GROUPS = ("Core", "Functionality", "Error", "Regression")
TABLE = Path(__file__).resolve().parents[1] / "docs" / "scbench-parity.md"
_ROW = re.compile(r"^\| (\w+)/(\d+) \| (\d+) \|((?: [^|]+ \|){4}) (\d+) \|")


def table_rows(path: Path = TABLE) -> dict[str, tuple[object, ...]]:
    """problem/checkpoint -> the row docs/scbench-parity.md's table holds (benchwright's counts
    as last measured, which equal SCBench's runner's; the first table only): what every
    problem must grade as."""
    rows: dict[str, tuple[object, ...]] = {}
    for line in path.read_text().splitlines() if path.is_file() else []:
        match = _ROW.match(line)
        if match:
            groups = [g.strip() for g in match.group(4).strip(" |").split(" | ")]
            rows.setdefault(f"{match.group(1)}/{match.group(2)}", (
                int(match.group(3)), *("" if g == "-" else g for g in groups), int(match.group(5))))
    return rows


def reference_rows(path: Path) -> dict[str, dict[str, Any]]:
    """problem/checkpoint -> a line of scripts/scbench_v1_reference.py's output (those with
    counts; a problem listed with missing files has none)."""
    rows: dict[str, dict[str, Any]] = {}
    for text in path.read_text().splitlines() if path.is_file() else []:
        line = json.loads(text) if text.strip() else {}
        if "checkpoint" in line:
            rows[f"{line['problem']}/{line['checkpoint'].removeprefix('checkpoint_')}"] = line
    return rows


def reference_row(line: dict[str, Any]) -> tuple[object, ...]:
    return (line["collected"], *(line["groups"].get(g, "") for g in GROUPS), line["exit_code"])


def first_lines(text: str, count: int) -> list[str]:
    return [line for line in text.splitlines() if line.strip()][:count]


def failed_ids(ev: CheckpointEvaluation) -> dict[str, str]:
    """test id (file name::node) -> the first lines of its failure message."""
    return {f"{Path(t.file).name}::{t.id}": "\n".join(first_lines(t.message or "", 6))
            for t in ev.tests if not t.passed and t.outcome not in ("skipped", "xfailed")}


def differences(row: tuple[object, ...], ref: dict[str, Any],
                ours: dict[str, str]) -> list[str]:
    """Why benchwright's row is not the reference's: the fields, then the tests."""
    names = ("collected", *GROUPS, "exit")
    why = [f"{n}: ours {a!r}, SCBench {b!r}"
           for n, a, b in zip(names, row, reference_row(ref), strict=True) if a != b]
    theirs = set(ref.get("failed", []))
    why += [f"fails only here: {t}" for t in sorted(set(ours) - theirs)]
    why += [f"fails only in SCBench: {t}" for t in sorted(theirs - set(ours))]
    return why


def write_diff(diffs: Path, key: str, why: list[str], ours: dict[str, str]) -> None:
    with diffs.open("a") as sink:
        sink.write(f"\n## {key}\n\n")
        sink.write("".join(f"- {w}\n" for w in why if not w.startswith("fails only here")))
        for test in sorted(ours):
            if f"fails only here: {test}" in why:
                message = ours[test].replace("\n", "\n      ")
                sink.write(f"- `{test}`\n      {message}\n")


def compare_reference(key: str, row: tuple[object, ...], ours: dict[str, str],
                      reference: dict[str, dict[str, Any]], diffs: Path | None) -> str:
    """'same', 'n/a' (no reference line) or 'DIFFERENT: ...', noted in `diffs`; `ours` maps
    the tests failing under benchwright to their messages."""
    if key not in reference:
        return "n/a"
    why = differences(row, reference[key], ours)
    if not why:
        return "same"
    if diffs is not None:
        write_diff(diffs, key, why, ours)
    return "DIFFERENT: " + "; ".join(why[:6])


def grade_all(problems_dir: Path, names: list[str], out: Path, python: str | None,
              jail_log: Path | None = None, runtime: str = "bwrap",
              image: str | None = None, expected: Path | None = None,
              diffs: Path | None = None, orders: tuple[int, ...] = ()) -> int:
    mismatches = 0
    image_id = image_for_runtime(runtime, image)
    options = GradeOptions(runtime=get_runtime(False, runtime, image_id), python=python,
                           jail_log=jail_log)
    table = table_rows()
    with out.open("a") as sink:
        for name in names:
            problem = load_problem(problems_dir / name)
            for checkpoint in problem.ordered_checkpoints():
                if orders and checkpoint.order not in orders:
                    continue
                snapshot = problem.solution_dir(checkpoint.name)
                if not snapshot.is_dir():
                    print(f"{name}/{checkpoint.name}: no reference solution", flush=True)
                    continue
                ev = grade_checkpoint(problem, checkpoint, snapshot, options).evaluation
                counts = {str(g): f"{c.passed}/{c.total}" for g, c in ev.counts.items()}
                row = (ev.pytest_collected, *(counts.get(g, "") for g in GROUPS),
                       ev.pytest_exit_code)
                key = f"{name}/{checkpoint.name.removeprefix('checkpoint_')}"
                if expected is not None:
                    # read again each time: the reference may still be being written
                    reference = reference_rows(expected)
                    verdict = compare_reference(key, row, failed_ids(ev), reference, diffs)
                    wanted = reference_row(reference[key]) if key in reference else None
                else:
                    wanted = EXPECTED.get(key) or table.get(key)
                    verdict = "n/a" if wanted is None else ("same" if tuple(wanted) == row
                                                            else "DIFFERENT")
                mismatches += verdict.startswith("DIFFERENT")
                record = {"key": key, "runtime": runtime, "row": row, "expected": wanted,
                          "verdict": verdict,
                          "core_cases": ev.verdicts[PassPolicy.CORE_CASES], "status": ev.status,
                          "reason": ev.infrastructure_reason, "seconds": ev.total_duration_s,
                          "rules_fired": [str(r.rule) for r in ev.rules_fired],
                          "failed": failed_ids(ev)}
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                print(json.dumps(record), flush=True)
    return mismatches


def compare_saved(saved: Path, expected: Path, diffs: Path | None) -> int:
    """Compare the lines an earlier run wrote (--out) with the reference, without grading."""
    reference = reference_rows(expected)
    mismatches = 0
    for text in saved.read_text().splitlines():
        record = json.loads(text)
        verdict = compare_reference(record["key"], tuple(record["row"]), record.get("failed", {}),
                                    reference, diffs)
        mismatches += verdict.startswith("DIFFERENT")
        print(f"{record['key']}: {verdict}", flush=True)
    return mismatches


def saved_runs(paths: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """checkpoint key -> benchwright's lines for it, in the order of `paths` (then re-runs)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        for text in path.read_text().splitlines() if path.is_file() else []:
            record = json.loads(text)
            runs.setdefault(record["key"], []).append(record)
    return runs


def cell(value: object) -> str:
    return "-" if value in ("", None) else str(value)


def reference_failures(line: dict[str, Any]) -> str:
    failed = line.get("failed") or []
    shown = ", ".join(f"`{t}`" for t in failed[:3])
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    flaky = f" (in one run only: {len(line['flaky'])})" if line.get("flaky") else ""
    return f"{len(failed)}: {shown}{more}{flaky}" if failed else "-"


def reference_runs(line: dict[str, Any]) -> list[dict[str, Any]]:
    """The reference's other gradings of the checkpoint (its second run, later measurements),
    each as a line `differences` reads."""
    others = [line["second_run"]] if "second_run" in line else []
    others += line.get("other_runs", [])
    return [{**line, **other, "collected": other.get("collected", line["collected"])}
            for other in others]


def verdict_cell(line: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    """benchwright's verdict on a checkpoint: same, same on the re-run, the same as another of
    the reference's own runs (the reference is flaky there), or how it differs."""
    if not runs:
        return "not graded yet"
    ours = {k: "" for k in runs[-1].get("failed", {})}
    why = differences(tuple(runs[-1]["row"]), line, ours)
    if not why:
        return "same" if len(runs) == 1 else f"same on the re-run ({len(runs) - 1} differed)"
    if any(not differences(tuple(runs[-1]["row"]), other, ours)
           for other in reference_runs(line)):
        return "same as another run of the reference's (its failures vary from run to run)"
    return "differs" + (" twice" if len(runs) > 1 else "") + ": " + "; ".join(why[:4])


def table_lines(expected: Path, saved: list[Path]) -> list[str]:
    """The v1.0 table: a row per reference line, benchwright's verdict beside it."""
    runs = saved_runs(saved)
    out = ["| problem/checkpoint | collected | Core | Functionality | Error | Regression | exit | "
           "reference's failing tests | benchwright |", "|---|---|---|---|---|---|---|---|---|"]
    for text in expected.read_text().splitlines():
        line = json.loads(text)
        if "missing_files" in line:
            out.append(f"| {line['problem']} | not graded: missing from the checkout: "
                       f"{', '.join(line['missing_files'])} | | | | | | | |")
            continue
        key = f"{line['problem']}/{line['checkpoint'].removeprefix('checkpoint_')}"
        out.append(f"| {key} | " + " | ".join(cell(v) for v in reference_row(line)) +
                   f" | {reference_failures(line)} | {verdict_cell(line, runs.get(key, []))} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems_dir", type=Path, nargs="?", default=None)
    parser.add_argument("--problem", action="append", default=[])
    parser.add_argument("--checkpoint", action="append", type=int, default=[],
                        help="grade only this checkpoint (its order, 1...) of each problem")
    parser.add_argument("--out", type=Path, default=Path("scbench-parity.jsonl"))
    parser.add_argument("--python", default=None)
    parser.add_argument("--jail-log", type=Path, default=None,
                        help="append every jailed command and the paths it was shown here")
    parser.add_argument("--runtime", default="bwrap", help="bwrap, podman or docker")
    parser.add_argument("--image", default=None, help="the container image (podman/docker)")
    parser.add_argument("--expected", type=Path, default=None,
                        help="scbench_v1_reference.py's lines to compare with (SCBench v1.0)")
    parser.add_argument("--diffs", type=Path, default=None,
                        help="append each differing checkpoint's failing tests here (Markdown)")
    parser.add_argument("--compare-saved", type=Path, default=None, metavar="OUT",
                        help="do not grade: compare an earlier --out file with --expected")
    parser.add_argument("--table", type=Path, nargs="+", default=None, metavar="OUT",
                        help="print the v1.0 table: --expected's lines and these --out lines")
    args = parser.parse_args()
    if args.table is not None:
        if args.expected is None:
            parser.error("--table needs --expected")
        print("\n".join(table_lines(args.expected, args.table)))
        return
    if args.compare_saved is not None:
        if args.expected is None:
            parser.error("--compare-saved needs --expected")
        sys.exit(1 if compare_saved(args.compare_saved, args.expected, args.diffs) else 0)
    if args.problems_dir is None:
        parser.error("PROBLEMS_DIR is needed to grade")
    names = args.problem or sorted(p.name for p in args.problems_dir.iterdir()
                                   if (p / "config.yaml").is_file())
    sys.exit(1 if grade_all(args.problems_dir, names, args.out, args.python, args.jail_log,
                            args.runtime, args.image, args.expected, args.diffs,
                            tuple(args.checkpoint)) else 0)


if __name__ == "__main__":
    main()
