"""`benchwright eval`: grade saved work offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from benchwright.cli.executor_options import (
    EXECUTOR_DEFAULTS,
    ExecutorOption,
    JobCpusOption,
    JobMemoryOption,
    RayAddressOption,
    make_executor,
)
from benchwright.cli.option_checks import (
    MAX_MEMORY_MB,
    MAX_PROCESSES,
    MAX_WALL_CLOCK_S,
    MAX_WORKERS,
    MIN_MEMORY_MB,
    existing_dir,
    new_dir,
    seconds,
)
from benchwright.cli.runtime_options import ImageOption, RuntimeOption
from benchwright.errors import GradingInfrastructureError, SandboxKilled, UserInputError

# The tracks are imported inside the commands: this module is loaded by every
# `benchwright eval checkpoint`, whose start-up is part of the grading time measured against
# plain pytest (bench/grade_overhead.py).

MAX_REPEAT = 100
"""`eval --repeat`'s bound: each repeat grades the whole run again."""


class _EvalGroup(TyperGroup):
    """`eval RUN_DIR` and `eval checkpoint ...` side by side: a path means the `run` command."""

    default_command = "run"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # `eval --json RUN_DIR` as well as `eval RUN_DIR --json`: no subcommand named, a path given
        named = any(a in self.commands for a in args if not a.startswith("-"))
        if not named and any(not a.startswith("-") for a in args):
            args = [self.default_command, *args]
        parsed: list[str] = super().parse_args(ctx, args)
        return parsed


app = typer.Typer(
    help="Grade saved work offline. `benchwright eval RUN_DIR` re-grades (coding) or re-scores "
    "(web) a whole run (the word `run` may be left out); `benchwright eval checkpoint` grades "
    "one checkpoint on a snapshot.",
    no_args_is_help=True, cls=_EvalGroup, subcommand_metavar="RUN_DIR | COMMAND [ARGS]...")


@app.command("run")
def run_dir_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (coding or web), or a folder "
                                            "of WebArena agent logs.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the changes as JSON.")] = False,
    config: Annotated[Path | None, typer.Option(
        help="Web runs: site URLs (YAML), as for `benchwright web eval`.")] = None,
    workers: Annotated[int, typer.Option(
        min=1, max=MAX_WORKERS, help="Coding runs: checkpoints graded at once (--executor ray; "
        "locally they are graded one after another).")] = 1,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = EXECUTOR_DEFAULTS.address,
    job_cpus: JobCpusOption = EXECUTOR_DEFAULTS.job_cpus,
    job_memory_mb: JobMemoryOption = EXECUTOR_DEFAULTS.job_memory_mb,
    repeat: Annotated[int, typer.Option(
        min=1, max=MAX_REPEAT, metavar="N",
        help="Grade every checkpoint (or score every web trial) N times and report the "
        "grader's own noise: each verdict that changed, the flaky tests "
        "(grading_noise.json; report.md says it).")] = 1,
) -> None:
    """`eval RUN_DIR`: re-grade every saved snapshot of a run offline (or re-score a web run)
    and list each verdict that changed."""
    from benchwright.cli.verbosity import notes_console
    from benchwright.protocols import RegradeSettings
    from benchwright.registry import TRACKS
    from benchwright.runs import regrade

    where = make_executor(locals(), workers)
    if _is_web_layout(run_dir):
        if repeat > 1:
            raise UserInputError("--repeat needs a run folder (a coding or web run), not a "
                                 "folder of agent logs", path=run_dir,
                                 hint="leave out --repeat, or give the run's folder")
        from benchwright.cli.web_cmd import eval_cmd as web_eval

        web_eval(logs_dir=run_dir, config=config, as_json=as_json, baseline=None, force=True,
                 python=None)
        return
    with notes_console().status("re-grading") as status:  # the kernel opens, locks, sweeps
        track, outcome = regrade(run_dir, RegradeSettings(config=config, progress=status.update,
                                                          executor=where, repeat=repeat))
    TRACKS.part(track.name, "regrade_view")(run_dir, outcome, as_json)


def _is_web_layout(folder: Path) -> bool:
    """A folder of WebArena agent logs (`<task_id>/agent_response.json`), not a coding run."""
    if (folder / "manifest.json").is_file() or not folder.is_dir():
        return False
    return any(child.name.isdigit() and (child / "agent_response.json").exists()
               for child in folder.iterdir())


def _problem_dir(problems_dir: Path | None, problem: str) -> Path:
    """The problem `--problem` names in `--problems-dir` (default: the bundled examples)."""
    from benchwright.coding.problems.examples import example_problem_dir

    if problems_dir is None:
        return example_problem_dir(problem)
    folder = problems_dir / problem
    if Path(problem).name != problem or problem in (".", "..") or not folder.is_dir():
        # a name, never a path out of the folder; a folder that is there but broken is
        # load_problem's to describe
        available = sorted(p.name for p in problems_dir.iterdir()
                           if (p / "config.yaml").exists())
        raise UserInputError(f"no problem named {problem!r}", path=problems_dir,
                             hint=f"choose from: {', '.join(available) or 'none here'}")
    return folder


def _warn_without_entry_file(entry_file: str, snapshot: Path) -> None:
    """An empty workspace (or one without the entry file) is graded, as SCBench and `run coding`
    grade it, so its failures count; the warning says why every test will fail."""
    if snapshot.is_dir() and not (snapshot / entry_file).is_file():
        from rich.console import Console

        what = "the workspace is empty" if not any(snapshot.iterdir()) else f"no {entry_file}"
        Console(stderr=True).print(
            f"[yellow]warning:[/] {what} in {snapshot}; grading it anyway (its tests will fail)",
            highlight=False, soft_wrap=True)


def _default_out(problem: str, checkpoint: str) -> Path:
    from benchwright.runs.clock import folder_stamp

    stamp = folder_stamp()
    return Path("benchwright-out") / "eval" / problem / f"{checkpoint}-{stamp}"


CheckpointOption = Annotated[str, typer.Option(metavar="NAME",
    help="The checkpoint, e.g. checkpoint_2.")]
ProblemOption = Annotated[str, typer.Option(metavar="NAME", help="The problem, in --problems-dir "
    "(default: a bundled example).")]
ProblemsDirOption = Annotated[Path | None, typer.Option(
    parser=existing_dir, metavar="DIR",
    help="Folder of problems (SCBench format); default: the bundled examples.")]
WorkspaceOption = Annotated[Path | None, typer.Option(
    metavar="DIR",
    help="The snapshot to grade; default: the checkpoint's reference solution.")]
OutOption = Annotated[Path | None, typer.Option(
    parser=new_dir, metavar="DIR",
    help="Where to write evaluation.json and the raw output.")]
PythonOption = Annotated[str | None, typer.Option(
    metavar="VERSION|PATH",
    help="Python version or path for the environments (default 3.12 when present).")]
UnsafeNoSandboxOption = Annotated[bool, typer.Option(
    "--unsafe-no-sandbox",
    help="Run the code on this machine without bubblewrap isolation.")]
WallClockOption = Annotated[float, typer.Option(
    callback=seconds(MAX_WALL_CLOCK_S), metavar="SECONDS",
    help="Seconds before the whole checkpoint is killed.")]
MemoryMbOption = Annotated[int | None, typer.Option(
    min=MIN_MEMORY_MB, max=MAX_MEMORY_MB, metavar="MIB",
    help="Resident memory (MiB) the submission's processes may use together; "
    "default: half of this machine's memory.")]
MaxProcessesOption = Annotated[int, typer.Option(
    min=1, max=MAX_PROCESSES, metavar="N", help="Processes the sandbox may hold.")]
MaxOutputOption = Annotated[int, typer.Option(
    min=1, max=1024, metavar="MIB",
    help="Of each of pytest's output streams, MiB kept (the head and the tail; the cut is "
    "recorded in grading.json).")]
MaxWriteMbOption = Annotated[int, typer.Option(
    min=1, max=1 << 30, metavar="MIB",
    help="Disk space the tests and the submission may add to the sandbox's writable folders; "
    "past it the checkpoint fails (rule cap_exceeded).")]
MaxWriteFilesOption = Annotated[int, typer.Option(
    min=1, max=1 << 31, metavar="N",
    help="Files and folders they may add there; past it, as above.")]


@app.command("checkpoint")
def checkpoint_cmd(
    checkpoint: CheckpointOption,
    problem: ProblemOption,
    problems_dir: ProblemsDirOption = None,
    workspace: WorkspaceOption = None,
    out: OutOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    python: PythonOption = None,
    unsafe_no_sandbox: UnsafeNoSandboxOption = False,
    runtime: RuntimeOption = "bwrap",
    image: ImageOption = None,
    wall_clock: WallClockOption = 1800.0,
    memory_mb: MemoryMbOption = None,
    max_processes: MaxProcessesOption = 256,
    max_output_mb: MaxOutputOption = 8,
    max_write_mb: MaxWriteMbOption = 1024,
    max_write_files: MaxWriteFilesOption = 100_000,
) -> None:
    """Grade one checkpoint of a problem on a workspace snapshot, as SCBench grades it."""
    from benchwright.api.grading import grade_checkpoint
    from benchwright.cli.verbosity import notes_console, spinner
    from benchwright.coding.grading.evaluation import GradeStatus
    from benchwright.coding.problems.loader import get_checkpoint, load_problem

    folder = _problem_dir(problems_dir, problem)
    loaded = load_problem(folder)
    get_checkpoint(loaded, checkpoint)  # an unknown one is named before anything is said
    snapshot = workspace if workspace is not None else loaded.solution_dir(checkpoint)
    _warn_without_entry_file(loaded.entry_filename, snapshot)
    out_dir = out if out is not None else _default_out(loaded.name, checkpoint)
    with spinner(f"grading {loaded.name}/{checkpoint}") as status:
        evaluation = grade_checkpoint(
            folder, checkpoint, snapshot, out=out_dir, python=python,
            unsafe_no_sandbox=unsafe_no_sandbox, runtime=runtime, image=image,
            wall_clock_s=wall_clock, memory_mb=memory_mb,
            max_processes=max_processes, max_output_mb=max_output_mb,
            max_write_mb=max_write_mb, max_write_files=max_write_files,
            progress=lambda msg: status.update(f"{loaded.name}/{checkpoint}: {msg}"))
    _show(evaluation, out_dir, as_json)
    if evaluation.sandbox_killed_by is not None:
        raise SandboxKilled(evaluation.infrastructure_reason or "the grader was killed",
                            hint=f"run the command again; pytest's output is in {out_dir}")
    if evaluation.status is GradeStatus.INFRASTRUCTURE_FAILURE:
        raise GradingInfrastructureError(
            evaluation.infrastructure_reason or "pytest could not run the tests",
            path=loaded.tests_dir,
            hint=f"fix the problem's tests or data; results and pytest's output are in {out_dir}",
        )
    if not as_json:
        notes_console().print(f"[dim]wrote {out_dir}/evaluation.json[/]")


def _show(evaluation: Any, out_dir: Path, as_json: bool) -> None:
    """The verdict on stdout: JSON, or the counts and the failing tests."""
    if as_json:
        typer.echo(json.dumps({**evaluation.model_dump(mode="json"), "out_dir": str(out_dir)},
                              indent=2))
        return
    from rich.console import Console

    from benchwright.cli.render import evaluation_view, failing_tests_view
    from benchwright.coding.report.failures import failing_tests

    Console().print(evaluation_view(evaluation))
    Console(soft_wrap=True).print(failing_tests_view(failing_tests(evaluation, out_dir)))
