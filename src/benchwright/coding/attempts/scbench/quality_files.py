"""A checkpoint's `quality_analysis/` files under SCBench's names and in its shapes, derived from
our `quality_analysis/metrics.json`: `overall_quality.json` (the snapshot's aggregates),
`files.jsonl` (a row per file), `symbols.jsonl` (a row per function, method and class) and
`ast_grep.jsonl` (a row per ast-grep finding). Fields benchwright does not measure are left
out rather than filled with a made-up zero; docs/scbench-files.md lists them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from benchwright.files.atomic import remove_torn_writes, write_json_atomic, write_text_atomic
from benchwright.metrics.astgrep import rule_table
from benchwright.metrics.models import (
    AstGrepFinding,
    FileMetrics,
    SnapshotMetrics,
    SymbolMetrics,
)
from benchwright.metrics.scbcheck import report_keys
from benchwright.metrics.spread import HIGH_CC, spread

OVERALL, FILES, SYMBOLS, AST_GREP = ("overall_quality.json", "files.jsonl", "symbols.jsonl",
                                     "ast_grep.jsonl")
CC_BANDS, MI_RANKS = ("A", "B", "C", "D", "E", "F"), ("A", "B", "C")


def write_quality_files(folder: Path, metrics: SnapshotMetrics) -> None:
    """The four files, in `folder` (a checkpoint's quality_analysis/); what a writer killed
    there mid-write left (the run's lock is ours) goes first."""
    remove_torn_writes(folder)
    write_json_atomic(folder / OVERALL, overall_quality(metrics), durable=False)
    _write_jsonl(folder / FILES, [file_row(f, metrics) for f in metrics.files])
    _write_jsonl(folder / SYMBOLS, [symbol_row(s) for s in metrics.symbols])
    _write_jsonl(folder / AST_GREP, [finding_row(f) for f in metrics.astgrep_findings or []])


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in rows), durable=False)


def overall_quality(metrics: SnapshotMetrics) -> dict[str, Any]:
    """SCBench's snapshot aggregates (its `SnapshotMetrics`), nested as it nests them."""
    kinds = Counter(s.kind for s in metrics.symbols)
    variables = sum(f.variables or 0 for f in metrics.files)
    imports = [f.imports or 0 for f in metrics.files]
    lines = metrics.lines
    return {
        "file_count": len(metrics.files),
        "source_file_count": metrics.graph.modules if metrics.graph.entry else len(metrics.files),
        "lines": {"total_lines": lines.loc, "loc": lines.sloc, "comments": lines.comments,
                  "multi_comment": lines.multi, "single_comment": lines.single_comments},
        "lint": {"errors": sum(metrics.lint.values()), "fixable": metrics.lint_fixable,
                 "counts": metrics.lint},
        "symbols": {"total": len(metrics.symbols) + variables, "functions": kinds["function"],
                    "methods": kinds["method"], "classes": kinds["class"],
                    "variables": variables,
                    "statements": sum(s.statements for s in metrics.symbols) + variables,
                    "imports": sum(imports), "max_imports": max(imports, default=0),
                    "globals": variables},
        "functions": spread(metrics.symbols).model_dump(),
        "complexity": _complexity(metrics),
        "waste": {"single_use_functions": len(metrics.single_use_functions),
                  "trivial_wrappers": len(metrics.trivial_wrappers),
                  "single_method_classes": len(metrics.single_method_classes)},
        "redundancy": {"clone_instances": metrics.clone_instances,
                       "clone_lines": metrics.clone_lines,
                       "files_with_clones": len({_clone_file(i) for c in metrics.clones
                                                 for i in c.instances})},
        "ast_grep": _ast_grep(metrics),
        "scb_check": report_keys(metrics.scbench),
        "graph": {"node_count": metrics.graph.modules, "edge_count": metrics.graph.edges,
                  "cyclic_dependency_mass": metrics.graph.cyclic_dependency_mass,
                  "propagation_cost": metrics.graph.propagation_cost,
                  "dependency_entropy": metrics.graph.dependency_entropy},
    }


def _complexity(metrics: SnapshotMetrics) -> dict[str, Any]:
    parsed = [f for f in metrics.files if f.parse_error is None]
    return {"cc_ratings": {band: sum(s.band == band for s in metrics.symbols)
                           for band in CC_BANDS},
            "mi_ratings": {rank: sum(f.mi_rank == rank for f in parsed) for rank in MI_RANKS},
            "cc_sum": sum(s.complexity for s in metrics.symbols),
            "cc_max": max((s.complexity for s in metrics.symbols), default=0),
            "num_complex": sum(s.complexity > HIGH_CC for s in metrics.symbols),
            "mi_sum": sum(f.mi for f in parsed),
            "mi_min": min((f.mi for f in parsed), default=0.0)}


def _ast_grep(metrics: SnapshotMetrics) -> dict[str, Any]:
    table = rule_table()
    weighted: Counter[str] = Counter()
    for rule, n in metrics.astgrep_rules.items():
        category, weight = table.get(rule, ("style", 1))
        weighted[category] += n * weight
    return {"violations": sum(metrics.astgrep_rules.values()), "rules_checked": len(table),
            "counts": metrics.astgrep_rules, "weighted": int(metrics.astgrep_weighted),
            "category_counts": metrics.astgrep, "category_weighted": dict(weighted)}


def _clone_file(instance: str) -> str:
    """`file:start-end` -> file."""
    return instance.rpartition(":")[0]


def _owned(entries: list[str], path: str) -> int:
    """Entries `file:name` of this file."""
    return sum(entry.rpartition(":")[0] == path for entry in entries)


def file_row(file: FileMetrics, metrics: SnapshotMetrics) -> dict[str, Any]:
    """One line of files.jsonl."""
    clones = [(i, c.lines) for c in metrics.clones for i in c.instances
              if _clone_file(i) == file.path]
    findings = [f for f in metrics.astgrep_findings or [] if f.file == file.path]
    clone_lines = sum(n for _, n in clones)
    row: dict[str, Any] = {
        "file_path": file.path, "loc": file.lines.sloc, "total_lines": file.lines.loc,
        "comments": file.lines.comments, "multi_comment": file.lines.multi,
        "single_comment": file.lines.single_comments, "lint_errors": file.lint,
        "lint_fixable": file.lint_fixable, "mi": file.mi,
        "depth": len(PurePosixPath(file.path).parts), "is_entry_language": True,
        "import_count": file.imports, "global_count": file.variables,
        "symbol_count": file.symbols + (file.variables or 0),
        "ast_grep_violation_count": len(findings), "ast_grep_rules_checked": len(rule_table()),
        "clone_instances": len(clones), "clone_lines": clone_lines,
        "clone_ratio": clone_lines / file.lines.sloc if file.lines.sloc else 0.0,
        "single_use_count": _owned(metrics.single_use_functions, file.path),
        "trivial_wrapper_count": _owned(metrics.trivial_wrappers, file.path),
        "single_method_class_count": _owned(metrics.single_method_classes, file.path),
    }
    return {k: v for k, v in row.items() if v is not None}


def symbol_row(symbol: SymbolMetrics) -> dict[str, Any]:
    """One line of symbols.jsonl (`Store.put` is name `put` of parent class `Store`)."""
    parent, _, name = symbol.name.rpartition(".")
    row: dict[str, Any] = {
        "name": name, "type": symbol.kind, "start": symbol.start, "end": symbol.end,
        "complexity": symbol.complexity, "branches": symbol.branches,
        "statements": symbol.statements, "control_blocks": symbol.control_blocks,
        "exception_scaffold": symbol.exception_scaffold, "comparisons": symbol.comparisons,
        "max_nesting_depth": symbol.max_nesting_depth, "lines": symbol.lines,
        "file_path": symbol.file, "parent_class": parent if symbol.kind == "method" else None,
        "body_hash": symbol.body_hash, "variables_defined": symbol.variables_defined,
        "variables_used": symbol.variables_used,
    }
    return {k: v for k, v in row.items() if v is not None or k == "parent_class"}


def finding_row(finding: AstGrepFinding) -> dict[str, Any]:
    """One line of ast_grep.jsonl (lines from 0, as ast-grep and SCBench count them)."""
    return {"rule_id": finding.rule, "severity": finding.severity,
            "category": finding.category, "subcategory": finding.category,
            "weight": finding.weight, "line": finding.line - 1, "column": finding.column,
            "end_line": finding.end_line - 1, "end_column": finding.end_column,
            "file_path": finding.file}
