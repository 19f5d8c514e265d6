"""The checkpoint loop for one problem x trial, resumable after a crash at any moment."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from benchwright.coding.agents.atif import write_atif
from benchwright.coding.agents.base import Agent, AgentContext, AgentResult, AgentStatus
from benchwright.coding.attempts import journal
from benchwright.coding.attempts.agent_factory import build_agent
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import (
    AttemptErrorRecord,
    ChainSummary,
    CheckpointRecord,
    InfraErrorRecord,
    RunConfig,
    StartFrom,
    runtime_of,
)
from benchwright.coding.attempts.snapshots import (
    Snapshot,
    SnapshotLimits,
    diff_snapshots,
    take_snapshot,
)
from benchwright.coding.attempts.starts import START, copy_reference, planned, unreachable
from benchwright.coding.grading.artifacts import save_grade_output
from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.grader import GradeOptions, grader_of
from benchwright.coding.grading.policies import GroupCount, PassPolicy
from benchwright.coding.grading.workspace import copy_asset
from benchwright.coding.problems.config import CheckpointConfig, Group, ProblemConfig
from benchwright.coding.problems.loader import load_problem
from benchwright.coding.problems.prompts import prompt_hash, render_prompt, template_text
from benchwright.errors import (
    BenchwrightError,
    EnvironmentUnavailable,
    SandboxKilled,
    SnapshotLimitError,
    is_disk_error,
)
from benchwright.files.atomic import write_json_atomic, write_text_atomic
from benchwright.files.nofollow import copy_tree, remove_tree, shown
from benchwright.files.redaction import Redactor
from benchwright.metrics.erosion import QualitySummary, summarise
from benchwright.metrics.models import SnapshotMetrics
from benchwright.protocols import Runtime
from benchwright.runs.clock import utc_now

# imported where used: the judge, the model proxy and the metrics tools cost start-up time to
# every command that only names a run's models (`run coding --help`, `report`)
if TYPE_CHECKING:
    from benchwright.judge.session import JudgeSession
    from benchwright.llm.proxy import LlmProxy

OnRecord = Callable[[CheckpointRecord | InfraErrorRecord], None]
MAX_INFRA_WAIT_S = 600.0


class ChainJob(BaseModel):
    """One problem x trial of a run: the unit an executor schedules."""

    run_dir: Path
    """The run directory."""
    config: RunConfig
    """The run's configuration."""
    problem: str
    """The problem."""
    trial: int
    """The trial, from 1."""


class _Chain:
    """State shared by the steps of one attempt."""

    def __init__(self, job: ChainJob, problem: ProblemConfig) -> None:
        self.job, self.problem = job, problem
        self.layout = RunLayout(job.run_dir)
        self.checkpoints = problem.ordered_checkpoints()
        self.reference_start = job.config.start_from is StartFrom.REFERENCE
        self.planned = planned(problem, job.config.start_from)
        self.no_reference = unreachable(problem, job.config.start_from)
        template = template_text(job.config.prompt)
        self.prompts = {c.name: _prompt(problem, c, template, job.config, i > 0)
                        for i, c in enumerate(self.checkpoints)}
        self.assets = {a.save_path or a.path: problem.path / a.path
                       for a in problem.static_assets.values()}
        self.work = self.layout.work_dir(job.problem, job.trial)
        self.redactor = Redactor.from_environ(
            urls={"BASE_URL": job.config.agent_settings.base_url})
        self.proxy: LlmProxy | None = None

    @property
    def snapshot_limits(self) -> SnapshotLimits:
        config = self.job.config
        return SnapshotLimits(max_mb=config.max_snapshot_mb, max_files=config.max_snapshot_files)

    @functools.cached_property
    def judge(self) -> JudgeSession | None:
        """The LLM judge, when the run has one (built on first use). One that cannot be built
        (checked before the run, so only a changed environment) judges nothing here: the end
        of the run judges what is left, and says why it cannot."""
        from benchwright.coding.attempts.judging.judge import open_judge

        settings = self.job.config.judge
        try:
            return None if settings is None else open_judge(self.job.run_dir, settings)
        except BenchwrightError:
            return None

    @functools.cached_property
    def options(self) -> GradeOptions:
        # built on first use: planning an attempt needs no sandbox (and no bwrap probe)
        return GradeOptions(runtime=runtime_of(self.job.config),
                            limits=self.job.config.limits, python=self.job.config.python,
                            scratch_root=self.layout.grading_dir)

    def checkpoint_dir(self, name: str) -> Path:
        return self.layout.checkpoint_dir(self.job.problem, self.job.trial, name)

    @property
    def journal_path(self) -> Path:
        return self.layout.journal(self.job.problem, self.job.trial)

    @property
    def infra_path(self) -> Path:
        return self.layout.infra_error(self.job.problem, self.job.trial)


def run_chain(job: ChainJob, on_record: OnRecord = lambda _r: None) -> ChainSummary:
    """Run (or finish) one attempt at a problem; returns every finished checkpoint."""
    try:
        chain = _Chain(job, load_problem(job.config.problems_dir / job.problem))
        records = _valid_prefix(chain)
        if not _finished(chain, records):
            for record in _steps(chain, records):
                on_record(record)
    except BenchwrightError as exc:
        return broken_off(job.run_dir, job.problem, job.trial,
                          Redactor.from_environ().text(exc.one_line()), job.config.start_from)
    return ChainSummary(problem=job.problem, trial=job.trial,
                        n_checkpoints=len(chain.checkpoints), records=records,
                        infra_error=journal.read_infra_error(chain.infra_path),
                        start_from=job.config.start_from, no_reference=list(chain.no_reference))


def plan_attempt(job: ChainJob) -> tuple[int, int]:
    """Cut the attempt back to its valid records, as a resume will; returns how many checkpoints
    are finished and how many it may still run (0 when it is over or cannot run)."""
    try:
        records, left = attempt_prefix(job)
    except BenchwrightError:
        return 0, 0
    return len(records), left


def attempt_prefix(job: ChainJob) -> tuple[list[CheckpointRecord], int]:
    """The attempt's valid records (journal and folders cut back to them, as a resume does) and
    how many checkpoints it may still run (0 when it is over)."""
    chain = _Chain(job, load_problem(job.config.problems_dir / job.problem))
    records = _valid_prefix(chain)
    return records, 0 if _finished(chain, records) else len(chain.planned) - len(records)


def continue_attempt(job: ChainJob, records: list[CheckpointRecord]
                     ) -> Iterator[CheckpointRecord | InfraErrorRecord]:
    """Run the attempt on from `records` (the journal's valid prefix, taken as it is), yielding
    each checkpoint once its files are written and it is journaled in `job.run_dir`."""
    chain = _Chain(job, load_problem(job.config.problems_dir / job.problem))
    yield from _steps(chain, list(records))


def broken_off(run_dir: Path, problem: str, trial: int, error: str,
               start_from: StartFrom = StartFrom.CHAIN) -> ChainSummary:
    """The summary of an attempt that raised; the error is saved so `eval RUN_DIR` keeps it."""
    layout = RunLayout(run_dir)
    saved = AttemptErrorRecord(error=error, finished_at=utc_now())
    write_json_atomic(layout.attempt_error(problem, trial), saved.model_dump(mode="json"))
    return ChainSummary(problem=problem, trial=trial, n_checkpoints=0,
                        records=journal.read_records(layout.journal(problem, trial)),
                        error=error, infra_error=journal.read_infra_error(
                            layout.infra_error(problem, trial)),
                        start_from=start_from)


def _prompt(problem: ProblemConfig, checkpoint: CheckpointConfig, template: str,
            config: RunConfig, is_continuation: bool) -> str:
    return render_prompt(template, spec=problem.render_spec(checkpoint.name),
                         is_continuation=is_continuation, agent=config.agent, model=config.model)


def _valid_prefix(chain: _Chain) -> list[CheckpointRecord]:
    """The journal's records that still hold; the journal and folders are cut back to them."""
    records = journal.read_records(chain.journal_path)
    valid: list[CheckpointRecord] = []
    for record, checkpoint in zip(records, chain.planned, strict=False):
        folder = chain.checkpoint_dir(checkpoint.name)
        if (record.checkpoint != checkpoint.name
                or record.prompt_sha256 != prompt_hash(chain.prompts[checkpoint.name])
                or not (folder / "snapshot").is_dir()
                or not (folder / "evaluation.json").is_file()):
            break
        valid.append(record)
    if len(valid) != len(records) or chain.journal_path.is_file():
        journal.rewrite(chain.journal_path, valid)
    chain.infra_path.unlink(missing_ok=True)
    chain.layout.attempt_error(chain.job.problem, chain.job.trial).unlink(missing_ok=True)
    kept = {r.checkpoint for r in valid}
    for checkpoint in chain.checkpoints:
        if checkpoint.name not in kept:
            remove_tree(chain.checkpoint_dir(checkpoint.name), ignore_errors=True)
    return valid


def _finished(chain: _Chain, records: list[CheckpointRecord]) -> bool:
    if len(records) == len(chain.planned):
        return True
    # a chain ends at a failed checkpoint; a reference start attempts every checkpoint
    return not chain.reference_start and bool(records and not records[-1].passed)


def _steps(chain: _Chain, records: list[CheckpointRecord]
           ) -> Iterator[CheckpointRecord | InfraErrorRecord]:
    """The checkpoints after `records`, each yielded once written and journaled."""
    from benchwright.coding.attempts.traffic import attempt_proxy

    _restore_workspace(chain, None if chain.reference_start else _own_start(chain, records))
    with attempt_proxy(chain.job.config) as (chain.proxy, config):
        yield from _agent_steps(chain, records, build_agent(
            config, chain.problem, chain.options.runtime,
            keep={Path(p).parts[0] for p in chain.assets}))


def _agent_steps(chain: _Chain, records: list[CheckpointRecord], agent: Agent
                 ) -> Iterator[CheckpointRecord | InfraErrorRecord]:
    try:
        for checkpoint in chain.planned[len(records):]:
            index = chain.checkpoints.index(checkpoint) + 1  # its position in the problem
            record = _run_checkpoint(chain, agent, checkpoint, index, records)
            if isinstance(record, InfraErrorRecord):
                write_json_atomic(chain.infra_path, record.model_dump(mode="json"))
                yield record
                break
            journal.append_record(chain.journal_path, record)
            records.append(record)
            yield record
            if not record.passed and not chain.reference_start:
                break
    finally:
        agent.cleanup()
        remove_tree(chain.work, ignore_errors=True)


def _own_start(chain: _Chain, records: list[CheckpointRecord]) -> Path | None:
    """A chain's start: the last finished checkpoint's snapshot (None: an empty workspace)."""
    return chain.checkpoint_dir(records[-1].checkpoint) / "snapshot" if records else None


def _start_of(chain: _Chain, index: int, records: list[CheckpointRecord]) -> Path | None:
    """What the checkpoint at `index` starts from, as a snapshot (None: an empty workspace)."""
    if not chain.reference_start:
        return _own_start(chain, records)
    return chain.checkpoint_dir(chain.checkpoints[index - 1].name) / START if index > 1 else None


def _lay_reference_start(chain: _Chain, index: int, folder: Path) -> None:
    """A reference start: the solution of the checkpoint before, copied to `folder/start`
    (kept with the run: what the agent was given), then laid out as the live workspace."""
    if index > 1:
        copy_reference(chain.problem, chain.checkpoints[index - 2].name, folder / START,
                       set(chain.assets), chain.snapshot_limits)
    _restore_workspace(chain, folder / START if index > 1 else None)


def _restore_workspace(chain: _Chain, start: Path | None) -> None:
    """The live workspace as the snapshot `start` holds it (None: empty), assets in place."""
    remove_tree(chain.work, ignore_errors=True)
    chain.work.parent.mkdir(parents=True, exist_ok=True)
    if start is not None:
        copy_tree(start, chain.work)
    else:
        chain.work.mkdir()
    for save_path, source in chain.assets.items():
        copy_asset(source, chain.work, save_path)


def _run_checkpoint(chain: _Chain, agent: Agent, checkpoint: CheckpointConfig, index: int,
                    records: list[CheckpointRecord]) -> CheckpointRecord | InfraErrorRecord:
    folder = chain.checkpoint_dir(checkpoint.name)
    remove_tree(folder, ignore_errors=True)
    prompt = chain.prompts[checkpoint.name]
    write_text_atomic(folder / "prompt.txt", prompt)
    if chain.reference_start:
        _lay_reference_start(chain, index, folder)
    result, attempts = _act_retrying(agent, chain, checkpoint, index, records)
    write_atif(folder / "agent", f"{chain.job.problem}/trial_{chain.job.trial}/{checkpoint.name}")
    chain.redactor.tree(folder)  # the agent's logs and ATIF copy: no key on disk while grading
    result = result.model_copy(update={"error": chain.redactor.text(result.error or "") or None})
    if result.status is AgentStatus.INFRA_ERROR:
        write_json_atomic(folder / "inference_result.json", result.model_dump(mode="json"))
        return InfraErrorRecord(problem=chain.job.problem, trial=chain.job.trial,
                                checkpoint=checkpoint.name, index=index, attempts=attempts,
                                agent=result, finished_at=utc_now())
    try:
        record = _graded(chain, checkpoint, index, result, folder,
                         _start_of(chain, index, records))
    except (SandboxKilled, EnvironmentUnavailable) as exc:  # not the agent's doing: left out
        # of scores, redone on resume
        chain.redactor.tree(folder)
        return InfraErrorRecord(problem=chain.job.problem, trial=chain.job.trial,
                                checkpoint=checkpoint.name, index=index, attempts=attempts,
                                agent=result, grader_error=exc.message, finished_at=utc_now())
    chain.redactor.tree(folder)  # the snapshot and the grader's output
    if chain.judge is not None:  # judged as it finishes, before it is journaled
        from benchwright.coding.attempts.judging.judge import judge_checkpoint

        continued = records[-1] if records and not chain.reference_start else None
        record = judge_checkpoint(chain.job.run_dir, chain.judge, record,
                                  (chain.job.problem, chain.job.trial), continued,
                                  chain.problem.render_spec(checkpoint.name))
    return record


def _graded(chain: _Chain, checkpoint: CheckpointConfig, index: int, result: AgentResult,
            folder: Path, start: Path | None) -> CheckpointRecord:
    """Snapshot, diff (against what it started from), grade and measure the workspace the
    agent left."""
    prompt = chain.prompts[checkpoint.name]
    snapshot, result = _snapshot(chain, folder, result)
    write_json_atomic(folder / "diff.json", diff_snapshots(start, folder / "snapshot"))
    write_json_atomic(folder / "inference_result.json", result.model_dump(mode="json"))
    output = grader_of(chain.options)(chain.problem, checkpoint, folder / "snapshot", chain.options)
    save_grade_output(output, folder)
    if output.evaluation.sandbox_killed_by is not None:
        raise SandboxKilled(output.evaluation.infrastructure_reason or "the grader was killed")
    quality = _quality(chain, folder, start)
    record = _record(chain, checkpoint, index, prompt, result, output.evaluation, snapshot.files)
    return record.model_copy(update={"quality": quality, "snapshot_skipped": snapshot.skipped})


def _snapshot(chain: _Chain, folder: Path, result: AgentResult) -> tuple[Snapshot, AgentResult]:
    """Save the workspace; one past the limits (or that cannot be read) is the agent's error:
    an empty snapshot is graded in its place, so the checkpoint fails and the attempt ends."""
    try:
        return take_snapshot(chain.work, folder / "snapshot", set(chain.assets),
                             chain.snapshot_limits), result
    except (SnapshotLimitError, OSError) as exc:
        if is_disk_error(exc):  # the machine's, within the limits: the run stops, resume redoes
            remove_tree(folder / "snapshot.tmp", ignore_errors=True)
            raise
        reason = exc.one_line() if isinstance(exc, SnapshotLimitError) else \
            f"the workspace could not be saved: {exc.strerror} ({shown(str(exc.filename))})"
    remove_tree(folder / "snapshot.tmp", ignore_errors=True)
    remove_tree(folder / "snapshot", ignore_errors=True)
    (folder / "snapshot").mkdir()
    error = f"{result.error}; {reason}" if result.error else reason
    return Snapshot(files=0, bytes=0), result.model_copy(
        update={"status": AgentStatus.ERROR, "error": error})


def _quality(chain: _Chain, folder: Path, start: Path | None) -> QualitySummary | None:
    """Metrics of the snapshot, saved under quality_analysis/, and their change since the
    start (a chain: the previous checkpoint; a reference start: the reference solution)."""
    from benchwright.metrics.static import analyze_snapshot

    if not chain.job.config.metrics:
        return None
    metrics = analyze_snapshot(folder / "snapshot", entry=chain.problem.entry_filename,
                               runtime=_scb_check_runtime(chain))
    before = _metrics_before(chain, folder, start)
    diff = json.loads((folder / "diff.json").read_text())
    summary = summarise(metrics, before, diff)
    write_json_atomic(folder / "quality_analysis" / "metrics.json", metrics.model_dump(mode="json"))
    write_json_atomic(folder / "quality_analysis" / "quality.json", summary.model_dump(mode="json"))
    return summary


def _scb_check_runtime(chain: _Chain) -> Runtime | None:
    """Where scb-check runs: the run's runtime when it is bubblewrap or the host (asked for with
    --unsafe-no-sandbox); under a container runtime, bubblewrap (its environment is built for
    this machine's interpreter, not the image's)."""
    runtime = chain.options.runtime
    return runtime if runtime.name in ("bwrap", "unsafe-local") else None


def _metrics_before(chain: _Chain, folder: Path, start: Path | None) -> SnapshotMetrics | None:
    """A chain's previous metrics as saved; a reference start's measured (and saved)."""
    if start is None:
        return None
    if chain.reference_start:
        from benchwright.metrics.static import analyze_snapshot

        before = analyze_snapshot(start, entry=chain.problem.entry_filename,
                                  runtime=_scb_check_runtime(chain))
        write_json_atomic(folder / "quality_analysis" / "start_metrics.json",
                          before.model_dump(mode="json"))
        return before
    saved = start.parent / "quality_analysis" / "metrics.json"
    return SnapshotMetrics.model_validate_json(saved.read_text()) if saved.is_file() else None


def _act_retrying(agent: Agent, chain: _Chain, checkpoint: CheckpointConfig, index: int,
                  records: list[CheckpointRecord]) -> tuple[AgentResult, int]:
    """Run the agent; after an infrastructure error, wait, restore the checkpoint's starting
    files and run it again, up to `infra_retries` times. Returns the result and the attempts."""
    settings = chain.job.config.agent_settings
    folder = chain.checkpoint_dir(checkpoint.name)
    attempt = 0
    while True:
        remove_tree(folder / "agent", ignore_errors=True)
        (folder / "agent").mkdir(parents=True)
        result, diverged = _act(agent, chain, checkpoint, index, folder, attempt + 1)
        attempt += 1
        if result.status is not AgentStatus.INFRA_ERROR or attempt > settings.infra_retries \
                or diverged:  # a replay that diverged diverges again: no re-run
            return result, attempt
        from benchwright.coding.attempts.traffic import replaying

        if not replaying(chain.job.config):  # a replay's provider failures cost no wait
            time.sleep(min(MAX_INFRA_WAIT_S, settings.infra_backoff_s * 2.0 ** (attempt - 1)))
        _restore_workspace(chain, _start_of(chain, index, records))


def _act(agent: Agent, chain: _Chain, checkpoint: CheckpointConfig, index: int,
         folder: Path, attempt: int) -> tuple[AgentResult, bool]:
    """The agent's turn (conversation `attempt` of the checkpoint, when traffic is recorded or
    replayed); whether a replay diverged, which makes it an infrastructure error."""
    key = f"coding/{chain.job.problem}/trial_{chain.job.trial}/{checkpoint.name}/attempt_{attempt}"
    paths = {"<agent>": folder / "agent", "<workspace>": chain.work, "<run>": chain.job.run_dir,
             "<problem>": chain.problem.path}
    from benchwright.coding.attempts.traffic import agent_session

    with agent_session(chain.proxy, key, paths) as diverged:
        result = _agent_turn(agent, chain, checkpoint, index, folder)
    if diverged:
        return result.model_copy(update={"status": AgentStatus.INFRA_ERROR,
                                         "error": diverged[0].one_line()}), True
    return result, False


def _agent_turn(agent: Agent, chain: _Chain, checkpoint: CheckpointConfig, index: int,
                folder: Path) -> AgentResult:
    ctx = AgentContext(problem=chain.job.problem, problem_dir=chain.problem.path,
                       checkpoint=checkpoint.name, trial=chain.job.trial, workspace=chain.work,
                       prompt=chain.prompts[checkpoint.name], prompt_file=folder / "prompt.txt",
                       is_continuation=index > 1, artifacts_dir=folder / "agent")
    start, started_at = time.monotonic(), utc_now()
    try:
        result = agent.act(ctx)
    except BenchwrightError as exc:
        result = AgentResult(status=AgentStatus.ERROR, error=exc.one_line(),
                             duration_s=round(time.monotonic() - start, 3))
    return result.model_copy(update={"started_at": started_at, "ended_at": utc_now()})


def _record(chain: _Chain, checkpoint: CheckpointConfig, index: int, prompt: str,
            result: AgentResult, evaluation: CheckpointEvaluation,
            files: int) -> CheckpointRecord:
    return CheckpointRecord(
        problem=chain.job.problem, trial=chain.job.trial, checkpoint=checkpoint.name,
        index=index, prompt_sha256=prompt_hash(prompt), agent=result, snapshot_files=files,
        finished_at=utc_now(),
        **grade_fields(evaluation, chain.job.config.pass_policy),
    )


def grade_fields(evaluation: CheckpointEvaluation, policy: PassPolicy) -> dict[str, Any]:
    """The parts of a journal record that come from grading (recomputed by `eval RUN_DIR`)."""
    verdicts = evaluation.verdicts
    return {
        "grade_status": evaluation.status, "counts": evaluation.counts, "verdicts": verdicts,
        "passed": verdicts[policy], "solved": verdicts[PassPolicy.ALL_CASES],
        "iso_solved": _iso_solved(evaluation.counts, evaluation.infrastructure_failure),
        "core_solved": verdicts[PassPolicy.CORE_CASES],
        "grade_duration_s": evaluation.total_duration_s,
        "rules_fired": [fired.rule for fired in evaluation.rules_fired],
    }


def _iso_solved(counts: dict[Group, GroupCount], infrastructure_failure: bool) -> bool:
    own = [c for g, c in counts.items() if g is not Group.REGRESSION]
    return (not infrastructure_failure and sum(c.total for c in own) > 0
            and all(c.passed == c.total for c in own))

