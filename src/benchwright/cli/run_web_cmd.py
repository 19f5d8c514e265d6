"""`benchwright run web`: browser agents through web tasks, resumable, scored by the official
evaluator. With no options: the local suite, served on loopback, with the scripted agent."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchwright.cli.json_output import echo_json, result_fields
from benchwright.cli.option_checks import MAX_TRIALS, MAX_WEB_STEPS, new_dir
from benchwright.errors import Interrupted, UserInputError
from benchwright.web.runs.extraction import ExtractorConfig
from benchwright.web.runs.layout import WebRunLayout, is_web_run
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
    finish,
    load_web_manifest,
)
from benchwright.web.runs.suites import LOCAL, Suite, open_suite
from benchwright.web.tasks import (
    TaskFilter,
    parse_sites,
    parse_task_ids,
    require_known_ids,
    select,
)

if TYPE_CHECKING:
    from benchwright.web.stats_report import WebReport

# Selects another registered trial runner (tests use `fake`); deliberately not a CLI option.
RUNNER_ENV = "BENCHWRIGHT_WEB_TRIAL_RUNNER"


def run_web_cmd(
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
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run a browser agent through web tasks (N trials each), score every trial, and report."""
    opened: Suite | None = None
    if resume:
        run_dir = _resumable(out)
    else:
        opened = open_suite(suite, config)
        extractor = _extractor(extract_model, base_url, api_key_env)
        run_config = WebRunConfig(
            suite=opened.name, task_ids=_task_ids(opened, task_ids, sites),
            agent=AgentSpec(name=agent, model=model, base_url=base_url, api_key_env=api_key_env),
            scripts_dir=_scripts(scripts), trials=trials, max_steps=max_steps,
            env_config=config.resolve() if config else None,
            runner=os.environ.get(RUNNER_ENV) or "browser", extractor=extractor,
            keep_browser_files=keep_browser_files, cookie_files=_cookie_files(cookies or []))
        run_dir = out or _default_out(agent)
        create_web_run(run_config, run_dir, opened)
    result = _execute(run_dir, opened, quiet=as_json)
    if as_json:
        echo_json(result_fields(result))
    else:
        Console().print(_summary_line(result), highlight=False)
        Console(stderr=True).print(f"[dim]report: {result.report}[/]")


def _resumable(out: Path | None) -> Path:
    if out is None:
        raise UserInputError("--resume needs the run directory",
                             hint="pass --out RUN_DIR --resume")
    load_web_manifest(out)
    return out


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
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path("benchwright-out") / "runs" / f"web-{agent}-{stamp}"


def _execute(run_dir: Path, suite: Suite | None, quiet: bool) -> WebRunResult:
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
            return execute_web_run(run_dir, hooks, suite=suite)
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


def eval_web_run(run_dir: Path, config: Path | None, as_json: bool) -> None:
    """`benchwright eval RUN_DIR` on a web run: re-score every trial offline, rewrite report.md
    and result.json."""
    from benchwright.cli.web_cmd import eval_json, print_report

    with Console(stderr=True).status("scoring") as status:
        scored = finish(run_dir, status.update, force=True, config=config)
    if as_json:
        echo_json(eval_json(scored.summary, scored.report))
        return
    print_report(Console(), scored.summary, scored.report)


def web_run_report(run_dir: Path, baseline: Path | None) -> WebReport:
    """The statistics of a scored web run (against a baseline run or scored folder)."""
    from benchwright.web.scoring import load_summary
    from benchwright.web.stats_report import build_report

    load_web_manifest(run_dir)  # a damaged manifest is named before its scores are read
    before = load_summary(_tasks_dir(baseline)) if baseline is not None else None
    return build_report(load_summary(_tasks_dir(run_dir)), before)


def _tasks_dir(folder: Path) -> Path:
    return WebRunLayout(folder).tasks_dir if is_web_run(folder) else folder
