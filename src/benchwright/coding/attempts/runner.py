"""Start, resume and finish a run: manifest, jobs on an executor, derived result files."""

from __future__ import annotations

import functools
import hashlib
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchwright.coding.agents.base import AgentStatus
from benchwright.coding.attempts import journal
from benchwright.coding.attempts.chain import (
    ChainJob,
    OnRecord,
    broken_off,
    plan_attempt,
    run_chain,
)
from benchwright.coding.attempts.judging.files import judge_errors, latest_records
from benchwright.coding.attempts.layout import INFRA_ERROR, JOURNAL, RunLayout
from benchwright.coding.attempts.models import (
    ChainSummary,
    CheckpointRecord,
    Manifest,
    RunConfig,
    RunResult,
)
from benchwright.coding.attempts.record_rules import check_config
from benchwright.coding.attempts.remote import Ended, land, remote_attempts, run_remote_attempt
from benchwright.coding.attempts.scbench.export import export_scbench
from benchwright.coding.attempts.starts import unreachable
from benchwright.coding.attempts.totals import last_finished, rate, run_totals
from benchwright.coding.problems.config import ProblemConfig
from benchwright.coding.problems.loader import load_problem
from benchwright.coding.problems.source import ProblemSource, problem_source
from benchwright.errors import UserInputError, WorkersLost
from benchwright.files.atomic import write_json_atomic, write_text_atomic
from benchwright.files.nofollow import remove_tree
from benchwright.files.redaction import Redactor, is_redacted, restore
from benchwright.protocols import Executor
from benchwright.runs.clock import utc_now
from benchwright.runs.layout import require_kind
from benchwright.runs.manifest import read_manifest, with_trials
from benchwright.runs.secret_settings import refuse_secrets
from benchwright.version import __version__


def create_run(config: RunConfig, run_dir: Path) -> Manifest:
    """Write the manifest of a new run; refuse a folder that already holds one."""
    layout = RunLayout(run_dir)
    if layout.manifest.exists():
        raise UserInputError("this folder already holds a run", path=run_dir,
                             hint=f"continue it with --resume {run_dir}, or pick another --out")
    manifest = Manifest(created_at=utc_now(), benchwright_version=__version__, config=config,
                        problem_checksums=_checksums(config),
                        problem_sources=_sources(config),
                        problem_checkpoints=_checkpoint_names(config),
                        no_reference=_no_reference(config),
                        environment=_environment(config))
    # a setting is read back on resume: a key in one is refused, not redacted; only the base
    # URL's credentials are kept by reference (marks restored from the environment on resume)
    refuse_secrets(manifest)
    _redactor(config).write_json(layout.manifest, manifest.model_dump(mode="json"))
    return manifest


def load_manifest(run_dir: Path, check_folders: bool = True) -> Manifest:
    """The manifest of an existing run, or an error that says what is wrong; `check_folders`
    also refuses trial folders of the wrong kind (what reads nothing else may skip it)."""
    manifest = read_manifest(run_dir, Manifest, noun="run", command="benchwright run coding",
                             invalid="manifest.json is not readable")
    check_config(RunLayout(run_dir).manifest, manifest.config.agent, manifest.config.prompt)
    if check_folders:
        _check_trial_folders(RunLayout(run_dir), manifest.config)
    return _with_credentials(manifest)


def check_journals(run_dir: Path, config: RunConfig) -> None:
    """Read every attempt's journals once, so an edited or repeated line is refused before a
    resume does anything (`JournalError`, naming the file and line)."""
    layout = RunLayout(run_dir)
    for problem in config.problems:
        for trial in range(1, config.trials + 1):
            journal.read_records(layout.journal(problem, trial))
            latest_records(layout, problem, trial)


def _with_credentials(manifest: Manifest) -> Manifest:
    """The base URLs' credentials (redacted in the file) back from the environment, if set."""
    config = manifest.config
    settings = config.agent_settings
    if settings.base_url is not None and is_redacted(settings.base_url):
        settings = settings.model_copy(update={"base_url": restore(settings.base_url)})
        config = config.model_copy(update={"agent_settings": settings})
    judge = config.judge
    if judge is not None and judge.base_url is not None and is_redacted(judge.base_url):
        judge = judge.model_copy(update={"base_url": restore(judge.base_url)})
        config = config.model_copy(update={"judge": judge})
    return manifest.model_copy(update={"config": config})


def _redactor(config: RunConfig) -> Redactor:
    """Secret variables and the credentials inside the agent's and the judge's base URLs."""
    return Redactor.from_environ(urls={
        "BASE_URL": config.agent_settings.base_url,
        "JUDGE_BASE_URL": config.judge.base_url if config.judge is not None else None})


def _check_trial_folders(layout: RunLayout, config: RunConfig) -> None:
    """A trial's folder, journal or infrastructure-error record that is there but of the wrong
    kind (replaced by hand: a file for a folder, a folder or a pipe for a file) is refused up
    front, before anything reads or deletes it."""
    for problem in config.problems:
        for trial in range(1, config.trials + 1):
            check_trial_folder(layout, problem, trial)


def check_trial_folder(layout: RunLayout, problem: str, trial: int) -> None:
    """One trial's part of `_check_trial_folders` (what reads only that trial checks only it)."""
    folder = f"{layout.root}/{problem}/trial_{trial}"  # each path built once: a viewer reads
    require_kind(Path(folder), folder=True)          # thousands of these
    require_kind(Path(f"{folder}/{JOURNAL}"), folder=False)
    require_kind(Path(f"{folder}/{INFRA_ERROR}"), folder=False)


def refresh_checksums(run_dir: Path, manifest: Manifest) -> Manifest:
    """On resume: record the problems as they are now (edited specs invalidate checkpoints)."""
    updated = manifest.model_copy(update={
        "problem_checksums": _checksums(manifest.config),
        "problem_sources": _sources(manifest.config),
        "problem_checkpoints": _checkpoint_names(manifest.config),
        "no_reference": _no_reference(manifest.config)})
    _redactor(manifest.config).write_json(RunLayout(run_dir).manifest,
                                          updated.model_dump(mode="json"))
    return updated


def extend_trials(run_dir: Path, trials: int) -> Manifest:
    """Raise the run's trials per problem to `trials` (`run coding --until-decided` adds a
    round): the next resume runs the new trials and keeps every finished one. The caller holds
    the run's lock."""
    manifest = load_manifest(run_dir)
    config = with_trials(manifest.config, trials, run_dir, "problem")
    updated = manifest.model_copy(update={"config": config})
    _redactor(config).write_json(RunLayout(run_dir).manifest, updated.model_dump(mode="json"))
    return updated


def jobs_for(run_dir: Path, config: RunConfig) -> list[ChainJob]:
    """One job per problem x trial."""
    return [ChainJob(run_dir=run_dir, config=config, problem=p, trial=t)
            for p in config.problems for t in range(1, config.trials + 1)]


def run_chain_job(job: ChainJob) -> ChainSummary:
    """The executor's unit of work (module level, so a process pool can pickle it)."""
    from benchwright.executors.local import emit  # multiprocessing: not for `report`'s start-up

    return run_chain(job, on_record=emit)


def execute(run_dir: Path, config: RunConfig, executor: Executor,
            on_summary: Callable[[ChainSummary], None] = lambda _s: None,
            on_plan: Callable[[dict[tuple[str, int], tuple[int, int]]], None] = lambda _p: None,
            on_record: OnRecord = lambda _r: None) -> RunResult:
    """Run every job not yet finished, then write checkpoint_results.jsonl and result.json.
    `on_plan` gets each attempt's (checkpoints done, checkpoints to run), journals trimmed.
    On an executor that shares the filesystem, jobs write the run and report their records to
    the executor's own `on_event`; on one that does not, this process writes what they send
    and calls `on_record`."""
    jobs = jobs_for(run_dir, config)
    on_plan({(j.problem, j.trial): plan_attempt(j) for j in jobs})
    summaries = []
    try:
        if executor.shares_filesystem:
            summaries = _run_jobs(run_dir, executor, jobs, on_summary)
        else:
            _execute_remote(run_dir, config, executor, jobs, on_summary, on_record)
            summaries = saved_attempts(run_dir, config)
    finally:
        remove_tree(RunLayout(run_dir).root / ".work", ignore_errors=True)
    if config.judge is not None:  # what was not judged as it finished (errors, a crash)
        from benchwright.coding.attempts.judging.judge import judge_run  # only a judged run's cost

        judge_run(run_dir, config, config.judge)
        summaries = [s.model_copy(update={"records": journal.read_records(
            RunLayout(run_dir).journal(s.problem, s.trial))}) for s in summaries]
    return finish(run_dir, config, summaries)


def _run_jobs(run_dir: Path, executor: Executor, jobs: list[ChainJob],
              on_summary: Callable[[ChainSummary], None]) -> list[ChainSummary]:
    """The attempts on workers that write the run folder; an attempt whose worker died is an
    infrastructure error of its own (it broke off: `--resume` redoes it), never the run's end."""
    summaries = []
    try:
        for summary in executor.run(run_chain_job, jobs):
            summaries.append(summary)
            on_summary(summary)
    except WorkersLost as exc:
        for job, why in exc.lost:
            assert isinstance(job, ChainJob)
            summary = broken_off(run_dir, job.problem, job.trial,
                                 f"infrastructure error: the worker process running this "
                                 f"attempt was lost ({why})", job.config.start_from)
            summaries.append(summary)
            on_summary(summary)
    return summaries


def _execute_remote(run_dir: Path, config: RunConfig, executor: Executor, jobs: list[ChainJob],
                    on_summary: Callable[[ChainSummary], None], on_record: OnRecord) -> None:
    """The attempts on machines without the run directory: their items written here."""
    redactor = _redactor(config)
    problems = {name: load_problem(config.problems_dir / name) for name in config.problems}
    layout = RunLayout(run_dir)
    for item in executor.stream(run_remote_attempt, remote_attempts(jobs)):
        if isinstance(item, Ended):
            records = journal.read_records(layout.journal(item.problem, item.trial))
            on_summary(saved_attempt(run_dir, config, (item.problem, problems[item.problem]),
                                     item.trial, records))
        elif (record := land(run_dir, item, redactor)) is not None:
            on_record(record)


def finish(run_dir: Path, config: RunConfig, summaries: list[ChainSummary]) -> RunResult:
    """Derive the root result files from the attempts' journals (atomically): our records and
    result.json, and the SCBench-shaped files (coding/attempts/scbench), whose run statistics
    result.json carries beside ours (ours win a shared key: `model`)."""
    order = {(p, t): i for i, (p, t) in enumerate((j.problem, j.trial)
                                                  for j in jobs_for(run_dir, config))}
    summaries = sorted(summaries, key=lambda s: order.get((s.problem, s.trial), 0))
    records = [r for s in summaries for r in s.records]
    layout = RunLayout(run_dir)
    write_text_atomic(layout.records_jsonl, "".join(r.model_dump_json() + "\n" for r in records))
    result = summarise(run_dir, config, summaries)
    manifest = load_manifest(run_dir)
    scbench = export_scbench(run_dir, manifest, summaries, _redactor(config))
    ours = result.model_dump(mode="json")
    write_json_atomic(layout.result_json,
                      ours | {k: v for k, v in scbench.items() if k not in ours})
    return result


def saved_attempts(run_dir: Path, config: RunConfig) -> list[ChainSummary]:
    """Every attempt as its journal and error files say, nothing run again."""
    layout = RunLayout(run_dir)
    summaries = []
    for name in config.problems:
        problem = load_problem(config.problems_dir / name)
        for trial in range(1, config.trials + 1):
            summaries.append(saved_attempt(run_dir, config, (name, problem), trial,
                                           journal.read_records(layout.journal(name, trial))))
    return summaries


def saved_attempt(run_dir: Path, config: RunConfig, problem: tuple[str, ProblemConfig],
                  trial: int, records: list[CheckpointRecord]) -> ChainSummary:
    """One attempt of (problem name, its config) with these records and its error files (a
    broken-off attempt stays so)."""
    layout = RunLayout(run_dir)
    name, loaded = problem
    return ChainSummary(
        problem=name, trial=trial, n_checkpoints=len(loaded.checkpoints), records=records,
        start_from=config.start_from, no_reference=list(unreachable(loaded, config.start_from)),
        error=journal.read_attempt_error(layout.attempt_error(name, trial)),
        infra_error=journal.read_infra_error(layout.infra_error(name, trial)))


def summarise(run_dir: Path, config: RunConfig, summaries: list[ChainSummary]) -> RunResult:
    """The run's totals."""
    records: list[CheckpointRecord] = [r for s in summaries for r in s.records]
    infra = [s.infra_error for s in summaries if s.infra_error is not None]
    by_problem: dict[str, list[ChainSummary]] = {}
    for summary in summaries:  # attempts cut short by the provider are not the agent's result
        if summary.infra_error is None:
            by_problem.setdefault(summary.problem, []).append(summary)
    solved = {p for p, chains in by_problem.items() if all(c.solved for c in chains)}
    partial = {p for p, chains in by_problem.items()
               if p not in solved and any(r.solved for c in chains for r in c.records)}
    scored = [c for chains in by_problem.values() for c in chains]
    manifest = load_manifest(run_dir)
    # an attempt that broke off counts every checkpoint of its problem (its summary may not
    # know them: the problem failed to load, or its worker died)
    planned = sum(max(c.n_checkpoints, len(manifest.problem_checkpoints.get(c.problem, [])))
                  for c in scored)
    n_solved = sum(r.solved for r in records)
    layout = RunLayout(run_dir)
    judged = [judge_errors(functools.partial(layout.checkpoint_dir, s.problem, s.trial),
                           s.records) for s in summaries]
    return RunResult(
        run_dir=run_dir, created_at=manifest.created_at, finished_at=last_finished(records),
        benchwright_version=manifest.benchwright_version, agent=config.agent, model=config.model,
        start_from=config.start_from, n_problems=len(config.problems), n_trials=config.trials,
        n_checkpoints=len(records), n_checkpoints_planned=planned, n_checkpoints_solved=n_solved,
        n_checkpoints_passed=sum(r.passed for r in records), n_problems_solved=len(solved),
        n_problems_partial=len(partial), n_attempts=len(scored),
        n_attempts_solved=sum(c.solved for c in scored),
        checkpoint_solve_rate=rate(n_solved, planned),
        attempt_solve_rate=rate(sum(c.solved for c in scored), len(scored)),
        problem_solve_rate=rate(len(solved), len(config.problems)),
        totals=run_totals(records, infra), n_checkpoints_infra_error=len(infra),
        complete=len(summaries) == len(config.problems) * config.trials
        and all(s.finished for s in summaries),
        errors=[f"{s.problem}/trial_{s.trial}: {s.error}" for s in summaries if s.error],
        infra_errors=[f"{i.problem}/trial_{i.trial}/{i.checkpoint}: {i.agent.error}"
                      for i in infra], llm=config.llm,
        no_reference=[f"{p}/{c}: {why}" for p, skipped in manifest.no_reference.items()
                      for c, why in skipped.items()],
        agent_errors=[agent_error_line(r) for r in records
                      if r.agent.status in (AgentStatus.ERROR, AgentStatus.TIMEOUT)],
        n_checkpoints_judged=sum(n for n, _e in judged),
        judge_errors=[e for _n, errors in judged for e in errors],
    )


def agent_error_line(record: CheckpointRecord) -> str:
    """`problem/trial_N/checkpoint: status (exit code N): message` for a failed agent turn."""
    code = "" if record.agent.exit_code is None else f" (exit code {record.agent.exit_code})"
    return (f"{record.problem}/trial_{record.trial}/{record.checkpoint}: "
            f"{record.agent.status}{code}: {record.agent.error or 'no message'}")


def _checksums(config: RunConfig) -> dict[str, str]:
    return {name: problem_checksum(config.problems_dir / name) for name in config.problems}


def _sources(config: RunConfig) -> dict[str, ProblemSource]:
    return {name: problem_source(config.problems_dir / name) for name in config.problems}


def _no_reference(config: RunConfig) -> dict[str, dict[str, str]]:
    found = {name: unreachable(load_problem(config.problems_dir / name), config.start_from)
             for name in config.problems}
    return {name: skipped for name, skipped in found.items() if skipped}


def _checkpoint_names(config: RunConfig) -> dict[str, list[str]]:
    return {name: [c.name for c in load_problem(config.problems_dir / name).ordered_checkpoints()]
            for name in config.problems}


def problem_checksum(folder: Path) -> str:
    """SHA-256 over a problem folder's file names and contents."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _environment(config: RunConfig) -> dict[str, Any]:
    found = {"platform": platform.platform(), "python": sys.version.split()[0],
             "bwrap": _version([shutil.which("bwrap") or "bwrap", "--version"]),
             "benchwright": __version__,
             "runtime": "unsafe-local" if config.unsafe_no_sandbox else config.runtime}
    if config.image_id is not None:  # the container image every step ran on
        found |= {"image": config.image_id, "image_ref": config.image or "default",
                  config.runtime: _version([config.runtime, "--version"])}
    return found


def _version(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return "not installed"
