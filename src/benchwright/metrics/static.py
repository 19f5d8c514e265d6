"""All static metrics of one snapshot: per file, per symbol, and for the snapshot."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

from benchwright.files.nofollow import CACHE_FOLDERS, TreeWalk, read_regular
from benchwright.metrics import astgrep, graph, lint, waste
from benchwright.metrics.clones import find_clones
from benchwright.metrics.languages import analyzers
from benchwright.metrics.languages.base import FileAnalysis, LanguageAnalyzer
from benchwright.metrics.models import (
    FileMetrics,
    GraphMetrics,
    LineCounts,
    SnapshotMetrics,
    SymbolMetrics,
)
from benchwright.metrics.scbcheck import ScbCheckResult, measure
from benchwright.metrics.tools import versions
from benchwright.protocols import Runtime
from benchwright.stats.estimates import gini

# Mass: how far callables exceed a healthy value, weighted by their size.
MASS_BASELINES = {"complexity": 5, "branches": 4, "comparisons": 4}
HIGH_CC, EXTREME_CC = 10, 30
_SKIP_DIRS = {*CACHE_FOLDERS, ".evaluation_tests"}


def source_files(root: Path, analyzer: LanguageAnalyzer) -> list[str]:
    """The analyser's regular files under `root` (see `files_with_suffixes`)."""
    return files_with_suffixes(root, analyzer.suffixes)


def files_with_suffixes(root: Path, suffixes: Collection[str]) -> list[str]:
    """Regular files under `root` with one of these suffixes, relative, sorted; caches,
    virtualenvs and the graders' tests skipped, links never followed (a link named `x.py` is
    not a source file)."""
    walk = TreeWalk(root, prune=lambda rel: rel.rpartition("/")[2] in _SKIP_DIRS)
    return sorted(entry.rel for entry in walk
                  if entry.kind == "file" and PurePosixPath(entry.rel).suffix in suffixes)


def analyze_snapshot(root: Path, entry: str | None = None, *, scbench: bool = True,
                     runtime: Runtime | None = None) -> SnapshotMetrics:
    """Every metric of the snapshot at `root`; `entry` (relative) roots the import graph.
    `scbench`: also SCBench's figures, by scb-check in the sandbox (`runtime`; None: bubblewrap),
    which runs in its own process while our own analysis runs here."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=1) as pool:
        scb = pool.submit(measure, root, runtime) if scbench else None
        result = _combine(root, *_analyses(root), entry)
        figures: ScbCheckResult | None = scb.result() if scb is not None else None
    return result.model_copy(update={"scbench": figures,
                                     "seconds": round(time.perf_counter() - started, 3)})


def _analyses(root: Path) -> tuple[list[str], list[FileAnalysis]]:
    """Each source file's analysis, by the analyser of its language."""
    analyses: list[FileAnalysis] = []
    files: list[str] = []
    for analyzer in analyzers():
        for rel in source_files(root, analyzer):
            data = read_regular(root, rel)
            if data is None:  # replaced by a link or a special file since the walk
                continue
            text = data.decode("utf-8", errors="replace")
            analyses.append(analyzer.analyze(rel, text))
            files.append(rel)
    return files, analyses


def _combine(root: Path, files: list[str], analyses: list[FileAnalysis],
             entry: str | None) -> SnapshotMetrics:
    symbols = [s for a in analyses for s in a.symbols]
    callables = [s for s in symbols if s.kind != "class"]
    lines = _total_lines(analyses)
    findings = lint.run_ruff(root, files)
    lint_counts = Counter(f.code for f in findings)
    ag = astgrep.run_astgrep(root, files)
    definitions = [d for a in analyses for d in a.definitions]
    calls: Counter[str] = sum((a.calls for a in analyses), Counter())
    clones = find_clones([c for a in analyses for c in a.clones])
    clone_lines = sum(c.lines * (len(c.instances) - 1) for c in clones)
    single_use = waste.single_use(definitions, calls)
    wrappers = waste.trivial_wrappers(definitions)
    n_callables = max(len(callables), 1)
    cc_high = sum(HIGH_CC < s.complexity <= EXTREME_CC for s in callables)
    cc_extreme = sum(s.complexity > EXTREME_CC for s in callables)
    loc = max(lines.loc, 1)
    return SnapshotMetrics(
        tools=versions(), files=_with_lint(analyses, findings), symbols=symbols, lines=lines,
        mi_mean=_mi_mean(analyses), cc_bands=dict(sorted(Counter(s.band for s in callables)
                                                         .items())),
        cc_high=cc_high, cc_extreme=cc_extreme,
        cc_gini=round(gini([s.complexity for s in callables]), 4),
        lint=dict(lint_counts.most_common()), lint_weighted=lint.weighted(lint_counts),
        lint_fixable=sum(f.fixable for f in findings), astgrep_findings=ag.findings,
        astgrep=ag.by_category, astgrep_rules=ag.by_rule, astgrep_weighted=ag.weighted,
        clones=clones, clone_instances=sum(len(c.instances) for c in clones),
        clone_lines=clone_lines, clone_ratio=round(clone_lines / max(lines.sloc, 1), 4),
        single_use_functions=single_use, trivial_wrappers=wrappers,
        single_method_classes=waste.single_method_classes([c for a in analyses
                                                            for c in a.classes]),
        graph=_graph(analyses, entry),
        bw_verbosity=round(sum(ag.by_rule.values()) / loc + len(wrappers) / n_callables
                        + len(single_use) / n_callables, 4),
        bw_erosion=round((cc_high + 2 * cc_extreme) / n_callables
                      + sum(lint_counts.values()) / loc, 4),
        mass=_mass(callables),
    )


def _with_lint(analyses: list[FileAnalysis], findings: list[lint.Finding]) -> list[FileMetrics]:
    """Each file's metrics with its own ruff findings."""
    found = Counter(f.file for f in findings)
    fixable = Counter(f.file for f in findings if f.fixable)
    return [a.metrics.model_copy(update={"lint": found[a.metrics.path],
                                         "lint_fixable": fixable[a.metrics.path]})
            for a in analyses]


def _total_lines(analyses: list[FileAnalysis]) -> LineCounts:
    totals: Counter[str] = Counter()
    for analysis in analyses:
        totals.update(analysis.metrics.lines.model_dump())
    return LineCounts(**totals)


def _mi_mean(analyses: list[FileAnalysis]) -> float:
    weights = [(a.metrics.mi, a.metrics.lines.sloc) for a in analyses
               if a.metrics.parse_error is None]
    total = sum(w for _, w in weights)
    return round(sum(mi * w for mi, w in weights) / total, 3) if total else 0.0


def _mass(callables: list[SymbolMetrics]) -> dict[str, float]:
    return {measure: round(sum(max(0, getattr(s, measure) - base) * math.sqrt(s.statements)
                               for s in callables), 3)
            for measure, base in MASS_BASELINES.items()}


def _graph(analyses: list[FileAnalysis], entry: str | None) -> GraphMetrics:
    paths = {a.metrics.path for a in analyses}
    edges = {a.metrics.path: graph.resolve_imports(a.metrics.path, a.imports, paths)
             for a in analyses}
    sloc = {a.metrics.path: a.metrics.lines.sloc for a in analyses}
    return graph.graph_metrics(entry if entry in paths else None, edges, sloc)
