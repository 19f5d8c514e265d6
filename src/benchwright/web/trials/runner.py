"""Create, resume, run and score a web run.

Crash safety: a trial counts as finished exactly when its journal record is there, and the
record is written after every file of the trial, and after the trial folder was swept for
credentials (benchwright.web.trials.sweep; the manifest is written redacted too). On resume the
journal is cut back to its valid prefix, records of infrastructure failures are dropped (those
trials are redone), and every trial folder without a record (a trial that was running when the
run died) is deleted and redone.
Scoring runs at the end over the whole `tasks/` folder and reuses verdicts whose inputs did not
change, so a run killed while scoring simply scores again.
"""

from __future__ import annotations

import functools
import platform
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchwright.errors import (
    BenchwrightError,
    InfrastructureError,
    PrerequisiteError,
    UserInputError,
)
from benchwright.files.atomic import remove_torn_writes, write_json_atomic, write_text_atomic
from benchwright.files.untrusted import read_json_object
from benchwright.llm.models import TrafficMode
from benchwright.llm.urls import require_reachable
from benchwright.protocols import Executor
from benchwright.registry import TRIAL_RUNNERS
from benchwright.runs import journal
from benchwright.runs.clock import utc_now
from benchwright.runs.layout import require_kind
from benchwright.runs.manifest import read_manifest, with_trials
from benchwright.version import __version__
from benchwright.web.browser.web_agents import Scripts, web_agent
from benchwright.web.evaluation.response_adapter import Extractor
from benchwright.web.evaluation.scoring import (
    AGENT_RESPONSE,
    INFRA_ERROR,
    METRICS,
    WebEvalSummary,
    score_output_dir,
)
from benchwright.web.evaluation.tasks import TaskType, WebTask
from benchwright.web.sites.config import Site, SiteConfig, WebEnvConfig, load_web_config
from benchwright.web.trials.extraction import LLMExtractor
from benchwright.web.trials.layout import WebRunLayout
from benchwright.web.trials.models import (
    PlannedTask,
    TrialRecord,
    TrialRequest,
    TrialStatus,
    WebManifest,
    WebRunConfig,
    WebRunResult,
)
from benchwright.web.trials.runner_pool import RunnerPool
from benchwright.web.trials.scheduling import SiteGuard, TrialJob, group_of, plan, run_workers
from benchwright.web.trials.suites import Suite, SuiteSession, open_suite, require_sites
from benchwright.web.trials.sweep import RunSweeper, restored
from benchwright.web.trials.traffic import diverged_trial, prepare_traffic, trial_traffic
from benchwright.web.trials.trial import agent_for, run_trial_files
from benchwright.web.trials.trial_rules import read_trials
from benchwright.web.trials.trial_runner import TrialRunner

if TYPE_CHECKING:
    from benchwright.web.scorecard.figures import WebReport

Progress = Callable[[str], None]


@dataclass
class RunHooks:
    """What the caller hears while a run goes on."""

    on_start: Callable[[int, int], None] = lambda _total, _done: None
    """The run's trial count and how many of them were finished before, as work starts."""
    on_trial: Callable[[TrialRecord], None] = lambda _record: None
    """A trial finished (called from a site worker's thread)."""
    on_status: Progress = lambda _message: None
    """Scoring and other phases."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Set it to stop every worker after its current trial."""


RunnerFactory = Callable[[], TrialRunner]


def create_web_run(config: WebRunConfig, run_dir: Path, suite: Suite) -> WebManifest:
    """Write the manifest of a new run; refuse a folder that already holds one."""
    layout = WebRunLayout(run_dir)
    if layout.manifest.exists():
        raise UserInputError("this folder already holds a run", path=run_dir,
                             hint="continue it with --resume, or pick another --out")
    tasks = [suite.dataset.tasks[i] for i in config.task_ids]
    prepare_traffic(config)
    _check_agent(config, suite, tasks)
    if suite.opener is None:  # configured sites: their URLs are known before the run
        require_sites(suite, {str(s): "" for s in suite.env_config.configured()},
                      {str(s) for t in tasks for s in t.sites})
    manifest = WebManifest(
        created_at=utc_now(), benchwright_version=__version__, config=config,
        tasks=[planned(t) for t in tasks], dataset_file=suite.dataset_file,
        data_checksum=suite.dataset.data_checksum,
        environment={"platform": platform.platform(), "python": sys.version.split()[0]})
    RunSweeper(config, suite.env_config).write_manifest(layout.manifest, manifest)
    return manifest


def planned(task: WebTask) -> PlannedTask:
    """A task as the manifest plans it."""
    sites = [str(s) for s in task.sites]
    return PlannedTask(task_id=task.task_id, sites=sites, group=group_of(sites),
                       task_type=task.task_type)


def node_checks(config: WebRunConfig) -> list[Callable[[], object]]:
    """What every machine that runs trials must have: a usable cache folder, Chromium and
    browser-use (the browser runner; the fake one needs neither)."""
    from benchwright.sandbox.caches import cache_base  # the evaluator's environment lives there

    if config.runner == "fake":
        from benchwright.web.trials.fake_runner import delay_s

        return [cache_base, delay_s]
    from benchwright.web.browser.imports import browser_use_module
    from benchwright.web.browser.launch import BrowserSettings

    checks: list[Callable[[], object]] = [
        cache_base, functools.partial(_chromium_at, BrowserSettings().executable),
        browser_use_module]
    base_url = config.agent.base_url
    if base_url is not None and (config.llm is None or config.llm.mode is not TrafficMode.REPLAY):
        # an endpoint that takes no connection: one line now, not a model error per trial
        checks.append(functools.partial(
            require_reachable, base_url, "the agent's model endpoint",
            "check --base-url and that its server is running"))
    return checks


def _chromium_at(path: Path) -> None:
    if not path.is_file():
        raise PrerequisiteError(f"Chromium not found at {path}", hint="apt-get install -y chromium")


def _check_agent(config: WebRunConfig, suite: Suite, tasks: list[WebTask]) -> None:
    scripts = Scripts(find=lambda task_id: suite.script(task_id, config.scripts_dir),
                      folder=config.scripts_dir or suite.scripts_dir,
                      needed=config.runner != "fake")
    web_agent(config.agent).check(tasks, scripts)


def load_web_manifest(run_dir: Path) -> WebManifest:
    """The manifest of a web run, or a one-line error."""
    return read_manifest(run_dir, WebManifest, noun="web run", command="benchwright run web",
                         invalid="manifest.json is not a web run's")


def extend_web_trials(run_dir: Path, trials: int) -> WebManifest:
    """Raise the run's trials per task to `trials` (`run web --until-decided` adds a round):
    the next resume runs the new trials and keeps every finished one. The caller holds the
    run's lock. The manifest is written back as it was read (already redacted)."""
    manifest = load_web_manifest(run_dir)
    config = with_trials(manifest.config, trials, run_dir, "task")
    updated = manifest.model_copy(update={"config": config})
    write_json_atomic(WebRunLayout(run_dir).manifest, updated.model_dump(mode="json"))
    return updated


def finished_trials(layout: WebRunLayout, manifest: WebManifest) -> list[TrialRecord]:
    """The journal's valid records (infrastructure failures dropped), the journal rewritten to
    them, and every trial folder without a record deleted."""
    planned_keys = {(t.task_id, n) for t in manifest.tasks
                    for n in range(1, manifest.config.trials + 1)}
    records = read_trials(layout.journal, manifest)
    kept = _dedupe([r for r in records if r.status is not TrialStatus.INFRA_ERROR
                    and (r.task_id, r.trial) in planned_keys
                    and _complete(layout.trial_dir(r.task_id, r.trial))])
    if kept != records or layout.journal.exists():
        journal.rewrite(layout.journal, kept)
    keep_dirs = {layout.trial_dir(r.task_id, r.trial) for r in kept}
    for folder in layout.trial_dirs():
        if folder not in keep_dirs:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            remove_torn_writes(folder)  # e.g. an eval_result.json cut off by kill -9 while scoring
    return kept


def _dedupe(records: list[TrialRecord]) -> list[TrialRecord]:
    seen: dict[tuple[int, int], TrialRecord] = {}
    for record in records:
        seen.setdefault((record.task_id, record.trial), record)
    return list(seen.values())


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in (AGENT_RESPONSE, METRICS))


def _dirty_at_start(layout: WebRunLayout, manifest: WebManifest, suite: Suite) -> frozenset[str]:
    """Sites a MUTATE trial may have changed before this session (none for a fresh suite)."""
    if suite.starts_clean:
        return frozenset()
    touched = {int(p.parent.name) for p in layout.trial_dirs() if p.parent.name.isdigit()}
    return frozenset(s for t in manifest.tasks if t.task_id in touched
                     and t.task_type is TaskType.MUTATE for s in t.sites)


def execute_web_run(run_dir: Path, hooks: RunHooks | None = None, *, suite: Suite | None = None,
                    runner_factory: RunnerFactory | None = None,
                    config: WebRunConfig | None = None,
                    executor: Executor | None = None) -> WebRunResult:
    """Run every trial not yet finished, then score and report. `suite` and `runner_factory`
    replace the manifest's (tests); by default the suite is opened again by name and each site
    worker gets the registered runner. `config` is the run's configuration as given, for the
    credentials the manifest does not keep; without it they come back from the environment.
    On an `executor` that shares no filesystem, each site worker's trials run on its machines
    (remote_runner.py); everything else stays here."""
    hooks = hooks or RunHooks()
    layout = WebRunLayout(run_dir)
    manifest = load_web_manifest(run_dir)
    require_kinds(layout, manifest)
    manifest = manifest.model_copy(update={"config": config or restored(manifest.config)})
    suite = suite or suite_of(manifest)
    sweeper = RunSweeper(manifest.config, suite.env_config, manifest.site_urls)
    dirty = _dirty_at_start(layout, manifest, suite)
    done = {(r.task_id, r.trial) for r in finished_trials(layout, manifest)}
    hooks.on_start(len(manifest.tasks) * manifest.config.trials, len(done))
    with suite.session() as session:
        manifest = _record_urls(layout, manifest, session.site_urls, sweeper)
        require_sites(suite, session.site_urls, {s for t in manifest.tasks for s in t.sites})
        context = _Context(layout, manifest, suite, session, hooks, sweeper,
                           factory=runner_factory or _registered(manifest, executor))
        _run_trials(context, SiteGuard(session.reset, session.reset_scope, dirty), done)
    return finish(run_dir, hooks.on_status, suite=suite, manifest=manifest).result


def require_kinds(layout: WebRunLayout, manifest: WebManifest) -> None:
    """The folders trials are written into are folders (a hand edit is one clear error)."""
    require_kind(layout.journal, folder=False)
    require_kind(layout.tasks_dir, folder=True)
    for task in manifest.tasks:
        require_kind(layout.tasks_dir / str(task.task_id), folder=True)
        for trial in range(1, manifest.config.trials + 1):
            require_kind(layout.trial_dir(task.task_id, trial), folder=True)


def suite_of(manifest: WebManifest) -> Suite:
    """The manifest's suite, opened again."""
    return open_suite(manifest.config.suite, manifest.config.env_config)


def _record_urls(layout: WebRunLayout, manifest: WebManifest, urls: dict[str, str],
                 sweeper: RunSweeper) -> WebManifest:
    merged = {site: list(known) for site, known in manifest.site_urls.items()}
    for site, url in urls.items():
        if url not in merged.setdefault(site, []):
            merged[site].append(url)
    updated = manifest.model_copy(update={"site_urls": merged})
    sweeper.write_manifest(layout.manifest, updated)
    return updated


@dataclass
class _Context:
    layout: WebRunLayout
    manifest: WebManifest
    suite: Suite
    session: SuiteSession
    hooks: RunHooks
    sweeper: RunSweeper
    factory: RunnerFactory
    journal_lock: threading.Lock = field(default_factory=threading.Lock)
    runners: RunnerPool | None = None
    extractor: Extractor | None = None
    cookies: list[dict[str, Any]] = field(default_factory=list)


def _run_trials(ctx: _Context, guard: SiteGuard, done: set[tuple[int, int]]) -> None:
    prepare_traffic(ctx.manifest.config)
    extraction = ctx.manifest.config.extractor
    ctx.extractor = LLMExtractor(extraction) if extraction is not None else None
    ctx.cookies = _cookies(ctx.manifest.config.cookie_files)
    groups = plan(ctx.manifest.tasks, ctx.manifest.config.trials, done)
    ctx.runners = RunnerPool(ctx.factory)
    try:
        run_workers(groups, lambda job: _one(ctx, guard, job), ctx.hooks.stop,
                    ctx.manifest.config.concurrency_per_site)
    finally:
        ctx.runners.close()


def _one(ctx: _Context, guard: SiteGuard, job: TrialJob) -> None:
    assert ctx.runners is not None
    with ctx.runners.runner(job.task.group) as runner, guard.trial(job.task) as reset, \
            trial_traffic(ctx.manifest.config, _request(ctx, job)) as (request, diverged):
        record = run_trial_files(runner, request, job, ctx.extractor, reset)
    if diverged:  # a replay that diverged: an infrastructure error, redone on resume
        record = diverged_trial(request.trial_dir, record, diverged[0])
    ctx.sweeper.trial(ctx.layout.trial_dir(job.task.task_id, job.trial))  # before the record
    with ctx.journal_lock:
        journal.append_record(ctx.layout.journal, record)
    ctx.hooks.on_trial(record)


def _registered(manifest: WebManifest, executor: Executor | None = None) -> RunnerFactory:
    runner = manifest.config.runner
    if executor is not None and not executor.shares_filesystem:
        from benchwright.web.trials.remote_runner import RemoteTrialRunner

        # each remote runner is a process of its own: side by side trials need nothing more
        return lambda: RemoteTrialRunner(executor, runner)
    if runner == "browser" and manifest.config.concurrency_per_site > 1:
        # side by side, browser-use agents must live in processes of their own (trial_process)
        runner = "browser-process"
    factory: RunnerFactory = TRIAL_RUNNERS.get(runner)
    return factory


def _request(ctx: _Context, job: TrialJob) -> TrialRequest:
    config = ctx.manifest.config
    task = ctx.suite.dataset.tasks[job.task.task_id]
    return TrialRequest(
        task=task, trial_dir=ctx.layout.trial_dir(task.task_id, job.trial),
        site_urls=ctx.session.site_urls, max_steps=config.max_steps,
        timeout_s=config.trial_timeout_s,
        agent=agent_for(config.agent, ctx.suite.script(task.task_id, config.scripts_dir)),
        keep_browser_files=config.keep_browser_files, cookies=ctx.cookies)


def _cookies(paths: list[Path]) -> list[dict[str, Any]]:
    if not paths:
        return []
    from benchwright.web.browser.cookies import load_cookies  # its CDP half needs websockets

    return [cookie for path in paths for cookie in load_cookies(path)]


def scoring_config(manifest: WebManifest, override: Path | None = None) -> WebEnvConfig:
    """Every URL the run's browser used, per site (plus the settings of --config, if given)."""
    base = load_web_config(override or manifest.config.env_config)
    sites = dict(base.sites)
    for name, urls in manifest.site_urls.items():
        site = Site.parse(name)
        if site is not None and urls:
            sites[site] = (sites.get(site) or SiteConfig()).model_copy(update={"urls": urls})
    return WebEnvConfig(sites=sites)


@dataclass
class ScoredRun:
    """A run after scoring: its result.json, the verdicts, and the statistics of report.md."""

    result: WebRunResult
    summary: WebEvalSummary
    report: WebReport


def finish(run_dir: Path, progress: Progress | None = None, *, suite: Suite | None = None,
           manifest: WebManifest | None = None, force: bool = False,
           config: Path | None = None) -> ScoredRun:
    """Score every trial with the official evaluator (offline; verdicts whose inputs did not
    change are reused unless `force`), then write report.md and result.json."""
    from benchwright.web.scorecard.figures import build_report, render_markdown
    from benchwright.web.trials.report_identity import with_identity

    layout = WebRunLayout(run_dir)
    manifest = manifest or load_web_manifest(run_dir)
    suite = suite or suite_of(manifest)
    tell = progress or (lambda _message: None)
    records = read_trials(layout.journal, manifest)
    if records and all(r.status is TrialStatus.INFRA_ERROR for r in records):
        raise InfrastructureError(
            f"every trial failed in the harness, first: {infra_errors(layout, records)[0]}",
            hint=f"fix the cause, then: benchwright run web --resume {run_dir}")
    tell("scoring")
    scoring_started = time.monotonic()
    summary = score_output_dir(layout.tasks_dir, scoring_config(manifest, config),
                               dataset=suite.dataset, reuse=not force, scorer=suite.scorer,
                               progress=lambda message: tell(f"scoring {message}"))
    grading_time_s = time.monotonic() - scoring_started
    report = with_identity(build_report(summary), run_dir, manifest, summary, grading_time_s)
    write_text_atomic(layout.report_md, render_markdown(report))
    result = _result(layout, manifest, summary, report)
    write_json_atomic(layout.result_json, result.model_dump(mode="json"))
    return ScoredRun(result=result, summary=summary, report=report)


def _result(layout: WebRunLayout, manifest: WebManifest, summary: WebEvalSummary,
            report: WebReport) -> WebRunResult:
    expected = len(manifest.tasks) * manifest.config.trials
    totals = summary.totals
    records = read_trials(layout.journal, manifest)
    finished = [r for r in records if r.status is not TrialStatus.INFRA_ERROR]
    config = manifest.config
    return WebRunResult(
        run_dir=layout.root, created_at=manifest.created_at,
        finished_at=max((r.finished_at for r in records), default=None),
        benchwright_version=manifest.benchwright_version, suite=config.suite,
        agent=str(config.agent.name), model=config.agent.model, n_tasks=len(manifest.tasks),
        n_trials=totals.n_attempts, n_passed=totals.n_success, n_errors=totals.n_error,
        pass_rate=totals.pass_rate, pass_rate_ci=report.overall, macro_average=report.macro,
        pass_at_k={p.k: p.pass_at_k.value for p in report.pass_k.overall} if report.pass_k
        else {},
        pass_hat_k={p.k: p.pass_hat_k.value for p in report.pass_k.overall} if report.pass_k
        else {},
        totals=report.totals, complete=len(finished) == expected, report=layout.report_md,
        infra_errors=infra_errors(layout, records), llm=config.llm)


def infra_errors(layout: WebRunLayout, records: list[TrialRecord]) -> list[str]:
    """`task T trial N: error` for each trial the harness failed (its infra_error.json)."""
    failed = []
    for record in records:
        if record.status is TrialStatus.INFRA_ERROR:
            path = layout.trial_dir(record.task_id, record.trial) / INFRA_ERROR
            failed.append(f"task {record.task_id} trial {record.trial}: {_first_error(path)}")
    return failed


def _first_error(path: Path) -> str:
    try:
        data = read_json_object(path, what=path.name, max_bytes=1 << 20) or {}
        errors = data.get("errors")
        return str(errors[0])[:500] if isinstance(errors, list) and errors else "unknown"
    except BenchwrightError:
        return f"unknown ({path.name} unreadable)"

