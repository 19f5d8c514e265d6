"""The run statistics SCBench keeps at the top level of `result.json`, as SCBench names and nests
them; computed from the SCBench rows by `coding/attempts/scbench/summary.py`."""

from __future__ import annotations

from pydantic import BaseModel, Field


class MetricStats(BaseModel):
    """One figure over checkpoints (or problems)."""

    mean: float | None = None
    """Mean (None over no values)."""
    stddev: float | None = None
    """Sample standard deviation (None under two values)."""
    min: float | None = None
    """Smallest."""
    max: float | None = None
    """Largest."""
    median: float | None = None
    """Median."""
    count: int = 0
    """Values."""


class PerLevel(BaseModel):
    """A figure per checkpoint and per problem (a problem's figure is the sum of its rows)."""

    checkpoint: MetricStats = Field(default_factory=MetricStats)
    """Over checkpoints."""
    problem: MetricStats = Field(default_factory=MetricStats)
    """Over problems."""


class CostStats(PerLevel):
    """Cost in US dollars."""

    total: float | None = 0.0
    """Summed over every row; None when a row's cost is unknown (its model has no price)."""


class TokenMeans(BaseModel):
    """Mean tokens of each kind."""

    input: float = 0.0
    """Prompt tokens not read from a cache."""
    output: float = 0.0
    """Generated tokens."""
    cache_read: float = 0.0
    """Prompt tokens read from a cache."""
    cache_write: float = 0.0
    """Tokens written to a cache (benchwright records none: 0)."""
    reasoning: float = 0.0
    """Reasoning tokens (benchwright records none: 0)."""


class TokenStats(BaseModel):
    """Token totals, and means per checkpoint and per problem."""

    input: int = 0
    """Prompt tokens not read from a cache."""
    output: int = 0
    """Generated tokens."""
    cache_read: int = 0
    """Prompt tokens read from a cache."""
    cache_write: int = 0
    """Tokens written to a cache."""
    reasoning: int = 0
    """Reasoning tokens."""
    problem: TokenMeans = Field(default_factory=TokenMeans)
    """Means of the per-problem sums."""
    checkpoint: TokenMeans = Field(default_factory=TokenMeans)
    """Means per checkpoint."""


class PassRatesByType(BaseModel):
    """Mean pass rate per test group (rows without tests of a group are left out of it)."""

    core: float = 0.0
    """Core."""
    total: float = 0.0
    """Every test."""
    error: float = 0.0
    """Error."""
    functionality: float = 0.0
    """Functionality."""
    regression: float = 0.0
    """Regression."""


class PassRates(BaseModel):
    """Pass rates per checkpoint and per problem."""

    problem: PassRatesByType = Field(default_factory=PassRatesByType)
    """Means of each problem's mean."""
    checkpoint: PassRatesByType = Field(default_factory=PassRatesByType)
    """Means over checkpoints."""


class ComplexityStats(BaseModel):
    """Cyclomatic complexity over checkpoints."""

    high_count: MetricStats = Field(default_factory=MetricStats)
    """Callables above 10."""
    high_mean: MetricStats = Field(default_factory=MetricStats)
    """Their mean complexity."""
    max: MetricStats = Field(default_factory=MetricStats)
    """The largest complexity."""


class Ratios(BaseModel):
    """Findings per line of code, over checkpoints."""

    rubric: MetricStats = Field(default_factory=MetricStats)
    """Rubric flags (judged checkpoints only)."""
    lint: MetricStats = Field(default_factory=MetricStats)
    """ruff findings."""
    ast_grep: MetricStats = Field(default_factory=MetricStats)
    """ast-grep findings."""


class Deltas(BaseModel):
    """Percent changes between consecutive checkpoints (infinite ones left out)."""

    lint: MetricStats = Field(default_factory=MetricStats)
    """Of ruff findings."""
    complex: MetricStats = Field(default_factory=MetricStats)
    """Of callables above complexity 10."""
    ast_grep: MetricStats = Field(default_factory=MetricStats)
    """Of ast-grep findings."""
    comparisons: MetricStats = Field(default_factory=MetricStats)
    """Of comparisons."""
    rubric_non_carryover: MetricStats = Field(default_factory=MetricStats)
    """New rubric flags per line of code."""


class ScbenchSummary(BaseModel):
    """SCBench's run statistics (its `RunSummary`), over the rows of checkpoint_results.jsonl."""

    model: str
    """The model (config.yaml's model.name)."""
    thinking: str
    """The thinking setting."""
    prompt: str
    """The prompt template's name."""
    agent_type: str
    """The agent."""
    agent_version: str | None
    """Its version."""
    num_problems: int
    """Problems with at least one row."""
    num_checkpoints: int
    """Rows."""
    costs: CostStats = Field(default_factory=CostStats)
    """Cost."""
    time: PerLevel = Field(default_factory=PerLevel)
    """The agent's seconds (`elapsed`)."""
    tokens: TokenStats = Field(default_factory=TokenStats)
    """Tokens."""
    steps: PerLevel = Field(default_factory=PerLevel)
    """Agent steps."""
    checkpoints_solved: int = 0
    """Rows with pass_rate 1."""
    checkpoints_iso_solved: int = 0
    """Rows with checkpoint_pass_rate 1."""
    checkpoints_core_solved: int = 0
    """Rows with core_pass_rate 1."""
    problem_solved: float = 0.0
    """Problems whose every row has pass_rate 1."""
    problem_partial: float = 0.0
    """Problems with at least one such row (the solved ones included, as SCBench counts)."""
    pct_checkpoints_solved: float = 0.0
    """checkpoints_solved / rows, in percent."""
    pct_checkpoints_iso_solved: float = 0.0
    """checkpoints_iso_solved / rows, in percent."""
    pct_problems_solved: float = 0.0
    """problem_solved / problems, in percent."""
    pct_problems_partial: float = 0.0
    """problem_partial / problems, in percent."""
    pct_checkpoints_core_solved: float = 0.0
    """checkpoints_core_solved / rows, in percent."""
    pass_rates: PassRates = Field(default_factory=PassRates)
    """Pass rates by test group."""
    cc: ComplexityStats = Field(default_factory=ComplexityStats)
    """Complexity."""
    ratios: Ratios = Field(default_factory=Ratios)
    """Findings per line of code."""
    delta: Deltas = Field(default_factory=Deltas)
    """Changes between checkpoints."""
    verbosity: MetricStats = Field(default_factory=MetricStats)
    """SCBench v1.0's verbosity (scb-check's, per checkpoint), over rows where it is known."""
    erosion: MetricStats = Field(default_factory=MetricStats)
    """SCBench v1.0's erosion (scb-check's), over rows where it is known."""
    cog_erosion: MetricStats = Field(default_factory=MetricStats)
    """SCBench v1.0's cognitive erosion (scb-check's), over rows where it is known."""
    bw_verbosity: MetricStats = Field(default_factory=MetricStats)
    """benchwright's own composite (the pre-1.0 harness's `verbosity`): (ast-grep + rubric
    findings) / LOC + trivial wrappers / callables + single-use / callables, over rows with code
    and callables."""
    bw_erosion: MetricStats = Field(default_factory=MetricStats)
    """benchwright's own composite (the pre-1.0 harness's `erosion`): (callables above 10 + 2 x
    above 30) / callables + ruff findings / LOC."""
