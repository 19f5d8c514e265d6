"""`benchwright run web`: browser agents through web tasks, resumable, scored by the official
evaluator. The command parses its options and calls `benchwright.run_web` (`api/web.py`); with
no options: the local suite, served on loopback, with the scripted agent."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchwright.cli import executor_options as placement
from benchwright.cli.json_output import echo_json, result_fields
from benchwright.cli.look_next import print_look_next
from benchwright.cli.option_checks import (
    MAX_CONCURRENCY_PER_SITE,
    MAX_TRIALS,
    MAX_WEB_STEPS,
    base_url,
    new_dir,
)
from benchwright.cli.option_values import LOCAL_SUITE, STRUCTURED_PROMPT
from benchwright.cli.progress_bar import RunProgress
from benchwright.cli.resume_options import refuse_conflicts
from benchwright.cli.sequence_options import (
    SEQUENCE_PARAMS,
    BaselineOption,
    BudgetMinutesOption,
    BudgetUsdOption,
    MarginOption,
    MaxRoundsOption,
    UntilDecidedOption,
    look_line,
    refuse_stray,
    sequence_settings,
)
from benchwright.cli.verbosity import notes_console
from benchwright.errors import InfrastructureError, ReplayDivergence
from benchwright.registry import WEB_AGENTS, WEB_SUITES

# The track and the API are imported inside the functions that run the command: `--help` and a
# bad option load neither (bench/cli_startup.py, tests/cli/test_startup.py).
if TYPE_CHECKING:
    from benchwright.api.web import WebOptions
    from benchwright.stats.sequential import Look
    from benchwright.web.trials.models import WebRunResult
    from benchwright.web.trials.runner import RunHooks

BASE_URL_ENV = "BENCHWRIGHT_LLM_BASE_URL"


SuiteOption = Annotated[str, typer.Option(
    metavar="NAME|FILE",
    help="local, webarena-verified, or a tasks JSON file in the WebArena Verified format.")]
TaskIdsOption = Annotated[str | None, typer.Option(metavar="IDS",
    help="Ids and ranges: 0-50,77.")]
SitesOption = Annotated[str | None, typer.Option(
    metavar="SITES", help="Tasks touching any of: shopping,reddit.")]
AgentOption = Annotated[str, typer.Option(
    metavar="NAME", help=f"One of: {', '.join(WEB_AGENTS.table)}; a plugin's "
    "(`benchwright agents list`), or module:Class.")]
ModelOption = Annotated[str | None, typer.Option(metavar="MODEL",
    help="Model name (browser-use).")]
BaseUrlOption = Annotated[str | None, typer.Option(
    envvar=BASE_URL_ENV, metavar="URL", parser=base_url,
    help="OpenAI-compatible endpoint of the model; the key comes from --api-key-env.")]
ApiKeyEnvOption = Annotated[str, typer.Option(metavar="VAR",
    help="Variable holding the API key.")]
StepLimitOption = Annotated[int, typer.Option(min=1, max=MAX_WEB_STEPS, metavar="N",
    help="Agent steps per trial.")]
TrialTimeoutOption = Annotated[float, typer.Option(min=1, max=86_400, metavar="SECONDS",
    help="Wall-clock seconds per trial; past them the trial ends as a timeout.")]
ScriptsOption = Annotated[Path | None, typer.Option(
    metavar="DIR",
    help="Folder of <task_id>.yaml action scripts (scripted agent); default: the suite's.")]
ExtractModelOption = Annotated[str | None, typer.Option(
    metavar="MODEL",
    help="A model that reads ambiguous answers into retrieved_data (off by default; uses "
    "--base-url and --api-key-env).")]
OutOption = Annotated[Path | None, typer.Option(parser=new_dir, metavar="RUN_DIR",
    help="The run directory to create.")]
ResumeOption = Annotated[Path | None, typer.Option(
    metavar="RUN_DIR", help="Finish an interrupted run (its saved settings are used; only "
    "--json may be given with it).")]
ConfigOption = Annotated[Path | None, typer.Option(
    metavar="ENV.yaml", help="Site URLs (YAML) for suites not served by benchwright.")]
KeepBrowserFilesOption = Annotated[bool, typer.Option(
    "--keep-browser-files", help="Keep each trial's browser profile and downloads.")]
CookiesOption = Annotated[list[Path] | None, typer.Option(
    metavar="FILE", help="A cookie file from `benchwright web auth capture`, set in every "
    "trial before it navigates (repeatable).")]
PromptOption = Annotated[str, typer.Option(
    metavar="KIND|FILE",
    help="structured (ask for the official final response, validated by a schema), plain "
    "(free text read by the response adapter), or a template FILE ({task}, {start_urls}, "
    "{sites}, {response_format}).")]
ConcurrencyPerSiteOption = Annotated[int, typer.Option(
    min=1, max=MAX_CONCURRENCY_PER_SITE, metavar="N",
    help="Read-only trials (RETRIEVE, NAVIGATE) of a site run this many at a time, each in "
    "its own browser; MUTATE trials always run alone.")]


def run_web_cmd(
    ctx: typer.Context,
    suite: SuiteOption = LOCAL_SUITE,
    task_ids: TaskIdsOption = None,
    sites: SitesOption = None,
    agent: AgentOption = "scripted",
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = "OPENAI_API_KEY",
    trials: Annotated[int, typer.Option(min=1, max=MAX_TRIALS, help="Attempts per task.")] = 1,
    step_limit: StepLimitOption = 30,
    trial_timeout: TrialTimeoutOption = 1800.0,
    scripts: ScriptsOption = None,
    extract_model: ExtractModelOption = None,
    out: OutOption = None,
    resume: ResumeOption = None,
    config: ConfigOption = None,
    keep_browser_files: KeepBrowserFilesOption = False,
    cookies: CookiesOption = None,
    prompt: PromptOption = STRUCTURED_PROMPT,
    concurrency_per_site: ConcurrencyPerSiteOption = 1,
    llm_record: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Record every model call into this cassette folder "
        "(docs/cassettes.md).")] = None,
    llm_replay: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Answer every model call from this cassette: no network, no "
        "key.")] = None,
    executor: placement.ExecutorOption = "local",
    ray_address: placement.RayAddressOption = placement.EXECUTOR_DEFAULTS.address,
    job_cpus: placement.JobCpusOption = placement.EXECUTOR_DEFAULTS.job_cpus,
    job_memory_mb: placement.JobMemoryOption = placement.EXECUTOR_DEFAULTS.job_memory_mb,
    baseline: BaselineOption = None,
    until_decided: UntilDecidedOption = False,
    max_rounds: MaxRoundsOption = 10,
    margin: MarginOption = None,
    budget_usd: BudgetUsdOption = None,
    budget_minutes: BudgetMinutesOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run a browser agent through web tasks (N trials each), score every trial, and report."""
    from benchwright.api.until_decided import is_sequence

    if until_decided or (resume is not None and is_sequence(resume)):
        return _sequence(ctx, resume, suite, as_json)
    refuse_stray(ctx)
    from benchwright.api.web import run_web

    if resume is not None:
        _refuse_resume_conflicts(ctx, resume)
        call: dict[str, Any] = {"resume": resume, **placement.placement(ctx.params)}
    else:
        call = {"suite": suite, "out": out, **web_options(ctx.params)}
    with RunProgress("trials", quiet=as_json) as progress:
        result = run_web(hooks=_hooks(progress), **call)
    _end(result, as_json)


def _sequence(ctx: typer.Context, resume: Path | None, suite: str, as_json: bool) -> None:
    """`--until-decided`: rounds until the comparison is decided, each look on stderr."""
    from benchwright.api.until_decided import resume_web_until_decided, run_web_until_decided

    notes = notes_console()

    def on_look(look: Look) -> None:
        notes.print(look_line(look, "templates"))

    with RunProgress("trials", quiet=as_json) as progress:
        if resume is not None:
            _refuse_resume_conflicts(ctx, resume)
            result, state = resume_web_until_decided(
                resume, _hooks(progress), on_look, **placement.placement(ctx.params))
        else:
            result, state = run_web_until_decided(
                suite, baseline=ctx.params["baseline"], settings=sequence_settings(ctx.params),
                out=ctx.params["out"], hooks=_hooks(progress), on_look=on_look,
                **web_options(ctx.params))
    if state.stopped is not None and not as_json:
        notes.print(f"stopped after round {len(state.looks)}: {state.stopped}")
    _end(result, as_json, {"sequence": state.model_dump(mode="json")})


def _end(result: WebRunResult, as_json: bool, more: dict[str, Any] | None = None) -> None:
    """The summary (or JSON), then exit 3 when the harness failed trials."""
    if as_json:
        echo_json({**result_fields(result), **(more or {})})
    else:
        from rich.console import Console

        Console().print(_summary_line(result), highlight=False)
        notes_console().print(f"[dim]report: {result.report}[/]")
        print_look_next(result.run_dir)
    from benchwright.llm.replay_keys import first_divergence

    diverged = first_divergence(result.infra_errors)
    if diverged is not None:
        raise ReplayDivergence(diverged)
    if result.infra_errors:  # the harness's failures, not the agent's: exit 3, resume redoes them
        raise InfrastructureError(
            f"{len(result.infra_errors)} trial(s) failed in the harness, not the agent (left "
            f"out of the figures), first: {result.infra_errors[0]}",
            hint=f"fix the cause, then: benchwright run web --resume {result.run_dir}")


def web_options(params: dict[str, Any]) -> WebOptions:
    """The command line's options as `run_web` takes them (unset ones left out)."""
    skip = {"suite", "out", "resume", "as_json", *SEQUENCE_PARAMS}
    options = {k: v for k, v in params.items() if k not in skip and v is not None}
    return options  # type: ignore[return-value]  # keys are WebOptions' (a test checks)


def _refuse_resume_conflicts(ctx: typer.Context, run_dir: Path) -> None:
    from benchwright.api.web import absolute
    from benchwright.api.web import prompt as prompt_setting
    from benchwright.runs import open_saved
    from benchwright.web.evaluation.tasks import parse_task_ids
    from benchwright.web.track import TRACK
    from benchwright.web.trials.layout import WebRunLayout
    from benchwright.web.trials.runner import require_kinds

    manifest = open_saved(TRACK, run_dir)  # a coding run folder: say so, how to continue it
    require_kinds(WebRunLayout(run_dir), manifest)  # a folder changed by hand: one line
    config = manifest.config
    saved = {"suite": config.suite, "task_ids": sorted(config.task_ids), "agent": config.agent.name,
             "model": config.agent.model, "base_url": config.agent.base_url,
             "api_key_env": config.agent.api_key_env, "trials": config.trials,
             "step_limit": config.max_steps, "trial_timeout": config.trial_timeout_s,
             "scripts": config.scripts_dir,
             "extract_model": config.extractor.model if config.extractor else None,
             "config": config.env_config, "keep_browser_files": config.keep_browser_files,
             "cookies": config.cookie_files, "prompt": config.agent.prompt,
             "concurrency_per_site": config.concurrency_per_site, "out": absolute(run_dir),
             "llm_record": config.llm.cassette if config.llm and config.llm.mode == "record"
             else None,
             "llm_replay": config.llm.cassette if config.llm and config.llm.mode == "replay"
             else None}
    refuse_conflicts(ctx, saved, may_change={"resume", "as_json", "until_decided",
                                             *placement.MAY_CHANGE},
                     normalise={
        "suite": lambda name: name if name in WEB_SUITES else str(absolute(Path(name))),
        "task_ids": lambda ids: sorted(parse_task_ids(ids)),
        "scripts": absolute, "config": absolute, "out": absolute, "llm_record": absolute,
        "llm_replay": absolute,
        "cookies": lambda paths: [absolute(p) for p in paths], "prompt": prompt_setting},
        command="benchwright run web --out NEW_DIR")


def _hooks(progress: RunProgress) -> RunHooks:
    """The run's progress bar on stderr: the runner counts the finished trials itself
    (counting them here first would clear unfinished trial folders before it sees which sites
    they may have changed)."""
    from benchwright.web.trials.models import TrialRecord
    from benchwright.web.trials.runner import RunHooks

    def on_trial(record: TrialRecord) -> None:
        progress.update(advance=1, description=f"task {record.task_id} trial "
                        f"{record.trial}: {record.response_status.lower()}")

    return RunHooks(on_start=lambda total, done: progress.update(total=total, completed=done),
                    on_trial=on_trial, on_status=lambda message: progress.update(
                        description=message))


def _summary_line(result: WebRunResult) -> str:
    state = "" if result.complete else " (incomplete: resume with --resume RUN_DIR)"
    infra = f", {len(result.infra_errors)} infrastructure errors" if result.infra_errors else ""
    return (f"{result.n_passed}/{result.n_trials} trials passed "
            f"({100 * result.pass_rate:.1f}%) over {result.n_tasks} tasks, "
            f"{result.n_errors} errors{infra}{state}\nrun: {result.run_dir}"
            + (f"\nmodel calls {result.llm.describe()}" if result.llm else ""))
