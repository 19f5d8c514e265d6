"""`benchwright run coding`: agents through every checkpoint of problems, resumable."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchwright.cli.executor_options import (
    MAY_CHANGE,
    ExecutorOption,
    JobCpusOption,
    JobMemoryOption,
    RayAddressOption,
    make_executor,
)
from benchwright.cli.json_output import echo_json, result_fields
from benchwright.cli.judge_cmd import judge_settings
from benchwright.cli.look_next import print_look_next
from benchwright.cli.option_checks import (
    MAX_SNAPSHOT_FILES,
    MAX_SNAPSHOT_MB,
    MAX_TRIALS,
    MAX_WORKERS,
    existing_dir,
    existing_path,
    new_dir,
)
from benchwright.cli.render import run_summary_view
from benchwright.cli.resume_options import refuse_conflicts
from benchwright.cli.run_web_cmd import run_web_cmd
from benchwright.coding.agents.settings import AgentSettings
from benchwright.coding.examples import examples_dir
from benchwright.coding.loader import load_problem
from benchwright.coding.policies import PassPolicy
from benchwright.coding.report.run_report import print_run_problems, write_run_report
from benchwright.coding.runs.judging import check_judge
from benchwright.coding.runs.layout import RunLayout
from benchwright.coding.runs.models import (
    ChainSummary,
    CheckpointRecord,
    InfraErrorRecord,
    RunConfig,
    RunResult,
    StartFrom,
)
from benchwright.coding.runs.preflight import (
    check_coding_run,
    check_resumable,
    node_checks,
    prompt_setting,
    resolved,
)
from benchwright.coding.runs.progress import CheckpointTally
from benchwright.coding.runs.runner import create_run, execute, load_manifest, refresh_checksums
from benchwright.coding.runs.scbench.run_name import run_name, unused
from benchwright.coding.runs.snapshots import DEFAULT_MAX_SNAPSHOT_FILES, DEFAULT_MAX_SNAPSHOT_MB
from benchwright.coding.scratch import sweep_leftovers
from benchwright.errors import Interrupted, PrerequisiteError, RunIncomplete, UserInputError
from benchwright.metrics.tools import versions
from benchwright.registry import CODING_AGENTS
from benchwright.runs import open_run
from benchwright.runs.lock import locked_run_folder
from benchwright.runs.node_checks import require_on_every_node

RUNS_FOLDER = Path("benchwright-out") / "runs"
"""Where a coding run goes without --out: <model>/<agent>-<version>_<prompt>_<thinking>_<stamp>."""

app = typer.Typer(help="Run agents through benchmarks.", no_args_is_help=True)
app.command("web")(run_web_cmd)


@app.command("coding")
def coding_cmd(
    ctx: typer.Context,
    problems_dir: Annotated[Path | None, typer.Option(
        parser=existing_dir,
        help="Folder of problems (SCBench format); default: the bundled examples.")] = None,
    problem: Annotated[list[str] | None, typer.Option(
        help="A problem to run (repeatable); default: every problem in the folder.")] = None,
    agent: Annotated[str, typer.Option(help=f"One of: {', '.join(CODING_AGENTS)}.")] = "oracle",
    agent_command: Annotated[str | None, typer.Option(
        help="Shell command for the `command` agent (prompt on stdin).")] = None,
    agent_mount: Annotated[list[Path] | None, typer.Option(
        parser=existing_path,
        help="A host file or folder bound read-only into the `command` agent's sandbox at the "
        "same path, e.g. the agent's own scripts (repeatable).")] = None,
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
    start_from: Annotated[StartFrom, typer.Option(
        help="What checkpoints 2+ start from: chain (the agent's own code) or reference (the "
        "previous checkpoint's reference solution; every checkpoint is attempted).")
    ] = StartFrom.CHAIN,
    out: Annotated[Path | None, typer.Option(
        parser=new_dir, help="The run directory to create.")] = None,
    resume: Annotated[Path | None, typer.Option(
        help="Finish an interrupted run (its saved configuration is used; only --workers and "
        "--json may be given with it).")] = None,
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
    max_snapshot_mb: Annotated[float, typer.Option(
        min=0.001, max=MAX_SNAPSHOT_MB,
        help="Cap on one checkpoint's snapshot (MiB, apparent size); past it the "
        "checkpoint fails as the agent's error.")] = DEFAULT_MAX_SNAPSHOT_MB,
    max_snapshot_files: Annotated[int, typer.Option(
        min=1, max=MAX_SNAPSHOT_FILES,
        help="Cap on the files of one checkpoint's snapshot; past it, as above.")
    ] = DEFAULT_MAX_SNAPSHOT_FILES,
    judge_model: Annotated[str | None, typer.Option(
        help="Judge each checkpoint's code with this LLM as it finishes (as `metrics judge`).")
    ] = None,
    judge_rubric: Annotated[Path | None, typer.Option(
        help="The judge's rubric (JSONL, SCBench's format); default: benchwright's.")] = None,
    judge_option: Annotated[list[str] | None, typer.Option(
        "--judge-option", "-J", help="A judge setting KEY=VALUE (repeatable), e.g. "
        "base_url=..., protocol=anthropic, api_key_env=NAME, samples=3.")] = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = "auto",
    job_cpus: JobCpusOption = 1.0,
    job_memory_mb: JobMemoryOption = 2048,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run an agent through every checkpoint of each problem, grade each, and report."""
    _run_coding(ctx, resume, workers, as_json)


def _run_coding(ctx: typer.Context, resume: Path | None, workers: int, as_json: bool) -> None:
    if resume is not None:
        run_dir, config = resume.resolve(), _resumed(ctx, resume)
    else:
        run_dir, config = _new_run(ctx.params)
    # every node has what attempts need there, before a run folder is made
    require_on_every_node(make_executor(ctx.params, workers), node_checks(config))
    with locked_run_folder(run_dir):
        if resume is None:
            create_run(config, run_dir)
        else:
            refresh_checksums(run_dir, load_manifest(run_dir))
        # what a killed predecessor left: scratch folders holding hidden tests
        sweep_leftovers(RunLayout(run_dir).grading_dir)
        sweep_leftovers()
        result = _execute(run_dir, config, ctx.params, quiet=as_json)
        report = write_run_report(run_dir, result)  # the coding track's report.md
    if as_json:
        echo_json(result_fields(result))
    else:
        Console(soft_wrap=True).print(run_summary_view(result, report))
        Console(stderr=True).print(f"[dim]report: {RunLayout(run_dir).report_md}[/]")
        print_look_next(run_dir)
    _end(result, run_dir)


def _new_run(options: dict[str, Any]) -> tuple[Path, RunConfig]:
    """The folder and configuration of a new run, checked before the folder exists (a run that
    every attempt would fail is refused and leaves nothing behind)."""
    folder = options["problems_dir"] or examples_dir()
    config = RunConfig(
        problems_dir=folder.resolve(), problems=_problem_names(folder, options["problem"] or []),
        agent=_agent_name(options["agent"]), agent_command=options["agent_command"],
        agent_mounts=[m.expanduser().resolve() for m in options["agent_mount"] or []],
        replay_from=resolved(options["replay_from"]), model=options["model"],
        prompt=prompt_setting(options["prompt"]), trials=options["trials"],
        pass_policy=options["pass_policy"], start_from=options["start_from"],
        python=options["python"],
        agent_network=options["agent_network"], unsafe_no_sandbox=options["unsafe_no_sandbox"],
        metrics=options["metrics"], max_snapshot_mb=options["max_snapshot_mb"],
        max_snapshot_files=options["max_snapshot_files"],
        agent_settings=agent_settings(options["base_url"], options["agent_option"] or []),
        judge=judge_settings(options["judge_model"], options["judge_rubric"],
                             options["judge_option"] or []))
    run_dir = _new_run_dir(options["out"] or unused(RUNS_FOLDER / run_name(config)))
    if config.metrics:
        _require_metric_tools()
    check_coding_run(config)
    if config.judge is not None:
        check_judge(config.judge)
    return run_dir, config


def _end(result: RunResult, run_dir: Path) -> None:
    """Name agent failures and broken-off attempts; the latter make the exit code 4."""
    print_run_problems(result, Console(stderr=True, highlight=False))
    if result.errors:
        raise RunIncomplete(f"{len(result.errors)} attempt(s) broke off with an error, first: "
                            f"{result.errors[0]}",
                            hint=f"fix the cause, then: benchwright run coding --resume {run_dir}")


def _new_run_dir(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise UserInputError("--out is not a folder", path=out, hint="pass a new folder's path")
    return out.expanduser().resolve()


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


def _require_metric_tools() -> None:
    try:
        versions()
    except PrerequisiteError as exc:
        raise PrerequisiteError(exc.message, hint=f"{exc.hint}, or pass --no-metrics") from None


def _resumed(ctx: typer.Context, run_dir: Path) -> RunConfig:
    """The saved configuration, after checking the command line does not contradict it."""
    open_run(run_dir, expect="coding")  # a web run folder: say so, and how to continue it
    config = load_manifest(run_dir).config
    settings = config.agent_settings
    saved = {"problems_dir": config.problems_dir, "problem": config.problems,
             "agent": config.agent, "agent_command": config.agent_command,
             "agent_mount": config.agent_mounts, "replay_from": config.replay_from,
             "model": config.model, "prompt": config.prompt, "trials": config.trials,
             "pass_policy": config.pass_policy, "start_from": config.start_from,
             "python": config.python,
             "base_url": settings.base_url, "agent_network": config.agent_network,
             "unsafe_no_sandbox": config.unsafe_no_sandbox, "metrics": config.metrics,
             "agent_option": settings.model_dump(mode="json"),
             **_saved_judge(config)}
    refuse_conflicts(ctx, saved, may_change={"workers", "as_json", "resume", *MAY_CHANGE},
                     normalise={
        "problems_dir": resolved, "replay_from": resolved, "prompt": prompt_setting,
        "agent_mount": lambda paths: [resolved(p) for p in paths],
        "agent_option": lambda opts: {**settings.model_dump(mode="json"),
                                      **agent_settings(None, opts).model_dump(
                                          mode="json", exclude_unset=True)},
        "judge_rubric": resolved, "judge_option": lambda opts: _judge_options(config, opts)},
        command="benchwright run coding --out NEW_DIR")
    check_resumable(config)
    if config.judge is not None:
        check_judge(config.judge)
    if config.metrics:
        _require_metric_tools()
    return config


def _saved_judge(config: RunConfig) -> dict[str, Any]:
    """The judge options as the saved configuration has them."""
    judge = config.judge
    return {"judge_model": judge.model if judge else None,
            "judge_rubric": judge.rubric if judge else None,
            "judge_option": judge.model_dump(mode="json") if judge else None}


def _judge_options(config: RunConfig, options: list[str]) -> dict[str, Any] | None:
    """`--judge-option`s given on resume, over the saved judge's settings."""
    if config.judge is None:
        return {"given": options}  # never equal to the saved None: a conflict
    given = judge_settings(config.judge.model, None, options)
    assert given is not None
    return {**config.judge.model_dump(mode="json"),
            **given.model_dump(mode="json", exclude_unset=True, exclude={"model", "rubric"})}


def _agent_name(name: str) -> str:
    CODING_AGENTS.check(name)
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


def _execute(run_dir: Path, config: RunConfig, params: dict[str, Any], quiet: bool
             ) -> RunResult:
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=Console(stderr=True), disable=quiet)
    task = progress.add_task("checkpoints", total=None)
    tally = CheckpointTally()  # counts only checkpoints that will run, after resume trimming

    def show(description: str | None = None) -> None:
        progress.update(task, total=tally.total, completed=tally.completed,
                        description=description)

    def on_event(event: Any) -> None:
        if isinstance(event, CheckpointRecord):
            tally.record(event)
            mark = "solved" if event.solved else ("passed" if event.passed else "failed")
            show(f"{event.problem}/{event.checkpoint}: {mark}")
        elif isinstance(event, InfraErrorRecord):
            show(f"{event.problem}/{event.checkpoint}: infrastructure error")

    def on_plan(plan: dict[tuple[str, int], tuple[int, int]]) -> None:
        tally.start(plan)
        show()

    def on_summary(summary: ChainSummary) -> None:
        tally.summary(summary)
        show()

    try:
        with progress:
            executor = make_executor(params, params["workers"], on_event=on_event)
            return execute(run_dir, config, executor, on_summary=on_summary, on_plan=on_plan,
                           on_record=on_event)
    except KeyboardInterrupt:
        raise Interrupted("interrupted; nothing finished is lost",
                             hint=f"continue with: benchwright run coding --resume {run_dir}"
                             ) from None

