"""`benchwright run coding`: agents through every checkpoint of problems, resumable."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchwright.cli.json_output import echo_json, result_fields
from benchwright.cli.option_checks import MAX_TRIALS, MAX_WORKERS, existing_dir, new_dir
from benchwright.cli.render import run_summary_view
from benchwright.cli.run_web_cmd import run_web_cmd
from benchwright.coding.examples import examples_dir
from benchwright.coding.loader import load_problem
from benchwright.coding.policies import PassPolicy
from benchwright.coding.prompts import check_template
from benchwright.errors import Interrupted, PrerequisiteError, UserInputError
from benchwright.executors.local import LocalExecutor
from benchwright.fileio import write_text_atomic
from benchwright.interpreters import resolve_python
from benchwright.metrics.tools import versions
from benchwright.registry import AGENTS
from benchwright.report.coding import build_report
from benchwright.report.markdown import render_markdown
from benchwright.runs import journal
from benchwright.runs.layout import RunLayout
from benchwright.runs.models import (
    AgentSettings,
    CheckpointRecord,
    InfraErrorRecord,
    RunConfig,
    RunResult,
)
from benchwright.runs.runner import create_run, execute, load_manifest, refresh_checksums

app = typer.Typer(help="Run agents through benchmarks.", no_args_is_help=True)
app.command("web")(run_web_cmd)


@app.command("coding")
def coding_cmd(
    problems_dir: Annotated[Path | None, typer.Option(
        parser=existing_dir,
        help="Folder of problems (SCBench format); default: the bundled examples.")] = None,
    problem: Annotated[list[str] | None, typer.Option(
        help="A problem to run (repeatable); default: every problem in the folder.")] = None,
    agent: Annotated[str, typer.Option(help=f"One of: {', '.join(AGENTS)}.")] = "oracle",
    agent_command: Annotated[str | None, typer.Option(
        help="Shell command for the `command` agent (prompt on stdin).")] = None,
    replay_from: Annotated[Path | None, typer.Option(
        help="Run directory whose snapshots the `replay` agent re-applies.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name passed to the agent.")] = None,
    prompt: Annotated[str, typer.Option(
        help="Prompt template: just-solve, plan-first or a .jinja file.")] = "just-solve",
    trials: Annotated[int, typer.Option(min=1, max=MAX_TRIALS, help="Attempts per problem.")
                      ] = 1,
    workers: Annotated[int, typer.Option(min=1, max=MAX_WORKERS, help="Attempts run at once.")
                       ] = 1,
    pass_policy: Annotated[PassPolicy, typer.Option(
        help="A checkpoint failing it ends the attempt.")] = PassPolicy.CORE_CASES,
    out: Annotated[Path | None, typer.Option(
        parser=new_dir, help="The run directory to create.")] = None,
    resume: Annotated[Path | None, typer.Option(
        help="Finish an interrupted run (its saved configuration is used).")] = None,
    python: Annotated[str | None, typer.Option(help="Python for grading environments.")] = None,
    base_url: Annotated[str | None, typer.Option(
        envvar="BENCHWRIGHT_LLM_BASE_URL",
        help="The model provider's base URL (e.g. a fake LLM server's http://HOST:PORT/v1).")
    ] = None,
    agent_option: Annotated[list[str] | None, typer.Option(
        "--agent-option", "-A", help="An LLM-agent setting KEY=VALUE (repeatable), e.g. "
        "step_limit=50, cost_limit_usd=1, llm_retries=3, infra_retries=0.")] = None,
    agent_network: Annotated[bool, typer.Option(
        "--agent-network", help="Give the agent's sandbox the network.")] = False,
    unsafe_no_sandbox: Annotated[bool, typer.Option(
        "--unsafe-no-sandbox", help="Run agents and tests without bubblewrap.")] = False,
    metrics: Annotated[bool, typer.Option(
        "--metrics/--no-metrics", help="Measure code quality at every checkpoint.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run an agent through every checkpoint of each problem, grade each, and report."""
    if resume is not None:
        run_dir, config = _resumed(resume)
    else:
        config = RunConfig(
            problems_dir=(problems_dir or examples_dir()).resolve(),
            problems=_problem_names(problems_dir or examples_dir(), problem or []),
            agent=_agent_name(agent), agent_command=agent_command, replay_from=replay_from,
            model=model, prompt=prompt, trials=trials, pass_policy=pass_policy, python=python,
            agent_network=agent_network, unsafe_no_sandbox=unsafe_no_sandbox, metrics=metrics,
            agent_settings=agent_settings(base_url, agent_option or []))
        check_template(prompt)
        _check_agent_inputs(config)
        run_dir = out or _default_out(agent)
        if config.metrics:
            _require_metric_tools()
        create_run(config, run_dir)
    result = _execute(run_dir, config, workers, quiet=as_json)
    report = build_report(run_dir)
    write_text_atomic(RunLayout(run_dir).report_md, render_markdown(report))
    if as_json:
        echo_json(result_fields(result))
    else:
        Console().print(run_summary_view(result, report))
        Console(stderr=True).print(f"[dim]report: {RunLayout(run_dir).report_md}[/]")


def agent_settings(base_url: str | None, options: list[str]) -> AgentSettings:
    """`--base-url` and `-A KEY=VALUE` options as validated settings."""
    values: dict[str, str] = {} if base_url is None else {"base_url": base_url}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or key.strip() not in AgentSettings.model_fields:
            raise UserInputError(f"not a KEY=VALUE agent option: {option!r}",
                                 hint=f"keys: {', '.join(AgentSettings.model_fields)}")
        values[key.strip()] = value.strip()
    try:
        return AgentSettings.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UserInputError(f"agent option {error['loc'][0]}: {error['msg']}") from None


def _check_agent_inputs(config: RunConfig) -> None:
    """Inputs every attempt would trip over, refused before the run folder exists."""
    resolve_python(config.python)
    if config.agent == "command" and not (config.agent_command or "").strip():
        raise UserInputError("the command agent needs --agent-command 'SHELL COMMAND'",
                             hint="the command gets the prompt on stdin")


def _require_metric_tools() -> None:
    try:
        versions()
    except PrerequisiteError as exc:
        raise PrerequisiteError(exc.message, hint=f"{exc.hint}, or pass --no-metrics") from None


def _resumed(run_dir: Path) -> tuple[Path, RunConfig]:
    manifest = refresh_checksums(run_dir, load_manifest(run_dir))
    if manifest.config.metrics:
        _require_metric_tools()
    return run_dir, manifest.config


def _agent_name(name: str) -> str:
    if name not in AGENTS:
        raise UserInputError(f"unknown agent {name!r}", hint=f"choose one of: {', '.join(AGENTS)}")
    return name


def _problem_names(folder: Path, wanted: list[str]) -> list[str]:
    if not folder.is_dir():
        raise UserInputError("problems folder not found", path=folder,
                             hint="pass the folder that holds one folder per problem")
    # a config.yaml that is not a file still marks a problem: load_problem then says what is wrong
    available = sorted(p.name for p in folder.iterdir() if (p / "config.yaml").exists())
    if not available:
        raise UserInputError("no problem here (no folder holding a config.yaml)", path=folder,
                             hint="pass the folder that holds one folder per problem")
    for name in wanted:
        if name not in available:
            raise UserInputError(f"no problem named {name!r}", path=folder,
                                 hint=f"choose from: {', '.join(available) or 'none here'}")
    names = wanted or available
    for name in names:
        problem = load_problem(folder / name)
        for checkpoint in problem.ordered_checkpoints():
            problem.render_spec(checkpoint.name)  # a missing or unreadable spec stops us here
    return names


def _default_out(agent: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path("benchwright-out") / "runs" / f"{agent}-{stamp}"


def _execute(run_dir: Path, config: RunConfig, workers: int, quiet: bool) -> RunResult:
    layout = RunLayout(run_dir)
    manifest = load_manifest(run_dir)
    total = sum(len(manifest.problem_checkpoints[p]) for p in config.problems) * config.trials
    done = sum(len(journal.read_records(layout.journal(p, t)))
               for p in config.problems for t in range(1, config.trials + 1))
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=Console(stderr=True), disable=quiet)
    task = progress.add_task("checkpoints", total=total, completed=done)

    def on_event(event: Any) -> None:
        if isinstance(event, CheckpointRecord):
            mark = "solved" if event.solved else ("passed" if event.passed else "failed")
            progress.update(task, advance=1,
                            description=f"{event.problem}/{event.checkpoint}: {mark}")
        elif isinstance(event, InfraErrorRecord):
            progress.update(task, description=f"{event.problem}/{event.checkpoint}: "
                                              "infrastructure error")

    try:
        with progress:
            return execute(run_dir, config, LocalExecutor(workers, on_event=on_event))
    except KeyboardInterrupt:
        raise Interrupted("interrupted; nothing finished is lost",
                             hint=f"continue with: benchwright run coding --resume {run_dir}"
                             ) from None

