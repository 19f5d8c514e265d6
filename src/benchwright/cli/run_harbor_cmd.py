"""`benchwright run harbor`: Harbor tasks run in containers with benchwright's guarantees
(docs/harbor.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchwright.cli.json_output import echo_json
from benchwright.cli.option_checks import MAX_TRIALS, base_url, existing_dir, new_dir
from benchwright.cli.resume_options import refuse_conflicts

if TYPE_CHECKING:
    from benchwright.harbor.runner import HarborRunConfig


def run_harbor_cmd(
    ctx: typer.Context,
    tasks: Annotated[Path | None, typer.Option(
        parser=existing_dir, metavar="DIR",
        help="A Harbor task folder, or a folder of them (a dataset Harbor downloaded).")
    ] = None,
    agent: Annotated[str, typer.Option(help="oracle (each step's solution/solve.sh), "
                                       "command (--agent-command) or mini (--model).")] = "oracle",
    agent_command: Annotated[str | None, typer.Option(
        help="The command agent's shell command; its instruction is in "
        "$BENCHWRIGHT_INSTRUCTION.")] = None,
    model: Annotated[str | None, typer.Option(help="The mini agent's model.")] = None,
    base_url: Annotated[str | None, typer.Option(
        envvar="BENCHWRIGHT_LLM_BASE_URL", metavar="URL", parser=base_url,
        help="The mini agent's OpenAI-compatible endpoint (key: OPENAI_API_KEY).")] = None,
    runtime: Annotated[str, typer.Option(help="podman or docker.")] = "podman",
    trials: Annotated[int, typer.Option(min=1, max=MAX_TRIALS, help="Trials per task.")] = 1,
    out: Annotated[Path | None, typer.Option(
        parser=new_dir, metavar="RUN_DIR",
        help="The run directory to create (default: runs/harbor-<time>).")] = None,
    resume: Annotated[Path | None, typer.Option(
        parser=existing_dir, metavar="RUN_DIR",
        help="Finish an interrupted run (its saved settings are used; only --json may be "
        "given with it).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print result.json.")] = False,
) -> None:
    """Run Harbor tasks (single- or multi-step) in containers: rewards, min_reward gates and
    the multi-step reward as Harbor computes them; the verifier never shares a process or a
    writable path with the agent."""
    from benchwright.harbor.track import TRACK
    from benchwright.protocols import ExecutorSetup
    from benchwright.registry import EXECUTORS
    from benchwright.runs import start
    from benchwright.runs.clock import folder_stamp

    executor = EXECUTORS.get("local").from_setup(ExecutorSetup())
    if resume is not None:
        saved = TRACK.read(resume).config.model_dump()
        refuse_conflicts(ctx, {**saved, "tasks": saved["tasks"]}, {"resume", "as_json"},
                         {"tasks": lambda p: p.resolve()}, command=TRACK.command)
        run_dir = resume
        result = start(TRACK, run_dir, None, executor=executor)
    else:
        config = _new_config(ctx.params)
        run_dir = out or Path("runs") / f"harbor-{folder_stamp()}"
        result = start(TRACK, run_dir, config, executor=executor)
    if as_json:
        echo_json(result.model_dump(mode="json"))
        return
    typer.echo(TRACK.outcome(run_dir.resolve(), result))


def _new_config(params: dict[str, Any]) -> HarborRunConfig:
    """A new run's settings from the command's options, or the user's error in one line."""
    from benchwright.errors import UserInputError
    from benchwright.harbor.runner import HarborRunConfig

    if params["tasks"] is None:
        raise UserInputError("give --tasks (or --resume RUN_DIR)",
                             hint="--tasks names a Harbor task folder or a folder of them")
    agent, runtime = params["agent"], params["runtime"]
    if agent not in ("oracle", "command", "mini") or runtime not in ("podman", "docker"):
        raise UserInputError(f"unsupported --agent {agent!r} or --runtime {runtime!r}",
                             hint="--agent oracle|command|mini, --runtime podman|docker")
    return HarborRunConfig(tasks=params["tasks"].resolve(), **{
        key: params[key] for key in ("agent", "agent_command", "model", "base_url", "runtime",
                                     "trials")})
