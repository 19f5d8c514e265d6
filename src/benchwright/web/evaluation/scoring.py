"""Score a folder of WebArena Verified agent logs offline with the official evaluator.

Layout (the official one): `DIR/<task_id>/{agent_response.json, network.har}`, optionally with a
`metrics.json` beside them; several trials of one task go in `DIR/<task_id>/trial_<k>/`. A folder
with a missing or malformed file is scored as an error (score 0) whose message names the file:
it is never skipped. Writes `eval_result.json` in every task (or trial) folder and
`DIR/eval_summary.json`, both versioned.

Re-scoring is incremental: each eval_result.json records a digest of everything its verdict
depends on (both files, the task, the config, the evaluator environment, benchwright's version);
a record whose digest still matches is reused, and the evaluator is started only when some
attempt needs it (`reuse=False`, `--force` on the command line, re-evaluates everything).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    computed_field,
    model_validator,
)

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_json_atomic, write_text_atomic
from benchwright.files.nofollow import sha256_fd
from benchwright.files.untrusted import (
    decode_untrusted,
    parse_untrusted_json,
    read_untrusted_bytes,
    read_untrusted_json,
    read_untrusted_text,
)
from benchwright.sandbox.environments import BuiltEnv
from benchwright.version import __version__
from benchwright.web.evaluation.evaluator import (
    WORKER_SCRIPT,
    EvalRequest,
    EvalStatus,
    EvaluatorIdentity,
    EvaluatorPool,
    EvaluatorVerdict,
    evaluator_env,
    workers_for,
)
from benchwright.web.evaluation.mismatch import Mismatch, mismatches
from benchwright.web.evaluation.outcomes import Cause, cause_of
from benchwright.web.evaluation.tasks import (
    TaskType,
    Unpassable,
    WebDataset,
    WebTask,
    load_env_dataset,
)
from benchwright.web.sites.config import ENV_PREFIX, ENV_SUFFIX, WebEnvConfig

Count = Annotated[int, Field(ge=0)]
"""A count read back from a file: never negative."""
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""Seconds, dollars: finite and never negative."""
Score = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A score or a rate: from 0 to 1 (no figure over 100% or under 0% can be read back)."""

EVAL_RESULT_FORMAT: Final = "benchwright.web-eval/1"
SUMMARY_FORMAT: Final = "benchwright.web-eval-summary/1"
AGENT_RESPONSE = "agent_response.json"
NETWORK_HAR = "network.har"
METRICS = "metrics.json"
HISTORY = "history.json"
"""The agent's own step history (not scored; kept beside the scored files)."""
EVAL_RESULT = "eval_result.json"
SUMMARY = "eval_summary.json"
TRIAL_PREFIX = "trial_"
MAX_METRICS_BYTES = 1 << 20
INFRA_ERROR = "infra_error.json"
"""In a trial folder instead of agent_response.json: the harness failed there (not the agent);
the attempt is left out of scores and redone by `run web --resume`."""
NO_AGENT_STATUS = "(none)"
MISSING_RESPONSE = "(missing)"
UNPARSEABLE_RESPONSE = "(unparseable)"
MAX_RESPONSE_BYTES = 64 * 2**20
MAX_HAR_BYTES = 2 * 2**30

Progress = Callable[[str], None]


class Evaluating(Protocol):
    """A started evaluator: a verdict per request, in order (`EvaluatorPool`)."""

    @property
    def identity(self) -> EvaluatorIdentity:
        """Which evaluator answers (version, checksums)."""
        ...

    def evaluate_all(self, requests: Iterable[EvalRequest]) -> Iterator[EvaluatorVerdict]:
        """Verdicts in request order."""
        ...


class Scorer(Protocol):
    """How a suite's trials are scored: the official evaluator (`OfficialScorer`), or the one a
    web benchmark plugin brings (`web.runs.suites.Suite.scorer`)."""

    def salt(self, dataset: WebDataset, config: WebEnvConfig) -> str:
        """What every verdict depends on besides the attempt's own files (cached verdicts whose
        salt changed are scored again)."""
        ...

    def start(self, workers: int) -> AbstractContextManager[Evaluating]:
        """An evaluator of `workers` processes, stopped when the block ends."""
        ...


class OfficialScorer:
    """WebArena Verified's evaluator, in its own environment (built on first use)."""

    def __init__(self, python: str | None = None) -> None:
        self.python = python

    @functools.cached_property
    def env(self) -> BuiltEnv:
        """The evaluator's environment."""
        return evaluator_env(self.python)

    def salt(self, dataset: WebDataset, config: WebEnvConfig) -> str:
        """The environment, the dataset, the worker script and the sites' URLs."""
        return _digest_salt(self.env, dataset, config)

    def start(self, workers: int) -> EvaluatorPool:
        """A pool of worker processes."""
        return EvaluatorPool.for_env(self.env, workers)


class ErrorOrigin(StrEnum):
    """Where an error verdict came from."""

    LAYOUT = "layout"
    EVALUATOR = "evaluator"


class TaskMetrics(BaseModel):
    """What `metrics.json` beside an agent log may hold; every field is optional."""

    model_config = ConfigDict(extra="ignore")

    steps: Count | None = None
    """Agent steps (actions) taken."""
    tokens: Count | None = None
    """Model tokens used, input plus output."""
    input_tokens: Count | None = None
    """Model input (prompt) tokens."""
    output_tokens: Count | None = None
    """Model output tokens."""
    cached_input_tokens: Count | None = None
    """Of the input tokens, those read from the provider's cache."""
    cost_usd: Amount | None = None
    """Model cost in US dollars."""
    duration_s: Amount | None = None
    """Wall-clock time of the run in seconds."""
    agent_error: str | None = None
    """Why the agent's run counts as its own error (e.g. a final response that failed the
    schema), when a benchwright run wrote the file; shown with the failing attempts."""
    trial_status: str | None = None
    """How the trial ended (step_limit, agent_error, ...), when a benchwright run wrote the
    file: part of the attempt's cause (`web/evaluation/outcomes.py`)."""
    refused_requests: list[Annotated[str, StringConstraints(max_length=500)]] = Field(
        default_factory=list, max_length=20)
    """URLs the harness refused to reach (a host none of the sites', or no http(s) page:
    `file:`, `chrome:`, ...), when a benchwright run wrote the file: the attempt's failure
    cause is then a refused action."""


class TaskUnit(BaseModel):
    """One scored attempt: a task folder, or one trial folder inside it."""

    task_id: int
    """The task's id (the folder's name)."""
    trial: int
    """1 for the plain layout; k for `trial_<k>`."""
    folder: Path
    """Where agent_response.json and network.har are."""


class TaskEvalRecord(BaseModel):
    """`eval_result.json`: the evaluator's result plus benchwright's fields."""

    format: Literal["benchwright.web-eval/1"] = EVAL_RESULT_FORMAT
    """This file's format and version."""
    task_id: int
    """The task's id."""
    trial: int
    """The trial number (1 without trial folders)."""
    intent_template_id: int
    """The task's template."""
    sites: list[str]
    """The sites the task touches."""
    task_revision: int
    """The task's revision in the dataset."""
    task_type: TaskType
    """RETRIEVE, MUTATE or NAVIGATE."""
    status: EvalStatus
    """success, failure or error."""
    score: Score
    """1 or 0 (errors are 0)."""
    error_msg: str | None = None
    """Why the status is error."""
    error_origin: ErrorOrigin | None = None
    """`layout` (a missing or malformed file) or `evaluator`."""
    agent_status: str
    """The status the agent reported, upper-case, or (missing), (unparseable), (none)."""
    unpassable: Unpassable | None = None
    """Set for tasks that cannot be passed with this evaluator version."""
    evaluators_results: list[dict[str, Any]] = Field(default_factory=list)
    """Each evaluator's result, as the official evaluator reports it."""
    webarena_verified_version: str
    """The evaluator's version."""
    webarena_verified_evaluator_checksum: str
    """sha256 over the evaluator's code."""
    webarena_verified_data_checksum: str
    """sha256 of the dataset file."""
    inputs_digest: str | None = None
    """sha256 over what the verdict depends on; a re-score reuses the record while it matches."""

    @property
    def identity(self) -> EvaluatorIdentity:
        """The evaluator that produced it."""
        return EvaluatorIdentity(version=self.webarena_verified_version,
                                 evaluator_checksum=self.webarena_verified_evaluator_checksum,
                                 data_checksum=self.webarena_verified_data_checksum)


class TaskRow(BaseModel):
    """One line of the summary."""

    task_id: int
    """The task's id."""
    trial: int
    """The trial number."""
    score: Score
    """1 or 0."""
    status: EvalStatus
    """success, failure or error."""
    sites: list[str]
    """The sites the task touches."""
    intent_template_id: int
    """The task's template."""
    task_type: TaskType
    """RETRIEVE, MUTATE or NAVIGATE."""
    unpassable: Unpassable | None = None
    """Set for tasks that cannot be passed with this evaluator version."""
    agent_status: str
    """The status the agent reported (see TaskEvalRecord)."""
    error_origin: ErrorOrigin | None = None
    """Where an error came from."""
    error_msg: str | None = None
    """Why the status is error."""
    metrics: TaskMetrics | None = None
    """From metrics.json, when present."""
    mismatches: list[Mismatch] = Field(default_factory=list)
    """For an attempt that did not pass: what the evaluator expected and what it got."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cause(self) -> Cause:
        """Why it scored what it did: one of the closed set of `web/evaluation/outcomes.py`."""
        return cause_of(self.score, self.error_origin,
                        self.metrics.trial_status if self.metrics else None, self.agent_status)


class Totals(BaseModel):
    """Counts over every scored attempt."""

    n_attempts: Count
    """Scored folders (tasks, or trials)."""
    n_tasks: Count
    """Distinct tasks."""
    n_success: Count
    """Attempts with status success."""
    n_failure: Count
    """Attempts with status failure."""
    n_error: Count
    """Attempts with status error (missing files included)."""
    pass_rate: Score
    """Mean score over attempts."""
    n_unpassable_tasks: Count
    """Distinct tasks flagged unpassable (known or probable)."""
    pass_rate_excluding_unpassable: Score | None
    """Mean score over attempts of passable tasks; None when there are none."""

    @model_validator(mode="after")
    def _adds_up(self) -> Totals:
        """Successes, failures and errors are the attempts (a hand-edited file is refused)."""
        if self.n_success + self.n_failure + self.n_error != self.n_attempts:
            raise ValueError("n_success + n_failure + n_error is not n_attempts")
        if self.n_tasks > self.n_attempts or self.n_unpassable_tasks > self.n_tasks:
            raise ValueError("more tasks than attempts, or more unpassable tasks than tasks")
        return self


class WebEvalSummary(BaseModel):
    """`eval_summary.json`: every attempt's verdict and the totals."""

    format: Literal["benchwright.web-eval-summary/1"] = SUMMARY_FORMAT
    """This file's format and version."""
    output_dir: str
    """The folder that was scored."""
    scored_at: str
    """When, in ISO 8601 UTC."""
    evaluator: EvaluatorIdentity
    """The evaluator's version and checksums."""
    site_urls: dict[str, list[str]]
    """The configured URLs the traces were judged against."""
    tasks: list[TaskRow]
    """One row per attempt, by task id then trial."""
    totals: Totals
    """Counts and pass rates."""
    warnings: list[str] = Field(default_factory=list)
    """Things ignored on the way (unknown task folders, unreadable metrics.json)."""

    @model_validator(mode="after")
    def _rows_are_the_totals(self) -> WebEvalSummary:
        """One row per attempt, each once, the totals theirs."""
        keys = {(row.task_id, row.trial) for row in self.tasks}
        if len(keys) != len(self.tasks):
            raise ValueError("an attempt (task, trial) has two rows")
        if len(self.tasks) != self.totals.n_attempts or sum(
                row.status == "success" for row in self.tasks) != self.totals.n_success:
            raise ValueError("the rows do not add up to the totals")
        return self


@dataclass(frozen=True)
class _Prepared:
    """An attempt with its files checked: a request for the evaluator, or a layout problem."""

    unit: TaskUnit
    task: WebTask
    agent_status: str
    request: EvalRequest | None = None
    problem: str | None = None
    metrics: TaskMetrics | None = None
    digest: str | None = None
    cached: TaskEvalRecord | None = None


def score_output_dir(output_dir: Path, config: WebEnvConfig, *, python: str | None = None,
                     evaluator: Evaluating | None = None,
                     dataset: WebDataset | None = None, reuse: bool = True,
                     progress: Progress | None = None,
                     scorer: Scorer | None = None) -> WebEvalSummary:
    """Score every task folder of `output_dir`, write the result files, return the summary.

    Pass a running `evaluator` (and `dataset`) to score several folders with the same workers;
    `scorer`: a suite's own evaluator (default: the official one, run by `python`).
    """
    dataset = dataset if dataset is not None else load_env_dataset(python)
    scorer = scorer if scorer is not None else OfficialScorer(python)
    units, warnings = discover_units(output_dir, dataset)
    _require_sites(units, dataset, config, output_dir)
    with ExitStack() as stack:
        if evaluator is None and not (reuse and _all_scored_before(units)):
            # started before the attempts are read and hashed, so its start overlaps that work
            evaluator = stack.enter_context(scorer.start(workers_for(len(units))))
        prepared = _prepare_all(units, dataset, config, warnings,
                                scorer.salt(dataset, config) if reuse else None)
        if evaluator is None and _needs_evaluator(prepared):
            evaluator = stack.enter_context(scorer.start(
                workers_for(sum(item.cached is None for item in prepared))))
        identity = evaluator.identity if evaluator else _cached_identity(prepared)
        # the data the verdicts were given: the evaluator's own greeting names its bundled
        # dataset, while a suite of our own is given its file (one hash per run, whichever way)
        identity = identity.model_copy(update={"data_checksum": dataset.data_checksum})
        records = _score(prepared, evaluator, identity, progress)
    summary = _summary(output_dir, config, identity, prepared, records, warnings)
    write_json_atomic(output_dir / SUMMARY, summary.model_dump(mode="json"))
    return summary


def _all_scored_before(units: list[TaskUnit]) -> bool:
    """True when every attempt has an earlier verdict that might still be valid."""
    return all((unit.folder / EVAL_RESULT).is_file() for unit in units)


def _prepare_all(units: list[TaskUnit], dataset: WebDataset, config: WebEnvConfig,
                 warnings: list[str], salt: str | None) -> list[_Prepared]:
    base = EvalRequest(id="", task_id=0, har_path=Path(), dataset=dataset.evaluator_file,
                       config=config.evaluator_environments())
    return [_prepare(unit, dataset.tasks[unit.task_id], base, warnings, salt) for unit in units]


def _needs_evaluator(prepared: list[_Prepared]) -> bool:
    """True when some attempt must be evaluated, or nothing cached tells the evaluator's id."""
    if not any(item.cached for item in prepared):
        return True
    return any(item.request is not None and item.cached is None for item in prepared)


def _cached_identity(prepared: list[_Prepared]) -> EvaluatorIdentity:
    return next(item.cached.identity for item in prepared if item.cached is not None)


def _digest_salt(env: BuiltEnv, dataset: WebDataset, config: WebEnvConfig) -> str:
    """What every verdict of this scoring depends on besides the attempt's own files."""
    return json.dumps([EVAL_RESULT_FORMAT, __version__, env.key, dataset.data_checksum,
                       hashlib.sha256(WORKER_SCRIPT.read_bytes()).hexdigest(),
                       config.evaluator_environments()], sort_keys=True)


def _digest(salt: str, task: WebTask, response_text: str, har_path: Path) -> str:
    hasher = hashlib.sha256(salt.encode())
    hasher.update(f"\0{task.task_id}\0{task.revision}\0".encode())
    hasher.update(hashlib.sha256(response_text.encode()).digest())
    fd = os.open(har_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        hasher.update(bytes.fromhex(sha256_fd(fd)))
    finally:
        os.close(fd)
    return hasher.hexdigest()


def _cached_record(unit: TaskUnit, digest: str) -> TaskEvalRecord | None:
    """The folder's earlier verdict while its inputs are unchanged; one that is out of bounds,
    or names another task or trial than its folder's, is not reused (scored again)."""
    try:
        record = TaskEvalRecord.model_validate_json(
            read_untrusted_bytes(unit.folder / EVAL_RESULT, what=EVAL_RESULT))
    except (UserInputError, ValidationError):
        return None
    if (record.task_id, record.trial) != (unit.task_id, unit.trial):
        return None
    return record if record.inputs_digest == digest else None


def load_summary(output_dir: Path) -> WebEvalSummary:
    """A scored folder's eval_summary.json."""
    path = output_dir / SUMMARY
    if not path.exists():
        raise UserInputError("no eval_summary.json here", path=output_dir,
                             hint=f"score it first: benchwright web eval {output_dir}")
    data = read_untrusted_bytes(path, what=SUMMARY, max_bytes=256 * 2**20)
    try:
        return WebEvalSummary.model_validate_json(decode_untrusted(data, path, what=SUMMARY))
    except ValidationError as exc:
        raise UserInputError(f"not a benchwright web eval summary ({exc.error_count()} "
                             "problems)", path=path, hint="score the folder again") from None


def discover_units(output_dir: Path, dataset: WebDataset) -> tuple[list[TaskUnit], list[str]]:
    """Every attempt folder, by task id and trial, and warnings about folders left out."""
    if not output_dir.is_dir():
        raise UserInputError("the logs folder does not exist", path=output_dir,
                             hint="pass the folder holding <task_id>/agent_response.json")
    units: list[TaskUnit] = []
    warnings: list[str] = []
    for child in sorted(p for p in output_dir.iterdir() if p.is_dir()):
        if child.is_symlink():  # an attempt's files are read where they are, never through a link
            warnings.append(f"{child}: a link, not followed; left out")
            continue
        if not child.name.isdigit() or int(child.name) not in dataset.tasks:
            warnings.append(f"{child}: not a WebArena Verified task id; left out")
            continue
        units.extend(_units_of(child, int(child.name)))
    if not units:
        raise UserInputError("no task folders found", path=output_dir,
                             hint="the layout is DIR/<task_id>/{agent_response.json,network.har}")
    return sorted(units, key=lambda u: (u.task_id, u.trial)), warnings


def _units_of(folder: Path, task_id: int) -> list[TaskUnit]:
    trials = [p for p in folder.glob(f"{TRIAL_PREFIX}*")
              if p.is_dir() and not p.is_symlink() and p.name.removeprefix(TRIAL_PREFIX).isdigit()
              and not (p / INFRA_ERROR).exists()]  # not the agent's attempt: never scored
    if not trials and any(folder.glob(f"{TRIAL_PREFIX}*/{INFRA_ERROR}")):
        return []
    if not trials:
        return [TaskUnit(task_id=task_id, trial=1, folder=folder)]
    return [TaskUnit(task_id=task_id, trial=int(p.name.removeprefix(TRIAL_PREFIX)), folder=p)
            for p in trials]


def _require_sites(units: Iterable[TaskUnit], dataset: WebDataset, config: WebEnvConfig,
                   output_dir: Path) -> None:
    needed = {site for unit in units for site in dataset.tasks[unit.task_id].sites}
    missing = sorted(needed - set(config.configured()))
    if missing:
        names = ", ".join(f"{ENV_PREFIX}{s.name}{ENV_SUFFIX}" for s in missing)
        raise UserInputError(
            f"no URL configured for site(s) {', '.join(missing)} that these logs use",
            path=output_dir, hint=f"give the URLs the browser used in --config ENV.yaml or {names}")


def _prepare(unit: TaskUnit, task: WebTask, base_request: EvalRequest, warnings: list[str],
             salt: str | None) -> _Prepared:
    """Check the attempt's files; with a salt, find a still-valid earlier record."""
    text, parsed, response_problem = read_agent_response(unit.folder / AGENT_RESPONSE)
    har_path = unit.folder / NETWORK_HAR
    base = _Prepared(unit=unit, task=task, agent_status=_agent_status(parsed, response_problem),
                     metrics=_read_metrics(unit.folder / METRICS, warnings))
    problem = response_problem or _har_present(har_path)
    if problem is not None or text is None:
        return replace(base, problem=problem)
    request = base_request.model_copy(update={
        "id": f"{unit.task_id}/{unit.trial}", "task_id": unit.task_id, "agent_response": text,
        "har_path": har_path})
    digest = _digest(salt, task, text, har_path) if salt is not None else None
    cached = _cached_record(unit, digest) if digest is not None else None
    return replace(base, request=request, digest=digest, cached=cached)


def _har_present(path: Path) -> str | None:
    """The cheap check done up front; the HAR's content is checked when the evaluator fails.
    A link is refused, not followed: the run folder is hostile, and the evaluator and the
    digest would otherwise read whatever file it names."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return f"{path}: missing"
    if stat.S_ISLNK(info.st_mode):
        return f"{path}: a link (not followed)"
    if not stat.S_ISREG(info.st_mode):
        return f"{path}: not a regular file"
    return None if info.st_size > 0 else f"{path}: empty file"


def read_agent_response(path: Path) -> tuple[str | None, Any, str | None]:
    """(text, parsed JSON, problem): problem names the file when it is missing or not JSON."""
    if not path.exists():
        return None, None, f"{path}: missing"
    try:  # an agent wrote it: a FIFO, a folder, bad bytes or deep nesting is its failure
        text = read_untrusted_text(path, what=AGENT_RESPONSE, max_bytes=MAX_RESPONSE_BYTES)
    except UserInputError as exc:
        return None, None, f"{path}: unreadable ({exc.message})"
    try:
        return text, parse_untrusted_json(text, path, what=AGENT_RESPONSE), None
    except UserInputError as exc:
        return text, None, f"{path}: {exc.message.removeprefix(AGENT_RESPONSE + ' ')}"


def check_har(path: Path) -> str | None:
    """None for a HAR with at least one entry, else what is wrong with it (naming the file)."""
    if not path.exists():
        return f"{path}: missing"
    try:
        har = read_untrusted_json(path, what=NETWORK_HAR, max_bytes=MAX_HAR_BYTES)
    except UserInputError as exc:
        return f"{path}: {exc.message.removeprefix(NETWORK_HAR + ' ')}"
    log = har.get("log") if isinstance(har, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        return f"{path}: not a HAR file (no log.entries list)"
    if not entries:
        return f"{path}: the HAR has no entries (the evaluator needs at least one)"
    return None


def _agent_status(parsed: Any, problem: str | None) -> str:
    if problem is not None:
        return MISSING_RESPONSE if problem.endswith(": missing") else UNPARSEABLE_RESPONSE
    status = parsed.get("status") if isinstance(parsed, dict) else None
    return status.strip().upper() if isinstance(status, str) and status.strip() else NO_AGENT_STATUS


def _read_metrics(path: Path, warnings: list[str]) -> TaskMetrics | None:
    """metrics.json, or None with a warning when it is unreadable or out of bounds (a negative
    count, a NaN cost: docs/web.md says such a file is ignored, never shown as a figure)."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        return TaskMetrics.model_validate_json(
            read_untrusted_bytes(path, what=METRICS, max_bytes=MAX_METRICS_BYTES))
    except UserInputError as exc:
        warnings.append(f"{path}: unreadable metrics ({exc.message}); ignored")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        warnings.append(f"{path}: unreadable metrics ({where}: {first['msg']}); ignored")
    return None


def _score(prepared: list[_Prepared], evaluator: Evaluating | None,
           identity: EvaluatorIdentity, progress: Progress | None) -> list[TaskEvalRecord]:
    """A record per attempt, in order: earlier verdicts, layout errors, fresh verdicts.

    Each new record is written as soon as it exists: the writing overlaps the workers' scoring,
    and a scoring killed half-way keeps what it finished."""
    to_run = [item for item in prepared if item.cached is None and item.request is not None]
    fresh: dict[int, TaskEvalRecord] = {}
    if to_run:
        assert evaluator is not None
        verdicts = evaluator.evaluate_all(item.request for item in to_run if item.request)
        for item, verdict in zip(to_run, verdicts, strict=True):
            if progress is not None:
                progress(f"task {item.unit.task_id} trial {item.unit.trial}")
            fresh[id(item)] = _write_record(item, _evaluated_record(item, verdict))
    return [item.cached or fresh.get(id(item))
            or _write_record(item, _layout_record(item, identity)) for item in prepared]


def _write_record(item: _Prepared, record: TaskEvalRecord) -> TaskEvalRecord:
    # a cache of a deterministic verdict: atomic, but not fsynced (a file torn by a power cut
    # fails validation or its digest and is simply scored again)
    write_text_atomic(item.unit.folder / EVAL_RESULT, record.model_dump_json(indent=2) + "\n",
                      durable=False)
    return record


def _common(item: _Prepared) -> dict[str, Any]:
    task = item.task
    return {"task_id": task.task_id, "trial": item.unit.trial,
            "intent_template_id": task.intent_template_id, "sites": [str(s) for s in task.sites],
            "task_revision": task.revision, "task_type": task.task_type,
            "agent_status": item.agent_status, "unpassable": task.unpassable}


def _identity_fields(identity: EvaluatorIdentity) -> dict[str, str]:
    return {"webarena_verified_version": identity.version,
            "webarena_verified_evaluator_checksum": identity.evaluator_checksum,
            "webarena_verified_data_checksum": identity.data_checksum}


def _layout_record(item: _Prepared, identity: EvaluatorIdentity) -> TaskEvalRecord:
    return TaskEvalRecord(**_common(item), **_identity_fields(identity), status=EvalStatus.ERROR,
                          score=0.0, error_msg=item.problem, error_origin=ErrorOrigin.LAYOUT)


def _evaluated_record(item: _Prepared, verdict: EvaluatorVerdict) -> TaskEvalRecord:
    """The verdict as a record; an error caused by a malformed HAR is reported as a layout error
    naming the file (the HAR is only parsed here when the evaluator could not use it)."""
    failed = verdict.status is EvalStatus.ERROR
    har_problem = check_har(item.unit.folder / NETWORK_HAR) if failed else None
    origin = ErrorOrigin.LAYOUT if har_problem else ErrorOrigin.EVALUATOR if failed else None
    return TaskEvalRecord(
        **_common(item), **_identity_fields(verdict.evaluator), status=verdict.status,
        score=verdict.score, error_msg=har_problem or verdict.error_msg, error_origin=origin,
        evaluators_results=list(verdict.result.get("evaluators_results") or []),
        inputs_digest=item.digest)


def _summary(output_dir: Path, config: WebEnvConfig, identity: EvaluatorIdentity,
             prepared: list[_Prepared], records: list[TaskEvalRecord],
             warnings: list[str]) -> WebEvalSummary:
    rows = [_row(record, item.metrics) for item, record in zip(prepared, records, strict=True)]
    return WebEvalSummary(
        output_dir=str(output_dir), scored_at=datetime.now(UTC).isoformat(timespec="seconds"),
        evaluator=identity, tasks=rows, totals=compute_totals(rows), warnings=warnings,
        site_urls={str(s): config.site(s).urls for s in config.configured()})


def _row(record: TaskEvalRecord, metrics: TaskMetrics | None) -> TaskRow:
    return TaskRow(task_id=record.task_id, trial=record.trial, score=record.score,
                   status=record.status, sites=record.sites,
                   intent_template_id=record.intent_template_id, task_type=record.task_type,
                   unpassable=record.unpassable, agent_status=record.agent_status,
                   error_origin=record.error_origin, error_msg=record.error_msg, metrics=metrics,
                   mismatches=mismatches(record.evaluators_results) if record.score < 1 else [])


def compute_totals(rows: list[TaskRow]) -> Totals:
    """Counts and pass rates over these rows."""
    passable = [r.score for r in rows if r.unpassable is None]
    return Totals(
        n_attempts=len(rows), n_tasks=len({r.task_id for r in rows}),
        n_success=sum(r.status is EvalStatus.SUCCESS for r in rows),
        n_failure=sum(r.status is EvalStatus.FAILURE for r in rows),
        n_error=sum(r.status is EvalStatus.ERROR for r in rows),
        pass_rate=sum(r.score for r in rows) / len(rows) if rows else 0.0,
        n_unpassable_tasks=len({r.task_id for r in rows if r.unpassable is not None}),
        pass_rate_excluding_unpassable=sum(passable) / len(passable) if passable else None)

