"""`benchwright eval`: grade saved work offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from benchwright.cli.executor_options import (
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
    new_dir,
    seconds,
)
from benchwright.cli.render import evaluation_view, failing_tests_view
from benchwright.coding.artifacts import save_grade_output
from benchwright.coding.evaluation import GradeStatus
from benchwright.coding.examples import example_problem_dir
from benchwright.coding.grading import GradeOptions, grade_checkpoint
from benchwright.coding.loader import get_checkpoint, load_problem
from benchwright.coding.report.failures import failing_tests
from benchwright.coding.scratch import sweep_leftovers
from benchwright.errors import GradingInfrastructureError, UserInputError
from benchwright.protocols import RegradeSettings
from benchwright.registry import REGRADE_VIEWS
from benchwright.runs import open_run
from benchwright.runs.clock import folder_stamp
from benchwright.runs.lock import run_lock
from benchwright.sandbox import Limits, get_runtime


class _EvalGroup(TyperGroup):
    """`eval RUN_DIR` and `eval checkpoint ...` side by side: a path means the `run` command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # `eval --json RUN_DIR` as well as `eval RUN_DIR --json`: no subcommand named, a path given
        named = any(a in self.commands for a in args if not a.startswith("-"))
        if not named and any(not a.startswith("-") for a in args):
            args = ["run", *args]
        parsed: list[str] = super().parse_args(ctx, args)
        return parsed


app = typer.Typer(help="Grade saved work offline: `eval RUN_DIR` re-grades a whole run.",
                  no_args_is_help=True, cls=_EvalGroup)


@app.command("run", hidden=True)
def run_dir_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the changes as JSON.")] = False,
    config: Annotated[Path | None, typer.Option(
        help="Web runs: site URLs (YAML), as for `benchwright web eval`.")] = None,
    workers: Annotated[int, typer.Option(
        min=1, max=MAX_WORKERS, help="Coding runs: checkpoints graded at once (--executor ray; "
        "locally they are graded one after another).")] = 1,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = "auto",
    job_cpus: JobCpusOption = 1.0,
    job_memory_mb: JobMemoryOption = 2048,
) -> None:
    """Re-grade every saved snapshot of a run offline and list each verdict that changed."""
    where = make_executor(locals(), workers)
    sweep_leftovers()  # scratch folders (hidden tests inside) of a killed predecessor
    if _is_web_layout(run_dir):
        from benchwright.cli.web_cmd import eval_cmd as web_eval

        web_eval(output_dir=run_dir, config=config, as_json=as_json, baseline=None, force=True,
                 python=None)
        return
    run = open_run(run_dir)  # not a run: say so before taking a lock in the folder
    with run_lock(run_dir), Console(stderr=True).status("re-grading") as status:
        outcome = run.track.regrade(run_dir, RegradeSettings(config=config,
                                                             progress=status.update,
                                                             executor=where))
    REGRADE_VIEWS.get(run.track.name)(run_dir, outcome, as_json)


def _is_web_layout(folder: Path) -> bool:
    """A folder of WebArena agent logs (`<task_id>/agent_response.json`), not a coding run."""
    if (folder / "manifest.json").is_file() or not folder.is_dir():
        return False
    return any(child.name.isdigit() and (child / "agent_response.json").exists()
               for child in folder.iterdir())


def _problem_dir(problem_dir: Path | None, problem: str | None) -> Path:
    if (problem_dir is None) == (problem is None):
        raise UserInputError(
            "give exactly one of --problem-dir DIR or --problem NAME",
            hint="--problem names a bundled example: see `benchwright problems list`")
    return problem_dir if problem_dir is not None else example_problem_dir(str(problem))


def _warn_without_entry_file(err: Console, entry_file: str, snapshot: Path) -> None:
    """An empty workspace (or one without the entry file) is graded, as SCBench and `run coding`
    grade it, so its failures count; the warning says why every test will fail."""
    if snapshot.is_dir() and not (snapshot / entry_file).is_file():
        empty = not any(snapshot.iterdir())
        err.print(f"[yellow]warning:[/] {'the workspace is empty' if empty else f'no {entry_file}'}"
                  f" in {snapshot}; grading it anyway (its tests will fail)", highlight=False,
                  soft_wrap=True)


def _default_out(problem: str, checkpoint: str) -> Path:
    stamp = folder_stamp()
    return Path("benchwright-out") / "eval" / problem / f"{checkpoint}-{stamp}"


@app.command("checkpoint")
def checkpoint_cmd(
    checkpoint: Annotated[str, typer.Option(help="The checkpoint, e.g. checkpoint_2.")],
    problem_dir: Annotated[Path | None, typer.Option(help="A problem folder.")] = None,
    problem: Annotated[str | None, typer.Option(help="A bundled example problem.")] = None,
    workspace: Annotated[Path | None, typer.Option(
        help="The snapshot to grade; default: the checkpoint's reference solution.")] = None,
    out: Annotated[Path | None, typer.Option(
        parser=new_dir, help="Where to write evaluation.json and the raw output.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    python: Annotated[str | None, typer.Option(
        help="Python version or path for the environments (default 3.12 when present).")] = None,
    unsafe_no_sandbox: Annotated[bool, typer.Option(
        "--unsafe-no-sandbox",
        help="Run the code on this machine without bubblewrap isolation.")] = False,
    wall_clock: Annotated[float, typer.Option(
        callback=seconds(MAX_WALL_CLOCK_S),
        help="Seconds before the whole checkpoint is killed.")] = 1800.0,
    memory_mb: Annotated[int | None, typer.Option(
        min=MIN_MEMORY_MB, max=MAX_MEMORY_MB,
        help="Resident memory (MiB) the submission's processes may use together; "
        "default: half of this machine's memory.")] = None,
    max_processes: Annotated[int, typer.Option(
        min=1, max=MAX_PROCESSES, help="Processes the sandbox may hold.")] = 256,
) -> None:
    """Grade one checkpoint of a problem on a workspace snapshot, as SCBench grades it."""
    sweep_leftovers()  # scratch folders (hidden tests inside) of a killed predecessor
    loaded = load_problem(_problem_dir(problem_dir, problem))
    config = get_checkpoint(loaded, checkpoint)
    snapshot = workspace if workspace is not None else loaded.solution_dir(checkpoint)
    limits = Limits(wall_clock_s=wall_clock, memory_mb=memory_mb, max_processes=max_processes)
    options = GradeOptions(runtime=get_runtime(unsafe_no_sandbox), limits=limits, python=python)
    err = Console(stderr=True)
    _warn_without_entry_file(err, loaded.entry_filename, snapshot)
    with err.status(f"grading {loaded.name}/{checkpoint}") as status:
        output = grade_checkpoint(
            loaded, config, snapshot, options,
            progress=lambda msg: status.update(f"{loaded.name}/{checkpoint}: {msg}"))
    out_dir = out if out is not None else _default_out(loaded.name, checkpoint)
    save_grade_output(output, out_dir)
    evaluation = output.evaluation
    if as_json:
        typer.echo(json.dumps({**evaluation.model_dump(mode="json"), "out_dir": str(out_dir)},
                              indent=2))
    else:
        Console().print(evaluation_view(evaluation))
        Console(soft_wrap=True).print(failing_tests_view(failing_tests(evaluation, out_dir)))
    if evaluation.status is GradeStatus.INFRASTRUCTURE_FAILURE:
        raise GradingInfrastructureError(
            evaluation.infrastructure_reason or "pytest could not run the tests",
            path=loaded.tests_dir,
            hint=f"fix the problem's tests or data; results and pytest's output are in {out_dir}",
        )
    if not as_json:
        err.print(f"[dim]wrote {out_dir}/evaluation.json[/]")
