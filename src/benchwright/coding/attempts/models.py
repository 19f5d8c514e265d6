"""The files of a run directory: manifest, journal records, results. All versioned."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwright.coding.agents.base import AgentResult
from benchwright.coding.agents.settings import AgentSettings
from benchwright.coding.agents.toolchain import VERSION_PATTERN
from benchwright.coding.attempts.snapshots import (
    DEFAULT_MAX_SNAPSHOT_FILES,
    DEFAULT_MAX_SNAPSHOT_MB,
)
from benchwright.coding.grading.evaluation import GradeStatus, GradingRule
from benchwright.coding.grading.policies import GroupCount, PassPolicy
from benchwright.coding.problems.config import Group
from benchwright.coding.problems.source import ProblemSource
from benchwright.judge.models import JudgeSettings
from benchwright.llm.models import LlmTraffic
from benchwright.metrics.erosion import QualitySummary
from benchwright.protocols import Limits, Runtime
from benchwright.runs.manifest import ManifestHeader
from benchwright.sandbox.bwrap import get_runtime


class StartFrom(StrEnum):
    """What checkpoint N >= 2 of an attempt starts from (`--start-from`)."""

    CHAIN = "chain"
    """The agent's own workspace as it left checkpoint N-1; a checkpoint that fails the pass
    policy ends the attempt (SCBench's loop)."""
    REFERENCE = "reference"
    """The reference solution of checkpoint N-1 (a counterfactual start); every checkpoint is
    attempted whatever the previous verdict (docs/runs.md, "Counterfactual starts")."""


class RunConfig(BaseModel):
    """Everything that decides what a run does; saved in the manifest and reused on resume."""

    problems_dir: Path
    """The folder holding the problems."""
    problems: list[str] = Field(min_length=1)
    """The problems to run, by folder name (at least one)."""
    agent: str
    """The agent's registered name (a plugin's, or "module:Class")."""
    agent_version: str | None = Field(default=None, pattern=VERSION_PATTERN)
    """The version of the CLI agent installed and run: the one benchwright pins unless
    `--agent-version` asked for another (SCBench's `agent.version`); None for agents that are
    not an installed CLI (oracle, replay, command, mini)."""
    agent_command: str | None = None
    """The shell command of the `command` agent."""
    replay_from: Path | None = None
    """The run whose snapshots the `replay` agent re-applies."""
    model: str | None = None
    """The model name given to the agent and the prompt."""
    prompt: str = "just-solve"
    """The prompt template: a built-in name or a .jinja file."""
    trials: int = Field(default=1, ge=1, le=1000)
    """Independent attempts per problem (the bound of `--trials`)."""
    pass_policy: PassPolicy = PassPolicy.CORE_CASES
    """A checkpoint that fails this policy ends its problem's attempt (chain starts only)."""
    start_from: StartFrom = StartFrom.CHAIN
    """What checkpoints 2 and later start from: the agent's own code or the reference solution
    of the checkpoint before."""
    python: str | None = None
    """Interpreter request for grading environments."""
    limits: Limits = Field(default_factory=Limits)
    """Sandbox limits for grading a checkpoint."""
    agent_limits: Limits = Field(default_factory=Limits)
    """Sandbox limits for the agent's turn."""
    agent_network: bool = False
    """Whether the agent's sandbox has the network (an agent that calls an LLM needs it)."""
    agent_mounts: list[Path] = Field(default_factory=list)
    """Host files or folders bound read-only into the `command` agent's sandbox at the same
    path (`--agent-mount`), so the agent's own scripts are visible there. Absolute."""
    agent_settings: AgentSettings = Field(default_factory=AgentSettings)
    """Limits, endpoint and retries for agents that call an LLM."""
    unsafe_no_sandbox: bool = False
    """Run agents and tests on the host, without bubblewrap."""
    runtime: str = "bwrap"
    """Where every sandboxed step runs (`--runtime`): bwrap, or a container of podman or
    docker on `image_id` (docs/runtimes.md)."""
    image: str | None = None
    """The container image asked for (`--image`): a reference in the engine's store or an
    SCBench environment file; None: the default grading image. Containers only."""
    image_id: str | None = None
    """The image's id (`sha256:...`), resolved once when the run started (never pulled): every
    container of the run starts from it, a resumed run too. Containers only."""
    metrics: bool = True
    """Measure code quality and erosion at every checkpoint."""
    max_snapshot_mb: float | None = Field(default=DEFAULT_MAX_SNAPSHOT_MB, gt=0)
    """Cap on a checkpoint's snapshot, MiB of apparent size; past it the checkpoint fails as
    the agent's error. None: no cap."""
    max_snapshot_files: int | None = Field(default=DEFAULT_MAX_SNAPSHOT_FILES, gt=0)
    """Cap on the files (and links) of a checkpoint's snapshot; past it, as above."""
    judge: JudgeSettings | None = None
    """The LLM judge of code quality (`--judge-model`): each checkpoint judged as it finishes,
    the ones left over at the run's end; None: no judge."""
    llm: LlmTraffic | None = None
    """The agent's model calls recorded into a cassette (`--llm-record DIR`) or answered from
    one (`--llm-replay DIR`); None: the agent calls its endpoint directly."""


class Manifest(ManifestHeader):
    """`manifest.json`: what this run is, written before any work (the kernel's header, then
    the coding track's fields)."""

    format: Literal["benchwright.run/1"] = "benchwright.run/1"
    """The file's format and version."""
    track: Literal["coding"] = "coding"
    """The track that owns the run (`benchwright.runs.open_run`); runs written before this
    field are told by their exact `format`."""
    config: RunConfig
    """The run's configuration."""
    problem_checksums: dict[str, str]
    """SHA-256 over each problem folder's files, at start (or last resume)."""
    problem_sources: dict[str, ProblemSource] = Field(default_factory=dict)
    """Each problem folder's origin and version, at start (or last resume): its git checkout's
    origin URL and commit, when it is in one, and always its content hash (a working tree may
    differ from its commit). Empty in runs made before it was recorded."""
    problem_checkpoints: dict[str, list[str]]
    """Each problem's checkpoints in order, so reports need only the run directory."""
    no_reference: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Reference-start runs: per problem, each checkpoint that is not attempted because the
    checkpoint before it has no reference solution to start from, with why (at start, or last
    resume). Empty for chain runs."""


class CheckpointRecord(BaseModel):
    """One line of a journal: a checkpoint that is finished, with every file written."""

    format: Literal["benchwright.checkpoint/1"] = "benchwright.checkpoint/1"
    """The record's format and version."""
    problem: str
    """The problem."""
    trial: int
    """The trial, from 1."""
    checkpoint: str
    """The checkpoint."""
    index: int
    """Its position in the problem, from 1."""
    prompt_sha256: str
    """The hash of the rendered prompt: a changed spec invalidates the record on resume."""
    agent: AgentResult
    """How the agent's turn went."""
    grade_status: GradeStatus
    """How grading went."""
    counts: dict[Group, GroupCount]
    """Passed and total per group."""
    verdicts: dict[PassPolicy, bool]
    """Every pass policy's verdict."""
    passed: bool
    """Whether the run's pass policy held (if not, the attempt stopped here)."""
    solved: bool
    """Every test passed, regressions included (SCBench's "solved")."""
    iso_solved: bool
    """Every test of this checkpoint's own passed, regressions aside ("iso-solved")."""
    core_solved: bool
    """Every Core test passed ("core-solved")."""
    snapshot_files: int
    """Files in the saved snapshot."""
    snapshot_skipped: list[str] = Field(default_factory=list)
    """Workspace entries left out of the snapshot (FIFOs, sockets, devices, names that are not
    UTF-8), each with why."""
    grade_duration_s: float
    """Seconds spent grading."""
    rules_fired: list[GradingRule] = Field(default_factory=list)
    """The grader's guards that fired on it (what each saw: grading.json's `rules_fired`)."""
    quality: QualitySummary | None = None
    """Code quality and its change since the previous checkpoint (when metrics are on)."""
    finished_at: str
    """When the record was written (UTC, ISO 8601)."""


class InfraErrorRecord(BaseModel):
    """`trial_N/infra_error.json`: the checkpoint where the model provider failed past every retry,
    or whose grading sandbox was killed from outside (the OOM killer, an operator).

    It is not graded and not in the journal; the attempt stops there, is left out of scores,
    and `--resume` deletes this file and runs the checkpoint again."""

    format: Literal["benchwright.infra-error/1"] = "benchwright.infra-error/1"
    """The file's format and version."""
    problem: str
    """The problem."""
    trial: int
    """The trial, from 1."""
    checkpoint: str
    """The checkpoint that could not be run."""
    index: int
    """Its position in the problem, from 1."""
    attempts: int
    """Times the agent was started on it (1 + the re-runs)."""
    agent: AgentResult
    """The last attempt's result (status `infra_error`, what it spent, the error; when grading
    failed, the agent's own result)."""
    grader_error: str | None = None
    """Why grading could not give a verdict (the grading sandbox killed from outside); None when
    the model provider failed."""
    finished_at: str
    """When the last attempt gave up (UTC, ISO 8601)."""


class AttemptErrorRecord(BaseModel):
    """`trial_N/error.json`: why an attempt broke off (a broken problem, a grader that could not
    run). Kept so `eval RUN_DIR` still counts the attempt as broken off; `--resume` deletes it
    and tries again."""

    format: Literal["benchwright.attempt-error/1"] = "benchwright.attempt-error/1"
    """The file's format and version."""
    error: str
    """The error, on one line."""
    finished_at: str
    """When the attempt broke off (UTC, ISO 8601)."""


class ChainSummary(BaseModel):
    """How one problem x trial went."""

    problem: str
    """The problem."""
    trial: int
    """The trial."""
    n_checkpoints: int
    """Checkpoints the problem has."""
    records: list[CheckpointRecord]
    """Finished checkpoints, in order."""
    error: str | None = None
    """Why the attempt could not go on (a broken problem), if it could not."""
    infra_error: InfraErrorRecord | None = None
    """The checkpoint where the provider failed, if it did (the attempt is left out of scores)."""
    start_from: StartFrom = StartFrom.CHAIN
    """What its checkpoints 2 and later started from."""
    no_reference: list[str] = Field(default_factory=list)
    """Reference starts: checkpoints not attempted, for want of a reference solution before."""

    @property
    def finished(self) -> bool:
        """The attempt ran to its end: every checkpoint it can attempt, or (chain starts) up to
        the one that failed."""
        if self.error is not None or self.infra_error is not None:
            return False
        if len(self.records) + len(self.no_reference) == self.n_checkpoints:
            return True
        return (self.start_from is StartFrom.CHAIN
                and bool(self.records and not self.records[-1].passed))

    @property
    def solved(self) -> bool:
        """Every checkpoint solved (an attempt that broke off, even before its first, is not)."""
        return (self.error is None and self.infra_error is None and self.n_checkpoints > 0
                and len(self.records) == self.n_checkpoints
                and all(r.solved for r in self.records))


class RunTotals(BaseModel):
    """What a coding run spent, summed over every agent turn (graded or stopped by the provider)."""

    cost_usd: float | None = 0.0
    """Model cost in US dollars: the known part when some turns' cost is unknown
    (`cost_unknown`), None when every turn's is."""
    cost_unknown: int = 0
    """Agent turns whose cost is unknown (tokens spent on a model with no price): the cost is
    then shown as "$x + unknown" or "unknown", never as 0."""
    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Generated tokens."""
    cached_input_tokens: int = 0
    """Of the prompt tokens, those the provider read from its cache (0 when the agent does not
    tell)."""
    steps: int = 0
    """Agent steps (model calls or actions)."""
    agent_time_s: float = 0.0
    """Wall-clock seconds of the agents' turns, summed (parallel attempts add up)."""
    grading_time_s: float = 0.0
    """Wall-clock seconds of grading, summed."""


class RunResult(BaseModel):
    """`result.json`: the run's totals, derived from the journals. The file also carries
    SCBench's run statistics beside these fields (`coding/attempts/scbench`); this model leaves
    them aside when it reads the file."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["benchwright.run-result/2"] = "benchwright.run-result/2"
    """The file's format and version (2: rates, totals, dates and the run's identity)."""
    run_dir: Path
    """The run directory."""
    created_at: str | None = None
    """When the run started (UTC, ISO 8601), from the manifest."""
    finished_at: str | None = None
    """When its last checkpoint was journaled (UTC, ISO 8601); None before the first."""
    benchwright_version: str | None = None
    """The version that started the run."""
    agent: str | None = None
    """The run's agent."""
    model: str | None = None
    """The run's model."""
    start_from: StartFrom = StartFrom.CHAIN
    """What checkpoints 2 and later started from (`--start-from`)."""
    n_problems: int
    """Problems in the run."""
    n_trials: int
    """Trials per problem."""
    n_checkpoints: int
    """Checkpoints finished (graded), over all problems and trials."""
    n_checkpoints_planned: int = 0
    """Checkpoints of every scored attempt (problems x trials, attempts stopped by the provider
    left out): the denominator of `checkpoint_solve_rate`."""
    n_checkpoints_solved: int
    """Finished checkpoints with every test passed."""
    n_checkpoints_passed: int
    """Finished checkpoints that met the run's pass policy."""
    n_problems_solved: int
    """Problems with every checkpoint solved in every trial."""
    n_problems_partial: int
    """Problems with at least one checkpoint solved, but not solved."""
    n_attempts: int = 0
    """Scored attempts (problem x trial, those stopped by the provider left out)."""
    n_attempts_solved: int = 0
    """Scored attempts with every checkpoint solved."""
    checkpoint_solve_rate: float | None = None
    """n_checkpoints_solved / n_checkpoints_planned: a checkpoint never reached counts as not
    solved (the report's "checkpoints solved"); None with nothing planned."""
    attempt_solve_rate: float | None = None
    """n_attempts_solved / n_attempts (the report's "problems solved", per attempt)."""
    problem_solve_rate: float | None = None
    """n_problems_solved / n_problems (every trial solved)."""
    totals: RunTotals = Field(default_factory=RunTotals)
    """Cost, tokens and time."""
    n_checkpoints_infra_error: int = 0
    """Checkpoints not graded because the model provider failed (`--resume` redoes them)."""
    complete: bool
    """Whether every attempt ran to its end."""
    errors: list[str] = Field(default_factory=list)
    """Attempts that could not run, and why."""
    infra_errors: list[str] = Field(default_factory=list)
    """Checkpoints stopped by infrastructure errors, and why."""
    llm: LlmTraffic | None = None
    """The cassette the agent's model calls were recorded into or replayed from (a replayed
    run's usage and cost are the recording's); None: calls went to the endpoint."""
    no_reference: list[str] = Field(default_factory=list)
    """Reference-start runs: `problem/checkpoint: why` for each checkpoint not attempted because
    the checkpoint before has no reference solution (counted as not solved, never reached)."""
    agent_errors: list[str] = Field(default_factory=list)
    """Checkpoints where the agent crashed, could not start or timed out, with its message and
    exit code (graded as the agent left the workspace: the agent's failure, not the run's)."""
    n_checkpoints_judged: int = 0
    """Finished checkpoints the LLM judge has judged (rubric.jsonl written)."""
    judge_errors: list[str] = Field(default_factory=list)
    """Checkpoints the LLM judge could not judge, and why (not scored as zero flags;
    `benchwright metrics judge RUN_DIR` tries them again)."""


def runtime_of(config: RunConfig) -> Runtime:
    """The runtime every sandboxed step of the run uses: bubblewrap, a container on the image
    resolved when the run started, or the host under --unsafe-no-sandbox."""
    return get_runtime(config.unsafe_no_sandbox, config.runtime, config.image_id)
