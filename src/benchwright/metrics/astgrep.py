"""ast-grep findings with benchwright's own rule set (shipped in the package), by category."""

from __future__ import annotations

import functools
import json
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from benchwright.metrics.models import AstGrepFinding
from benchwright.metrics.tools import executable

CATEGORIES = ("complexity", "style", "verbosity", "safety", "performance", "types", "naming")


@dataclass
class AstGrepResult:
    """Findings per rule and per category, and their weighted sum."""

    by_rule: dict[str, int] = field(default_factory=dict)
    by_category: dict[str, int] = field(default_factory=dict)
    weighted: float = 0.0
    findings: list[AstGrepFinding] = field(default_factory=list)


def rules_dir() -> Path:
    """The folder holding sgconfig.yml and rules/<category>/<id>.yml."""
    return Path(str(resources.files("benchwright.metrics") / "astgrep"))


@functools.cache
def rule_table() -> dict[str, tuple[str, int]]:
    """Rule id -> (category, weight), read from the rule files' metadata."""
    table = {}
    for path in sorted((rules_dir() / "rules").rglob("*.yml")):
        rule = yaml.safe_load(path.read_text())
        meta = rule.get("metadata") or {}
        table[rule["id"]] = (str(meta.get("category", path.parent.name)),
                             int(meta.get("weight", 1)))
    return table


def run_astgrep(root: Path, files: list[str]) -> AstGrepResult:
    """Scan the files (one ast-grep process for all of them)."""
    if not files:
        return AstGrepResult(by_category=dict.fromkeys(CATEGORIES, 0))
    argv = [executable("ast-grep", "sg"), "scan", "-c", str(rules_dir() / "sgconfig.yml"),
            "--json=stream", "--", *files]  # `--`: a file named `-x.py` is not an option
    out = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    matches = [json.loads(line) for line in out.stdout.splitlines() if line]
    rules = Counter(match["ruleId"] for match in matches)
    table = rule_table()
    categories = dict.fromkeys(CATEGORIES, 0)
    for rule, n in rules.items():
        category = table.get(rule, ("style", 1))[0]
        categories[category] = categories.get(category, 0) + n
    weighted = float(sum(n * table.get(rule, ("", 1))[1] for rule, n in rules.items()))
    return AstGrepResult(by_rule=dict(rules.most_common()), by_category=categories,
                         weighted=weighted, findings=[_finding(m, table) for m in matches])


def _finding(match: dict[str, Any], table: dict[str, tuple[str, int]]) -> AstGrepFinding:
    """One match of ast-grep's JSON stream (lines from 0 there, from 1 here)."""
    category, weight = table.get(match["ruleId"], ("style", 1))
    start, end = match["range"]["start"], match["range"]["end"]
    return AstGrepFinding(rule=match["ruleId"], category=category, weight=weight,
                          severity=str(match.get("severity", "hint")), file=str(match["file"]),
                          line=start["line"] + 1, column=start["column"],
                          end_line=end["line"] + 1, end_column=end["column"])
