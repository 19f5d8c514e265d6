"""ruff findings by rule, weighted by how strongly each rule family signals eroding code."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

from benchwright.metrics.tools import executable

# Rule family -> weight (1 cosmetic .. 5 a likely bug). ruff runs isolated from the snapshot's
# own configuration, so every snapshot is judged by the same rules.
FAMILY_WEIGHTS: dict[str, int] = {
    "F": 5, "E": 2, "W": 1, "B": 4, "C90": 3, "SIM": 2, "PLR": 3, "PLW": 3, "PLE": 5, "PLC": 2,
    "RUF": 2, "UP": 1, "PERF": 2, "S": 4, "ARG": 2, "RET": 2, "PIE": 2, "ERA": 2, "T20": 1,
    "BLE": 3, "TRY": 2, "C4": 1, "N": 1, "PTH": 1, "FBT": 2, "A": 3, "ISC": 1, "RSE": 1,
    "SLF": 2, "TID": 1, "FURB": 1, "EM": 1, "G": 1, "DTZ": 2, "PGH": 2, "COM": 1,
}


def run_ruff(root: Path, files: list[str]) -> Counter[str]:
    """Findings per rule code over the given files (one ruff process for all of them)."""
    if not files:
        return Counter()
    # `--`: a file an agent named `--config=x.py` is a file, not an option.
    argv = [executable("ruff"), "check", "--isolated", "--no-cache", "--exit-zero",
            "--output-format", "json", "--select", ",".join(FAMILY_WEIGHTS), "--", *files]
    out = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    findings = json.loads(out.stdout or "[]")
    return Counter(str(f.get("code") or "syntax") for f in findings)


# Single rules whose weight differs from their family's.
RULE_WEIGHTS: dict[str, int] = {"E501": 1, "S101": 1, "COM812": 1}


def weight_of(code: str) -> int:
    """The weight of a rule code: its own, else its longest matching family's, else 1."""
    if code in RULE_WEIGHTS:
        return RULE_WEIGHTS[code]
    matches = [family for family in FAMILY_WEIGHTS if code.startswith(family)]
    return FAMILY_WEIGHTS[max(matches, key=len)] if matches else 1


def weighted(counts: Counter[str]) -> float:
    """Findings times their weights."""
    return float(sum(n * weight_of(code) for code, n in counts.items()))
