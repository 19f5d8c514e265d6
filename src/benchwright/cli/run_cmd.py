"""`benchwright run coding`: agents through every checkpoint of problems, resumable. The command
parses its options and calls `benchwright.run_coding` (`api/coding.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchwright.cli.executor_options import (
    EXECUTOR_DEFAULTS,
    MAY_CHANGE,
    ExecutorOption,
    JobCpusOption,
    JobMemoryOption,
    RayAddressOption,
    placement,
)
from benchwright.cli.json_output import echo_json, result_fields
from benchwright.cli.look_next import print_look_next
from benchwright.cli.option_checks import (
    MAX_SNAPSHOT_FILES,
    MAX_SNAPSHOT_MB,
    MAX_TRIALS,
    MAX_WORKERS,
    existing_dir,
    existing_path,
    key_values,
    new_dir,
)
from benchwright.cli.option_values import (
    MAX_SNAPSHOT_FILES as DEFAULT_MAX_SNAPSHOT_FILES,
)
from benchwright.cli.option_values import (
    MAX_SNAPSHOT_MB as DEFAULT_MAX_SNAPSHOT_MB,
)
from benchwright.cli.option_values import (
    PassPolicyChoice,
    StartFromChoice,
    ThinkingChoice,
    plain,
)
from benchwright.cli.progress_bar import RunProgress
from benchwright.cli.resume_options import refuse_conflicts
from benchwright.cli.runtime_options import ImageOption, RuntimeOption
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
from benchwright.errors import ReplayDivergence, RunIncomplete
from benchwright.registry import CODING_AGENTS

# The track and the API are imported inside the functions that run a command: `--help` and a
# bad option load neither (bench/cli_startup.py, tests/cli/test_startup.py).
if TYPE_CHECKING:
    from collections.abc import Callable

    from benchwright.api.coding import CodingHooks, CodingOptions
    from benchwright.coding.attempts.models import RunConfig, RunResult
    from benchwright.coding.report.figures import CodingReport
    from benchwright.stats.sequential import Look

BASE_URL_ENV = "BENCHWRIGHT_LLM_BASE_URL"

ProblemsDirOption = Annotated[Path | None, typer.Option(
    parser=existing_dir, metavar="DIR",
    help="Folder of problems (SCBench format); default: the bundled examples.")]
ProblemOption = Annotated[list[str] | None, typer.Option(
    metavar="NAME",
    help="A problem to run (repeatable); default: every problem in the folder.")]
AgentOption = Annotated[str, typer.Option(
    metavar="NAME", help=f"One of: {', '.join(CODING_AGENTS.table)}; a plugin's "
    "(`benchwright agents list`), or module:Class.")]
AgentVersionOption = Annotated[str | None, typer.Option(
    metavar="X.Y.Z", help="Install and run this version of a CLI agent (claude_code, "
    "codex, gemini, opencode, openhands); default: the version benchwright pins.")]
AgentCommandOption = Annotated[str | None, typer.Option(
    metavar="CMD", help="Shell command for the `command` agent (prompt on stdin).")]
AgentMountOption = Annotated[list[Path] | None, typer.Option(
    parser=existing_path, metavar="PATH",
    help="A host file or folder bound read-only into the `command` agent's sandbox at the "
    "same path, e.g. the agent's own scripts (repeatable).")]
ReplayFromOption = Annotated[Path | None, typer.Option(
    metavar="RUN_DIR", help="Run directory whose snapshots the `replay` agent re-applies.")]
ModelOption = Annotated[str | None, typer.Option(metavar="MODEL",
    help="Model name passed to the agent.")]
ThinkingOption = Annotated[ThinkingChoice | None, typer.Option(
    help="SCBench's thinking preset: none (the agent's default), disabled, low (4,000 "
    "tokens), medium (10,000), high (31,999); effort-level agents read low, medium, high.")]
ThinkingBudgetOption = Annotated[int | None, typer.Option(
    min=0, max=10**9, metavar="TOKENS",
    help="Reasoning tokens per model call, instead of a --thinking preset.")]
StepLimitOption = Annotated[int | None, typer.Option(
    min=0, max=1_000_000, metavar="N",
    help="Model calls per checkpoint (0: no limit); default 100.")]
PromptOption = Annotated[str, typer.Option(
    metavar="NAME|FILE",
    help="Prompt template: just-solve, plan-first or a .jinja file.")]
TrialsOption = Annotated[int, typer.Option(min=1, max=MAX_TRIALS, help="Attempts per problem.")]
WorkersOption = Annotated[int, typer.Option(min=1, max=MAX_WORKERS, help="Attempts run at once.")]
PassPolicyOption = Annotated[PassPolicyChoice, typer.Option(
    metavar="POLICY",  # the six choices in the help's text: as the option's term, too wide
    help=f"A checkpoint failing it ends the attempt: {', '.join(PassPolicyChoice)}.")]
StartFromOption = Annotated[StartFromChoice, typer.Option(
    help="What checkpoints 2+ start from: chain (the agent's own code) or reference (the "
    "previous checkpoint's reference solution; every checkpoint is attempted).")]
OutOption = Annotated[Path | None, typer.Option(
    parser=new_dir, metavar="RUN_DIR", help="The run directory to create.")]
ResumeOption = Annotated[Path | None, typer.Option(
    metavar="RUN_DIR",
    help="Finish an interrupted run (its saved configuration is used; only --workers and "
    "--json may be given with it).")]
PythonOption = Annotated[str | None, typer.Option(
    metavar="VERSION|PATH", help="Python for grading environments.")]
BaseUrlOption = Annotated[str | None, typer.Option(
    envvar=BASE_URL_ENV, metavar="URL",
    help="The model provider's base URL (e.g. a fake LLM server's http://HOST:PORT/v1).")]
LlmRecordOption = Annotated[Path | None, typer.Option(
    metavar="DIR", help="Record every model call into this cassette folder (docs/cassettes.md).")]
LlmReplayOption = Annotated[Path | None, typer.Option(
    metavar="DIR", help="Answer every model call from this cassette: no network, no key.")]
AgentKeyValueOption = Annotated[list[str] | None, typer.Option(
    "--agent-option", "-A", metavar="KEY=VALUE",
    help="Any other LLM-agent setting (repeatable), e.g. cost_limit_usd=1, llm_retries=3, "
    "infra_retries=0 (docs/agents.md).")]
MaxCostOption = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="Spend allowed per checkpoint (0: none; default 3 for agents with "
    "a limit); refused when the model has no known price and no --price-in/--price-out.")]
PriceInOption = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="The model's price per million prompt tokens (a model "
    "benchwright has no price for: its cost is otherwise unknown).")]
PriceOutOption = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="The model's price per million generated tokens.")]
AgentNetworkOption = Annotated[bool, typer.Option(
    "--agent-network", help="Let the agent's sandbox reach its LLM endpoint and nothing else, "
    "through an egress proxy: --base-url, else (CLI agents) the API host of the provider whose "
    "key is set; `-A package_indexes=true` adds the package indexes. mini's commands reach "
    "only the package indexes. Without it the sandbox has no network; under "
    "--unsafe-no-sandbox, the host's.")]
UnsafeNoSandboxOption = Annotated[bool, typer.Option(
    "--unsafe-no-sandbox", help="Run agents and tests without bubblewrap.")]
MetricsOption = Annotated[bool, typer.Option(
    "--metrics/--no-metrics", help="Measure code quality at every checkpoint.")]
MaxSnapshotMbOption = Annotated[float, typer.Option(
    min=0.001, max=MAX_SNAPSHOT_MB, metavar="MIB",
    help="Cap on one checkpoint's snapshot (MiB, apparent size); past it the checkpoint "
    "fails as the agent's error.")]
MaxSnapshotFilesOption = Annotated[int, typer.Option(
    min=1, max=MAX_SNAPSHOT_FILES, metavar="N",
    help="Cap on the files of one checkpoint's snapshot; past it, as above.")]
JudgeModelOption = Annotated[str | None, typer.Option(
    metavar="MODEL",
    help="Judge each checkpoint's code with this LLM as it finishes (as `metrics judge`).")]
JudgeRubricOption = Annotated[Path | None, typer.Option(
    metavar="FILE",
    help="The judge's rubric (JSONL, SCBench's format); default: benchwright's.")]
JudgeKeyValueOption = Annotated[list[str] | None, typer.Option(
    "--judge-option", "-J", metavar="KEY=VALUE", help="A judge setting (repeatable), e.g. "
    "base_url=..., protocol=anthropic, api_key_env=NAME, samples=3.")]


def coding_cmd(
    ctx: typer.Context,
    problems_dir: ProblemsDirOption = None,
    problem: ProblemOption = None,
    agent: AgentOption = "oracle",
    agent_version: AgentVersionOption = None,
    agent_command: AgentCommandOption = None,
    agent_mount: AgentMountOption = None,
    replay_from: ReplayFromOption = None,
    model: ModelOption = None,
    thinking: ThinkingOption = None,
    thinking_budget: ThinkingBudgetOption = None,
    step_limit: StepLimitOption = None,
    prompt: PromptOption = "just-solve",
    trials: TrialsOption = 1,
    workers: WorkersOption = 1,
    pass_policy: PassPolicyOption = PassPolicyChoice.CORE_CASES,
    start_from: StartFromOption = StartFromChoice.CHAIN,
    out: OutOption = None,
    resume: ResumeOption = None,
    python: PythonOption = None,
    base_url: BaseUrlOption = None,
    llm_record: LlmRecordOption = None,
    llm_replay: LlmReplayOption = None,
    agent_option: AgentKeyValueOption = None,
    max_cost: MaxCostOption = None,
    price_in: PriceInOption = None,
    price_out: PriceOutOption = None,
    agent_network: AgentNetworkOption = False,
    unsafe_no_sandbox: UnsafeNoSandboxOption = False,
    runtime: RuntimeOption = "bwrap",
    image: ImageOption = None,
    metrics: MetricsOption = True,
    max_snapshot_mb: MaxSnapshotMbOption = DEFAULT_MAX_SNAPSHOT_MB,
    max_snapshot_files: MaxSnapshotFilesOption = DEFAULT_MAX_SNAPSHOT_FILES,
    judge_model: JudgeModelOption = None,
    judge_rubric: JudgeRubricOption = None,
    judge_option: JudgeKeyValueOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = EXECUTOR_DEFAULTS.address,
    job_cpus: JobCpusOption = EXECUTOR_DEFAULTS.job_cpus,
    job_memory_mb: JobMemoryOption = EXECUTOR_DEFAULTS.job_memory_mb,
    baseline: BaselineOption = None,
    until_decided: UntilDecidedOption = False,
    max_rounds: MaxRoundsOption = 10,
    margin: MarginOption = None,
    budget_usd: BudgetUsdOption = None,
    budget_minutes: BudgetMinutesOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run an agent through every checkpoint of each problem, grade each, and report."""
    if until_decided or (resume is not None and _is_sequence(resume)):
        return _sequence(ctx, resume, workers, as_json)
    _plain(ctx, resume, workers, as_json)


def _is_sequence(run_dir: Path) -> bool:
    """Whether the run to resume is an `--until-decided` sequence."""
    from benchwright.api.until_decided import is_sequence

    return is_sequence(run_dir)


def _plain(ctx: typer.Context, resume: Path | None, workers: int, as_json: bool) -> None:
    """A run of the configured trials (new, or resumed)."""
    refuse_stray(ctx)
    if resume is None:
        CODING_AGENTS.check(ctx.params["agent"])  # as run_coding would, before importing it
    from benchwright.api.coding import run_coding

    if resume is not None:
        _refuse_resume_conflicts(ctx, resume)
        call: dict[str, Any] = {"resume": resume, **placement(ctx.params)}
    else:
        call = {"problems_dir": ctx.params["problems_dir"], "out": ctx.params["out"],
                **coding_options(ctx.params)}
    reports: list[CodingReport] = []
    with RunProgress("checkpoints", quiet=as_json) as bar:
        result = run_coding(workers=workers, hooks=_hooks(bar, reports.append), **call)
    if as_json:
        echo_json(result_fields(result))
    else:
        _print_summary(result, reports[-1])
        print_look_next(result.run_dir)
    _end(result, result.run_dir)


def _print_summary(result: RunResult, report: CodingReport, *notes: str) -> None:
    """The run's summary table on stdout; `notes`, then the report's path, on stderr."""
    from rich.console import Console

    from benchwright.cli.render import run_summary_view
    from benchwright.coding.attempts.layout import RunLayout

    Console(soft_wrap=True).print(run_summary_view(result, report))
    for line in notes:
        notes_console().print(line)
    notes_console().print(f"[dim]report: {RunLayout(result.run_dir).report_md}[/]")


def coding_options(params: dict[str, Any]) -> CodingOptions:
    """The command line's options as `run_coding` takes them (unset ones left out)."""
    renamed = {"problem": "problems", "agent_mount": "agent_mounts"}
    skip = {"problems_dir", "out", "resume", "workers", "as_json", "agent_option",
            "judge_option", *SEQUENCE_PARAMS}
    options: dict[str, Any] = {renamed.get(k, k): plain(v) for k, v in params.items()
                               if k not in skip and v is not None}
    options["agent_options"] = parse_agent_options(params.get("agent_option") or [])
    if params.get("judge_option"):
        options["judge_options"] = key_values(params["judge_option"], "judge",
                                              _judge_option_keys())
    return options  # type: ignore[return-value]  # keys are CodingOptions' (a test checks)


def _judge_option_keys() -> list[str]:
    """The judge settings `--judge-option` may set."""
    from benchwright.judge.models import JudgeSettings

    return [k for k in JudgeSettings.model_fields if k not in ("model", "rubric")]


def _sequence(ctx: typer.Context, resume: Path | None, workers: int, as_json: bool) -> None:
    """`--until-decided`: rounds until the comparison is decided, each look on stderr."""
    from benchwright.api.until_decided import resume_until_decided, run_until_decided

    notes = notes_console()
    reports: list[CodingReport] = []

    def on_look(look: Look) -> None:
        notes.print(look_line(look))

    with RunProgress("checkpoints", quiet=as_json) as bar:
        hooks = _hooks(bar, reports.append)
        if resume is not None:
            _refuse_resume_conflicts(ctx, resume)
            result, state = resume_until_decided(resume, workers, hooks, on_look)
        else:
            settings = sequence_settings(ctx.params)
            result, state = run_until_decided(
                ctx.params["problems_dir"], baseline=ctx.params["baseline"], settings=settings,
                out=ctx.params["out"], workers=workers, hooks=hooks, on_look=on_look,
                **coding_options(ctx.params))
    if as_json:
        echo_json({**result_fields(result), "sequence": state.model_dump(mode="json")})
    else:
        _print_summary(result, reports[-1],
                       f"stopped after round {len(state.looks)}: {state.stopped}")
    _end(result, result.run_dir)


def parse_agent_options(options: list[str]) -> dict[str, str]:
    """`-A KEY=VALUE` options as a dict (the values are validated by `AgentSettings`)."""
    from benchwright.coding.agents.settings import AgentSettings

    return key_values(options, "agent", list(AgentSettings.model_fields))


def _end(result: RunResult, run_dir: Path) -> None:
    """Name agent failures and broken-off attempts; the latter make the exit code 4."""
    from rich.console import Console

    from benchwright.coding.report.run_report import print_run_problems
    from benchwright.llm.replay_keys import first_divergence

    print_run_problems(result, Console(stderr=True, highlight=False))
    diverged = first_divergence(result.infra_errors)
    if diverged is not None:
        raise ReplayDivergence(diverged)
    if result.errors:
        raise RunIncomplete(f"{len(result.errors)} attempt(s) broke off with an error, first: "
                            f"{result.errors[0]}",
                            hint=f"fix the cause, then: benchwright run coding --resume {run_dir}")


def _refuse_resume_conflicts(ctx: typer.Context, run_dir: Path) -> None:
    """The command line must not contradict the saved configuration of the run to continue."""
    from benchwright.coding.agents.settings import AgentSettings
    from benchwright.coding.attempts.preflight import prompt_setting, resolved
    from benchwright.coding.track import TRACK
    from benchwright.runs import open_saved

    config = open_saved(TRACK, run_dir).config  # a web run folder: say so, how to continue it
    settings = config.agent_settings
    saved = {"problems_dir": config.problems_dir, "problem": config.problems,
             "agent": config.agent, "agent_version": config.agent_version,
             "agent_command": config.agent_command, "agent_mount": config.agent_mounts,
             "replay_from": config.replay_from, "model": config.model,
             "thinking": settings.thinking, "thinking_budget": settings.thinking_budget,
             "step_limit": settings.step_limit, "prompt": config.prompt,
             "trials": config.trials, "pass_policy": config.pass_policy,
             "start_from": config.start_from,
             "python": config.python, "base_url": settings.base_url,
             "max_cost": settings.cost_limit_usd, "price_in": settings.input_price_per_mtok,
             "price_out": settings.output_price_per_mtok,
             "agent_network": config.agent_network,
             "unsafe_no_sandbox": config.unsafe_no_sandbox, "metrics": config.metrics,
             "runtime": config.runtime, "image": config.image,
             "agent_option": settings.model_dump(mode="json"), "out": resolved(run_dir),
             **_saved_traffic(config),
             **_saved_judge(config)}
    refuse_conflicts(ctx, saved, may_change={"workers", "as_json", "resume", "until_decided",
                                             *MAY_CHANGE},
                     normalise={
        "problems_dir": resolved, "replay_from": resolved, "prompt": prompt_setting,
        "llm_record": resolved, "llm_replay": resolved,
        "out": resolved,
        "agent_mount": lambda paths: [resolved(p) for p in paths],
        "agent_option": lambda opts: {**settings.model_dump(mode="json"), **AgentSettings(
            **parse_agent_options(opts)).model_dump(mode="json", exclude_unset=True)},
        "judge_rubric": resolved, "judge_option": lambda opts: _judge_options(config, opts)},
        command="benchwright run coding --out NEW_DIR")


def _saved_traffic(config: RunConfig) -> dict[str, Any]:
    """--llm-record / --llm-replay as the saved configuration has them."""
    llm = config.llm
    return {"llm_record": llm.cassette if llm and llm.mode == "record" else None,
            "llm_replay": llm.cassette if llm and llm.mode == "replay" else None}


def _saved_judge(config: RunConfig) -> dict[str, Any]:
    """The judge options as the saved configuration has them."""
    judge = config.judge
    return {"judge_model": judge.model if judge else None,
            "judge_rubric": judge.rubric if judge else None,
            "judge_option": judge.model_dump(mode="json") if judge else None}


def _judge_options(config: RunConfig, options: list[str]) -> dict[str, Any] | None:
    """`--judge-option`s given on resume, over the saved judge's settings."""
    from benchwright.api.coding import judge_settings_of

    if config.judge is None:
        return {"given": options}  # never equal to the saved None: a conflict
    given = judge_settings_of({"model": config.judge.model,
                               **key_values(options, "judge", _judge_option_keys())})
    return {**config.judge.model_dump(mode="json"),
            **given.model_dump(mode="json", exclude_unset=True, exclude={"model", "rubric"})}


def _hooks(progress: RunProgress, on_report: Callable[[CodingReport], None]) -> CodingHooks:
    """The run's progress bar on stderr: it counts only checkpoints that will run."""
    from benchwright.api.coding import CodingHooks
    from benchwright.coding.attempts.models import ChainSummary, CheckpointRecord, InfraErrorRecord
    from benchwright.coding.attempts.progress import CheckpointTally

    tally = CheckpointTally()  # counts only checkpoints that will run, after resume trimming

    def show(description: str | None = None) -> None:
        progress.update(total=tally.total, completed=tally.completed, description=description)

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

    return CodingHooks(on_plan=on_plan, on_event=on_event, on_summary=on_summary,
                       on_report=on_report)
