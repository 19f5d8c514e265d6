"""`benchwright run web`: browser agents through web tasks, resumable, scored by the official
evaluator. With no options: the local suite, served on loopback, with the scripted agent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchwright.cli import executor_options as placement
from benchwright.cli.json_output import echo_json, result_fields
from benchwright.cli.look_next import print_look_next
from benchwright.cli.option_checks import (
    MAX_CONCURRENCY_PER_SITE,
    MAX_TRIALS,
    MAX_WEB_STEPS,
    new_dir,
)
from benchwright.cli.resume_options import refuse_conflicts
from benchwright.errors import Interrupted, UserInputError
from benchwright.protocols import Executor
from benchwright.runs import open_run
from benchwright.runs.clock import folder_stamp
from benchwright.runs.lock import locked_run_folder
from benchwright.runs.node_checks import require_on_every_node
from benchwright.runs.secret_settings import refuse_secrets
from benchwright.web.browser.prompts import PROMPT_KINDS, STRUCTURED
from benchwright.web.runs.extraction import ExtractorConfig
from benchwright.web.runs.layout import WebRunLayout
from benchwright.web.runs.models import (
    AgentName,
    AgentSpec,
    TrialRecord,
    WebRunConfig,
    WebRunResult,
)
from benchwright.web.runs.runner import (
    RunHooks,
    create_web_run,
    execute_web_run,
    load_web_manifest,
    node_checks,
    require_kinds,
)
from benchwright.web.runs.suites import LOCAL, SUITE_NAMES, Suite, open_suite
from benchwright.web.tasks import (
    TaskFilter,
    parse_sites,
    parse_task_ids,
    require_known_ids,
    select,
)

if TYPE_CHECKING:
    pass

# Selects another registered trial runner (tests use `fake`); deliberately not a CLI option.
RUNNER_ENV = "BENCHWRIGHT_WEB_TRIAL_RUNNER"


def run_web_cmd(
    ctx: typer.Context,
    suite: Annotated[str, typer.Option(
        help="local, webarena-verified, or a tasks JSON file in the WebArena Verified format.")]
    = LOCAL,
    task_ids: Annotated[str | None, typer.Option(help="Ids and ranges: 0-50,77.")] = None,
    sites: Annotated[str | None, typer.Option(help="Tasks touching any of: shopping,reddit.")]
    = None,
    agent: Annotated[AgentName, typer.Option(help="scripted or browser-use.")]
    = AgentName.SCRIPTED,
    model: Annotated[str | None, typer.Option(help="Model name (browser-use).")] = None,
    base_url: Annotated[str | None, typer.Option(
        help="OpenAI-compatible endpoint of the model; the key comes from --api-key-env.")] = None,
    api_key_env: Annotated[str, typer.Option(help="Variable holding the API key.")]
    = "OPENAI_API_KEY",
    trials: Annotated[int, typer.Option(min=1, max=MAX_TRIALS, help="Attempts per task.")] = 1,
    max_steps: Annotated[int, typer.Option(min=1, max=MAX_WEB_STEPS,
                                           help="Agent steps per trial.")] = 30,
    scripts: Annotated[Path | None, typer.Option(
        help="Folder of <task_id>.yaml action scripts (scripted agent); default: the suite's.")]
    = None,
    extract_model: Annotated[str | None, typer.Option(
        help="A model that reads ambiguous answers into retrieved_data (off by default; uses "
        "--base-url and --api-key-env).")] = None,
    out: Annotated[Path | None, typer.Option(parser=new_dir, help="The run directory.")]
    = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Finish the interrupted run in --out (its saved settings are used).")]
    = False,
    config: Annotated[Path | None, typer.Option(
        help="Site URLs (YAML) for suites not served by benchwright.")] = None,
    keep_browser_files: Annotated[bool, typer.Option(
        "--keep-browser-files", help="Keep each trial's browser profile and downloads.")] = False,
    cookies: Annotated[list[Path] | None, typer.Option(
        help="A cookie file from `benchwright web auth capture`, set in every trial before it "
        "navigates (repeatable).")] = None,
    prompt: Annotated[str, typer.Option(
        help="structured (ask for the official final response, validated by a schema), plain "
        "(free text read by the response adapter), or a template FILE ({task}, {start_urls}, "
        "{sites}, {response_format}).")] = STRUCTURED,
    concurrency_per_site: Annotated[int, typer.Option(
        min=1, max=MAX_CONCURRENCY_PER_SITE,
        help="Read-only trials (RETRIEVE, NAVIGATE) of a site run this many at a time, "
        "each in its own browser; MUTATE trials always run alone.")] = 1,
    executor: placement.ExecutorOption = "local",
    ray_address: placement.RayAddressOption = "auto",
    job_cpus: placement.JobCpusOption = 1.0,
    job_memory_mb: placement.JobMemoryOption = 2048,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run a browser agent through web tasks (N trials each), score every trial, and report."""
    new = None if resume else _new_web_run(ctx.params)
    run_dir = _resumable(ctx, out) if new is None else new[0]
    # trials run where the executor puts them (one hosted runner per site worker)
    where = placement.make_executor(ctx.params, workers=1)
    require_on_every_node(where, node_checks(new[2] if new else load_web_manifest(run_dir).config))
    with locked_run_folder(run_dir):
        if new is not None:
            create_web_run(new[2], run_dir, new[1])
        result = _execute(run_dir, new[1] if new else None, new[2] if new else None,
                          quiet=as_json, executor=where)
    if as_json:
        echo_json(result_fields(result))
    else:
        Console().print(_summary_line(result), highlight=False)
        Console(stderr=True).print(f"[dim]report: {result.report}[/]")
        print_look_next(run_dir)


def _new_web_run(options: dict[str, Any]) -> tuple[Path, Suite, WebRunConfig]:
    """The folder, suite and configuration of a new run (no key among its settings)."""
    opened = open_suite(options["suite"], options["config"])
    extractor = _extractor(options["extract_model"], options["base_url"],
                           options["api_key_env"])
    run_config = WebRunConfig(
        suite=opened.name, task_ids=_task_ids(opened, options["task_ids"], options["sites"]),
        agent=AgentSpec(name=options["agent"], model=options["model"],
                        base_url=options["base_url"], api_key_env=options["api_key_env"],
                        prompt=_prompt(options["prompt"])),
        scripts_dir=_scripts(options["scripts"]), trials=options["trials"],
        max_steps=options["max_steps"],
        env_config=options["config"].resolve() if options["config"] else None,
        runner=os.environ.get(RUNNER_ENV) or "browser", extractor=extractor,
        keep_browser_files=options["keep_browser_files"],
        cookie_files=_cookie_files(options["cookies"] or []),
        concurrency_per_site=options["concurrency_per_site"])
    refuse_secrets(run_config)
    run_dir = (options["out"] or _default_out(options["agent"])).expanduser().resolve()
    return run_dir, opened, run_config


def _resumable(ctx: typer.Context, out: Path | None) -> Path:
    if out is None:
        raise UserInputError("--resume needs the run directory",
                             hint="pass --out RUN_DIR --resume")
    open_run(out, expect="web")  # a coding run folder: say so, and how to continue it
    manifest = load_web_manifest(out)
    require_kinds(WebRunLayout(out), manifest)  # before the progress bar is drawn
    config = manifest.config
    saved = {"suite": config.suite, "task_ids": sorted(config.task_ids), "agent": config.agent.name,
             "model": config.agent.model, "base_url": config.agent.base_url,
             "api_key_env": config.agent.api_key_env, "trials": config.trials,
             "max_steps": config.max_steps, "scripts": config.scripts_dir,
             "extract_model": config.extractor.model if config.extractor else None,
             "config": config.env_config, "keep_browser_files": config.keep_browser_files,
             "cookies": config.cookie_files, "prompt": config.agent.prompt,
             "concurrency_per_site": config.concurrency_per_site}
    refuse_conflicts(ctx, saved, may_change={"out", "resume", "as_json", *placement.MAY_CHANGE},
                     normalise={
        "suite": lambda name: name if name in SUITE_NAMES else str(_absolute(Path(name))),
        "task_ids": lambda ids: sorted(parse_task_ids(ids)),
        "scripts": _absolute, "config": _absolute,
        "cookies": lambda paths: [_absolute(p) for p in paths], "prompt": _prompt},
        command="benchwright run web --out NEW_DIR")
    return out.expanduser().resolve()


def _prompt(prompt: str) -> str:
    """A prompt kind as it is, a template file as its absolute path."""
    if prompt in PROMPT_KINDS:
        return prompt
    path = _absolute(Path(prompt))
    if not path.is_file():
        raise UserInputError("--prompt: no such prompt file", path=path,
                             hint=f"pass {' or '.join(PROMPT_KINDS)}, or a template file")
    return str(path)


def _absolute(path: Path) -> Path:
    return path.expanduser().resolve()


def _extractor(model: str | None, base_url: str | None,
               api_key_env: str) -> ExtractorConfig | None:
    if model is None:
        return None
    if base_url is None:
        raise UserInputError("--extract-model needs --base-url",
                             hint="the OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    return ExtractorConfig(model=model, base_url=base_url, api_key_env=api_key_env)


def _cookie_files(paths: list[Path]) -> list[Path]:
    from benchwright.web.browser.cookies import load_cookies

    for path in paths:
        load_cookies(path)  # a missing or malformed file stops the run before it starts
    return [path.resolve() for path in paths]


def _scripts(folder: Path | None) -> Path | None:
    if folder is None:
        return None
    if not folder.is_dir():
        raise UserInputError("scripts folder not found", path=folder,
                             hint="pass a folder of <task_id>.yaml action scripts")
    return folder.resolve()


def _task_ids(suite: Suite, ids: str | None, sites: str | None) -> list[int]:
    task_filter = TaskFilter(task_ids=parse_task_ids(ids) if ids is not None else None,
                             sites=parse_sites(sites) if sites is not None else None)
    require_known_ids(suite.dataset, task_filter.task_ids, suite.name)
    chosen = [t.task_id for t in select(suite.dataset, task_filter)]
    if not chosen:
        raise UserInputError("no task matches --task-ids/--sites", hint=f"suite {suite.name} "
                             f"has ids {_id_range(suite)}")
    return chosen


def _id_range(suite: Suite) -> str:
    ids = sorted(suite.dataset.tasks)
    return f"{ids[0]}-{ids[-1]}" if ids else "(none)"


def _default_out(agent: AgentName) -> Path:
    stamp = folder_stamp()
    return Path("benchwright-out") / "runs" / f"web-{agent}-{stamp}"


def _execute(run_dir: Path, suite: Suite | None, config: WebRunConfig | None,
             quiet: bool, executor: Executor) -> WebRunResult:
    # the runner counts the finished trials itself: counting them here first would clear
    # unfinished trial folders before it sees which sites they may have changed
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=Console(stderr=True), disable=quiet)
    bar = progress.add_task("trials", total=None)

    def on_trial(record: TrialRecord) -> None:
        progress.update(bar, advance=1, description=f"task {record.task_id} trial "
                        f"{record.trial}: {record.response_status.lower()}")

    hooks = RunHooks(on_start=lambda total, done: progress.update(bar, total=total,
                                                                    completed=done),
                     on_trial=on_trial,
                     on_status=lambda message: progress.update(bar, description=message))
    try:
        with progress:
            return execute_web_run(run_dir, hooks, suite=suite, config=config,
                                   executor=executor)
    except KeyboardInterrupt:
        hooks.stop.set()
        raise Interrupted("interrupted; finished trials are kept",
                          hint=f"continue with: benchwright run web --out {run_dir} --resume"
                          ) from None



def _summary_line(result: WebRunResult) -> str:
    state = "" if result.complete else " (incomplete: resume with --resume)"
    return (f"{result.n_passed}/{result.n_trials} trials passed "
            f"({100 * result.pass_rate:.1f}%) over {result.n_tasks} tasks, "
            f"{result.n_errors} errors{state}\nrun: {result.run_dir}")
