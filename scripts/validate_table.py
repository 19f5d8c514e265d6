"""Render the `problems validate` table of docs/scbench-parity.md from `--json` outputs.

Usage: python scripts/validate_table.py VALIDATE.json ... [--parity docs/scbench-parity.md]

Each VALIDATE.json is what `benchwright problems validate PROBLEMS_DIR --problem P --json`
printed. Per checkpoint: its runs, Core and all-tests passes, the tests the reference fails in
every run and in some runs (flaky), the other findings, and whether the failing tests agree with
the parity table (one grading by benchwright and one by SCBench's runner). Then the findings
themselves: flaky tests with their message, missing files, network needs and the rest.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

PARITY_ROW = re.compile(r"^\| (\w+/\d+) \| (\d+) \|((?: [^|]+ \|){4}) (\d+) \|")
SCRATCH = re.compile(r"/\S*?/workspace/")  # a grading scratch folder's random path
DETAILED = ("flaky", "missing_data", "missing_program", "network", "near_timeout",
            "requirements", "placeholder", "tests_visible_early", "no_reference")


def parity_failing(text: str) -> dict[str, int | None]:
    """problem/checkpoint -> tests failing in the parity table (None: no test collected)."""
    found: dict[str, int | None] = {}
    for line in text.splitlines():
        match = PARITY_ROW.match(line)
        if match is None or match.group(1) in found:
            continue
        cells = [c.strip() for c in match.group(3).split("|") if c.strip()]
        counts = [tuple(map(int, c.split("/"))) for c in cells if "/" in c]
        found[match.group(1)] = sum(t - p for p, t in counts) if counts else None
    return found


def _agreement(kinds: Counter[str], expected: int | None) -> str:
    if expected is None:
        return "yes (no tests ran)" if "infrastructure" in kinds else "no (parity: none ran)"
    low, high = kinds["reference_fails"], kinds["reference_fails"] + kinds["flaky"]
    return "yes" if low <= expected <= high else f"no (parity: {expected})"


def table_row(key: str, checkpoint: dict[str, Any], parity: dict[str, int | None]) -> str:
    """One Markdown row of the table."""
    runs = checkpoint["runs"]
    kinds = Counter(f["kind"] for f in _unique(checkpoint["findings"]))
    others = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())
                       if k not in ("reference_fails", "flaky", "infrastructure"))
    agree = _agreement(kinds, parity[key]) if key in parity else "not in the table"
    return (f"| {key} | {len(runs)} | {max((r['total'] for r in runs), default=0)} | "
            f"{sum(r['core_passed'] for r in runs)}/{len(runs)} | "
            f"{sum(r['all_passed'] for r in runs)}/{len(runs)} | {kinds['reference_fails']} | "
            f"{kinds['flaky']} | {others or '-'} | {agree} |")


def _unique(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings with scratch paths cut to the workspace, repeats dropped (older versions named
    a missing file once per run, by its random grading folder)."""
    seen: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    for finding in findings:
        detail = SCRATCH.sub("", finding["detail"])
        seen.setdefault((finding["kind"], finding["test"], detail), {**finding, "detail": detail})
    return list(seen.values())


def details(rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The findings other than plain reference failures, grouped by kind and message."""
    grouped: dict[str, dict[tuple[str, str], list[str]]] = defaultdict(lambda: defaultdict(list))
    for key, checkpoint in rows:
        for finding in _unique(checkpoint["findings"]):
            if finding["kind"] in DETAILED:
                message = re.sub(r"run \d+ ", "run ", finding["detail"])[:220]
                grouped[finding["kind"]][(key, message)].append(finding["test"] or "-")
    lines: list[str] = []
    for kind in DETAILED:
        for (key, message), tests in grouped.get(kind, {}).items():
            named = f"`{tests[0]}`" + (f" and {len(tests) - 1} more" if len(tests) > 1 else "")
            lines.append(f"- `{kind}` {key}: {named}: {message}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--parity", type=Path, default=Path("docs/scbench-parity.md"))
    args = parser.parse_args()
    parity = parity_failing(args.parity.read_text())
    rows = [(f"{p['problem']}/{c['checkpoint'].removeprefix('checkpoint_')}", c)
            for path in sorted(args.files)
            for p in json.loads(path.read_text())["problems"] for c in p["checkpoints"]]
    print("| problem/checkpoint | runs | collected | Core pass | all pass | reference fails "
          "(tests) | flaky (tests) | other findings | failing tests as in the parity table |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(table_row(key, c, parity) for key, c in rows))
    print()
    print("\n".join(details(rows)))


if __name__ == "__main__":
    main()
