"""Result models of the code-quality metrics (file `quality_analysis/metrics.json`)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, Field

from benchwright.metrics.scbcheck import ScbCheckResult

CCBand = Literal["A", "B", "C", "D", "E", "F"]


class LineCounts(BaseModel):
    """radon's raw counts."""

    loc: int = 0
    """Physical lines."""
    lloc: int = 0
    """Logical lines."""
    sloc: int = 0
    """Source lines (not blank, not only comments or docstrings)."""
    comments: int = 0
    """Lines with a comment."""
    multi: int = 0
    """Lines in multi-line strings."""
    blank: int = 0
    """Blank lines."""
    single_comments: int = 0
    """Lines holding only a comment."""


class SymbolMetrics(BaseModel):
    """One function, method or class."""

    name: str
    """Qualified name inside its file, e.g. `Store.put`."""
    kind: Literal["function", "method", "class"]
    """What it is."""
    file: str
    """Its file, relative to the snapshot."""
    start: int
    """First line."""
    end: int
    """Last line."""
    complexity: int
    """Cyclomatic complexity (radon's)."""
    band: CCBand
    """radon's rank: A <= 5, B <= 10, C <= 20, D <= 30, E <= 40, F above."""
    statements: int
    """Statements in its body (nested ones included)."""
    branches: int
    """if / for / while / try / with / match statements in it."""
    comparisons: int
    """Comparison operators in it."""
    body_hash: str
    """Hash of its body with names and literals kept: a changed body changes it."""
    max_nesting_depth: int | None = None
    """Deepest nesting of control blocks (if, for, while, with, try, match; an `elif` is not a
    level) inside it. None in metrics written before this field (also the four below)."""
    control_blocks: int | None = None
    """Control blocks directly in its body (not nested in another)."""
    exception_scaffold: int | None = None
    """`try` statements, `except` clauses and `finally` clauses in it."""
    variables_defined: int | None = None
    """Distinct names (and attributes) assigned to in its body."""
    variables_used: int | None = None
    """Distinct names (and attributes) read in its body, outside assignment targets."""

    @property
    def lines(self) -> int:
        """Lines it spans, first to last."""
        return self.end - self.start + 1


class FileMetrics(BaseModel):
    """One source file."""

    path: str
    """Relative to the snapshot."""
    language: str
    """The analyser that read it."""
    lines: LineCounts
    """Line counts."""
    mi: float
    """Maintainability index (radon, comments counted as in radon's default)."""
    mi_rank: Literal["A", "B", "C"]
    """radon's MI rank: A >= 19, B > 9, else C."""
    symbols: int
    """Functions, methods and classes in it."""
    parse_error: str | None = None
    """Why the file could not be parsed, if it could not (it then counts lines only)."""
    variables: int | None = None
    """Module-level names assigned (`X = ...`, `X: T = ...`, `type X = ...`). None in metrics
    written before this field (also the three below)."""
    imports: int | None = None
    """Imported modules: one per name of an `import`, one per `from ... import`."""
    lint: int | None = None
    """ruff findings in this file."""
    lint_fixable: int | None = None
    """Of them, those ruff can fix."""


class AstGrepFinding(BaseModel):
    """One ast-grep finding."""

    rule: str
    """The rule's id."""
    category: str
    """Its category (complexity, style, verbosity, safety, performance, types, naming)."""
    weight: int
    """Its weight."""
    severity: str
    """ast-grep's severity (hint, info, warning, error)."""
    file: str
    """The file, relative to the snapshot."""
    line: int
    """First line, from 1."""
    column: int
    """First column, from 0."""
    end_line: int
    """Last line, from 1."""
    end_column: int
    """Column after the end, from 0."""


class Clone(BaseModel):
    """A group of code blocks identical up to names and literals."""

    kind: str
    """The block kind (function, if, for, ...)."""
    lines: int
    """Lines of one instance."""
    instances: list[str]
    """`file:start-end` of each instance."""


class GraphMetrics(BaseModel):
    """The import graph of modules reachable from the entry file."""

    entry: str | None
    """The entry file, relative to the snapshot (None if absent)."""
    modules: int = 0
    """Modules reachable from the entry file (itself included)."""
    edges: int = 0
    """Import edges between them."""
    cyclic_dependency_mass: float = 0.0
    """Share of reachable lines of code in modules that sit on an import cycle."""
    propagation_cost: float = 0.0
    """Density of the transitive closure (reflexive): how far a change can ripple, 0..1."""
    dependency_entropy: float = 0.0
    """Normalised entropy of fan-in over reachable modules, 0 (one hub) .. 1 (even)."""


class SnapshotMetrics(BaseModel):
    """`quality_analysis/metrics.json`: every metric of one snapshot."""

    format: Literal["benchwright.metrics/1", "benchwright.metrics/2"] = "benchwright.metrics/2"
    """The file's format and version (2: SCBench's figures by scb-check in `scbench`; our own
    composites renamed `bw_verbosity` and `bw_erosion`, read from version 1's `verbosity` and
    `erosion`)."""
    tools: dict[str, str]
    """Versions of the tools used (radon, ruff, ast-grep)."""
    files: list[FileMetrics]
    """Per file."""
    symbols: list[SymbolMetrics]
    """Per function, method and class."""
    lines: LineCounts
    """Totals over files."""
    mi_mean: float
    """Mean MI over files, weighted by SLOC."""
    cc_bands: dict[str, int]
    """Callables per CC band."""
    cc_high: int
    """Callables with CC above 10 (bands C and D)."""
    cc_extreme: int
    """Callables with CC above 30 (bands E and F)."""
    cc_gini: float
    """Concentration (Gini) of CC over callables: 0 even, 1 all in one."""
    lint: dict[str, int]
    """ruff findings per rule code."""
    lint_weighted: float
    """Findings times each rule family's weight."""
    lint_fixable: int | None = None
    """ruff findings it can fix (None in metrics written before this field)."""
    astgrep: dict[str, int]
    """ast-grep findings per category."""
    astgrep_rules: dict[str, int]
    """ast-grep findings per rule id."""
    astgrep_weighted: float
    """Findings times each rule's weight."""
    astgrep_findings: list[AstGrepFinding] | None = None
    """Every finding with its place (None in metrics written before this field)."""
    clones: list[Clone]
    """Clone groups."""
    clone_instances: int
    """Blocks that have a clone."""
    clone_lines: int
    """Lines in cloned blocks beyond the first instance of each group."""
    clone_ratio: float
    """clone_lines / SLOC."""
    single_use_functions: list[str]
    """Functions called from exactly one place."""
    trivial_wrappers: list[str]
    """Functions whose body is a single call (after an optional docstring)."""
    single_method_classes: list[str]
    """Classes with exactly one method (besides `__init__`)."""
    graph: GraphMetrics
    """Import graph metrics from the entry file."""
    bw_verbosity: float = Field(validation_alias=AliasChoices("bw_verbosity", "verbosity"))
    """benchwright's own composite (SCBench's pre-1.0 definition): ast-grep findings / LOC +
    trivial wrappers / callables + single-use / callables. Not SCBench's verbosity: see
    `scbench`."""
    bw_erosion: float = Field(validation_alias=AliasChoices("bw_erosion", "erosion"))
    """benchwright's own composite: (cc_high + 2 cc_extreme) / callables + ruff findings / LOC.
    Not SCBench's erosion: see `scbench`."""
    scbench: ScbCheckResult | None = None
    """SCBench's figures (verbosity, erosion, cognitive erosion and their parts) by scb-check,
    or why they are unknown; None in metrics written before version 2, or not asked for."""
    mass: dict[str, float] = Field(default_factory=dict)
    """Sum over callables of max(0, value - baseline) * sqrt(statements), per measure."""
    seconds: float = 0.0
    """Time taken."""
