"""The files of a web run and the trial interface: all versioned pydantic models.

`TrialRequest`, `AgentSpec` and `TrialOutcome` are the browser track's own models
(`benchwright.web.browser.trial_models`, re-exported here): a `TrialRunner`
(benchwright.protocols) takes the request, drives one attempt, writes `network.har` and
`history.json` into `trial_dir`, and returns the outcome. The run then writes
`agent_response.json` (the response adapter) and `metrics.json`, and journals the trial.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from benchwright.llm.models import LlmTraffic
from benchwright.runs.manifest import ManifestHeader
from benchwright.stats.estimates import Estimate
from benchwright.web.browser.trial_models import (
    AgentName,
    AgentSpec,
    TrialOutcome,
    TrialRequest,
    TrialStatus,
)
from benchwright.web.evaluation.final_response import ResponseSource
from benchwright.web.evaluation.response_adapter import ParseMethod, ResponseStatus
from benchwright.web.evaluation.scoring import Count, Score
from benchwright.web.evaluation.tasks import TaskType
from benchwright.web.scorecard.figures import WebTotals
from benchwright.web.trials.extraction import ExtractorConfig

__all__ = ["AgentName", "AgentSpec", "PlannedTask", "TrialMetrics", "TrialOutcome", "TrialRecord",
           "TrialRequest", "TrialStatus", "WebManifest", "WebRunConfig", "WebRunResult"]


class TrialMetrics(BaseModel):
    """`metrics.json` of a trial (readable as `benchwright.web.evaluation.scoring.TaskMetrics`)."""

    format: Literal["benchwright.web-trial-metrics/1"] = "benchwright.web-trial-metrics/1"
    """The file's format and version."""
    steps: int
    """Agent steps taken."""
    tokens: int
    """Input plus output tokens."""
    input_tokens: int
    """Model input tokens."""
    output_tokens: int
    """Model output tokens."""
    cached_input_tokens: int = 0
    """Of the input tokens, those read from the provider's cache."""
    cost_usd: float | None
    """Model cost in US dollars; None: unknown (tokens spent on a model with no price)."""
    duration_s: float
    """Wall-clock seconds of the trial, as the runner measured it."""
    model_time_s: float = 0.0
    """Of those, seconds spent waiting for the model; the rest is harness overhead."""
    harness_s: float = 0.0
    """Of the overhead, benchwright's own set-up and wrap-up (the rest is browser-use's)."""
    trial_status: TrialStatus
    """How the trial ended."""
    errors: list[str]
    """Errors reported during the trial."""
    response_status: ResponseStatus
    """The status written to agent_response.json."""
    answer_parse: ParseMethod
    """How retrieved_data was read from the final answer."""
    answer_ambiguous: bool
    """The adapter was unsure of its reading."""
    agent_error: str | None = None
    """Why the trial is the agent's own error, when the harness can name it (a final response
    that failed the schema)."""
    refused_requests: list[str] = Field(default_factory=list)
    """URLs the harness refused to reach (a host that is none of the sites', or a page that is
    not http(s): `file:`, `chrome:`, ...; the first 20)."""
    response_source: ResponseSource = ResponseSource.ADAPTER
    """Which path wrote agent_response.json: the agent's validated final response (`schema`)
    or the response adapter reading its free text (`adapter`)."""


class WebRunConfig(BaseModel):
    """Everything that decides what a web run does; saved in the manifest, reused on resume."""

    suite: str
    """local, webarena-verified, or the path of a tasks JSON file."""
    task_ids: list[int]
    """The tasks, in schedule order."""
    agent: AgentSpec
    """The agent (its script field unset: scripts are per task)."""
    scripts_dir: Path | None = None
    """Folder of `<task_id>.yaml` action scripts for the scripted agent; None: the suite's."""
    trials: int = Field(default=1, ge=1, le=1000)
    """Attempts per task (the bound of `--trials`)."""
    max_steps: int = Field(default=30, ge=1, le=10_000)
    """Agent steps per trial (the bound of `--step-limit`)."""
    trial_timeout_s: float = Field(default=1800.0, ge=1, le=86_400)
    """Wall-clock seconds per trial (`--trial-timeout`); past them the trial ends as a timeout."""
    env_config: Path | None = None
    """The site configuration (YAML) for suites that are not served by benchwright."""
    runner: str = "browser"
    """The registered trial runner."""
    extractor: ExtractorConfig | None = None
    """The LLM step of the response adapter; None: heuristics only."""
    keep_browser_files: bool = False
    """Keep each trial's browser profile and downloads."""
    cookie_files: list[Path] = Field(default_factory=list)
    """Cookie files (`benchwright web auth capture`) set in every trial before it navigates."""
    concurrency_per_site: int = Field(default=1, ge=1)
    """Read-only trials (RETRIEVE, NAVIGATE) of one site worker run this many at a time, each
    in its own browser; a MUTATE trial always runs alone."""
    llm: LlmTraffic | None = None
    """The agent's model calls recorded into a cassette (`--llm-record DIR`) or answered from
    one (`--llm-replay DIR`); None: the agent calls its endpoint directly."""


class PlannedTask(BaseModel):
    """A task of the run, with the site worker it belongs to."""

    task_id: int
    """The task."""
    sites: list[str]
    """The sites it touches."""
    group: str
    """The site worker that runs it (its first site)."""
    task_type: TaskType
    """RETRIEVE, MUTATE or NAVIGATE (MUTATE trials dirty their sites)."""


class WebManifest(ManifestHeader):
    """`manifest.json` of a web run, written before any trial (the kernel's header, then the
    web track's fields)."""

    format: Literal["benchwright.web-run/1"] = "benchwright.web-run/1"
    """The file's format and version."""
    track: Literal["web"] = "web"
    """The track that owns the run (`benchwright.runs.open_run`); runs written before this
    field are told by their exact `format`."""
    config: WebRunConfig
    """The run's configuration."""
    tasks: list[PlannedTask] = Field(min_length=1)
    """The tasks and their site workers, in schedule order."""
    dataset_file: Path | None = None
    """The tasks JSON the evaluator scores against; None for the 812 official tasks."""
    data_checksum: str
    """sha256 of the dataset at the start."""
    site_urls: dict[str, list[str]] = Field(default_factory=dict)
    """Every base URL each site had during the run (a served suite gets new ports on resume)."""


class TrialRecord(BaseModel):
    """One line of the run's journal: a finished trial, every file written."""

    format: Literal["benchwright.web-trial/1"] = "benchwright.web-trial/1"
    """The record's format and version."""
    task_id: int
    """The task."""
    trial: int
    """The trial, from 1."""
    group: str
    """The site worker that ran it."""
    status: TrialStatus
    """How the trial ended."""
    response_status: ResponseStatus
    """The status written to agent_response.json."""
    steps: int
    """Agent steps."""
    duration_s: float
    """Seconds."""
    reset_before: list[str] = Field(default_factory=list)
    """Sites reset just before this trial."""
    finished_at: str
    """When the record was written (UTC, ISO 8601)."""
    started_at: str | None = None
    """When the trial started, under its sites' locks (UTC, ISO 8601 to the microsecond)."""
    ended_at: str | None = None
    """When its files were written, still under the locks (UTC, to the microsecond)."""


class WebRunResult(BaseModel):
    """`result.json` of a web run: totals after scoring."""

    format: Literal["benchwright.web-run-result/2"] = "benchwright.web-run-result/2"
    """The file's format and version (2: dates, identity, rates with CIs, totals)."""
    run_dir: Path
    """The run directory."""
    created_at: str | None = None
    """When the run started (UTC, ISO 8601)."""
    finished_at: str | None = None
    """When its last trial was journaled."""
    benchwright_version: str | None = None
    """The version that started the run."""
    suite: str | None = None
    """The suite."""
    agent: str | None = None
    """The agent."""
    model: str | None = None
    """Its model."""
    n_tasks: Count
    """Tasks in the run."""
    n_trials: Count
    """Trials scored."""
    n_passed: Count
    """Trials the evaluator scored 1."""
    n_errors: Count
    """Trials scored as errors (missing or malformed files, evaluator errors)."""
    pass_rate: Score
    """n_passed / n_trials."""
    pass_rate_ci: Estimate | None = None
    """The pass rate over tasks with its 95% CI (tasks resampled)."""
    macro_average: Estimate | None = None
    """Template macro average with its 95% CI (templates resampled)."""
    pass_at_k: dict[int, Score] = Field(default_factory=dict)
    """k -> pass@k (several trials only)."""
    pass_hat_k: dict[int, Score] = Field(default_factory=dict)
    """k -> pass^k, all k trials pass (several trials only)."""
    totals: WebTotals | None = None
    """Cost, tokens and time."""
    complete: bool
    """Every planned trial finished."""
    infra_errors: list[str] = Field(default_factory=list)
    """Trials the harness failed (not the agent: left out of every figure, redone by
    `run web --resume`), as `task T trial N: error`."""
    report: Path
    """The markdown report."""
    llm: LlmTraffic | None = None
    """The cassette the agent's model calls were recorded into or replayed from (a replayed
    run's usage and cost are the recording's); None: calls went to the endpoint."""

    @model_validator(mode="after")
    def _within_trials(self) -> WebRunResult:
        """Passed and errors are among the trials (a hand-edited result.json is refused)."""
        if self.n_passed + self.n_errors > self.n_trials:
            raise ValueError("n_passed + n_errors is more than n_trials")
        for estimate in (self.pass_rate_ci, self.macro_average):
            if estimate is not None and not all(
                    0 <= x <= 1 for x in (estimate.value, estimate.low, estimate.high)):
                raise ValueError("a rate's estimate is outside 0 to 1")
        return self
