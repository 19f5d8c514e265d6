"""ruff findings by rule, weighted by how strongly each rule family signals eroding code."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Finding:
    """One ruff finding."""

    code: str
    file: str
    """Relative to the snapshot."""
    fixable: bool


def run_ruff(root: Path, files: list[str]) -> list[Finding]:
    """Every finding over the given files (one ruff process for all of them)."""
    if not files:
        return []
    # `--`: a file an agent named `--config=x.py` is a file, not an option.
    argv = [executable("ruff"), "check", "--isolated", "--no-cache", "--exit-zero",
            "--output-format", "json", "--select", ",".join(FAMILY_WEIGHTS), "--", *files]
    out = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    return [Finding(code=str(f.get("code") or "syntax"), file=_relative(root, f.get("filename")),
                    fixable=f.get("fix") is not None)
            for f in json.loads(out.stdout or "[]")]


def _relative(root: Path, name: object) -> str:
    """ruff reports absolute paths; ours are relative to the snapshot."""
    path = Path(str(name or ""))
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


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
