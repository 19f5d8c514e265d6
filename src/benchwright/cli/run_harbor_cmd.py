"""`benchwright run harbor`: Harbor tasks run in containers with benchwright's guarantees
(docs/harbor.md). The command parses its options and calls `benchwright.run_harbor`
(`api/harbor.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchwright.cli.json_output import echo_json
from benchwright.cli.option_checks import MAX_TRIALS, base_url, existing_dir, new_dir
from benchwright.cli.resume_options import given_options

if TYPE_CHECKING:
    from benchwright.harbor.runner import HarborRunResult

# options that describe the run (the rest: where it goes, how it is shown, how many at once)
RUN_OPTIONS = ("tasks", "agent", "agent_command", "model", "base_url", "runtime", "trials",
               "max_cost", "price_in", "price_out", "llm_record", "llm_replay", "out")


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
    max_cost: Annotated[float | None, typer.Option(
        min=0, max=1e6, metavar="USD", help="The mini agent's spend allowed per step (0: no "
        "limit); default 3.")] = None,
    price_in: Annotated[float | None, typer.Option(
        min=0, max=1e6, metavar="USD", help="US dollars per million prompt tokens, for a "
        "model benchwright has no price for.")] = None,
    price_out: Annotated[float | None, typer.Option(
        min=0, max=1e6, metavar="USD", help="US dollars per million generated tokens.")] = None,
    llm_record: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Record every model call of the mini agent into this cassette "
        "folder (docs/cassettes.md).")] = None,
    llm_replay: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Answer every model call from this cassette: no network, no "
        "key.")] = None,
    jobs: Annotated[int, typer.Option(
        min=1, max=64, help="Trials run at once, each in containers of its own (may be "
        "given with --resume).")] = 1,
    out: Annotated[Path | None, typer.Option(
        parser=new_dir, metavar="RUN_DIR",
        help="The run directory to create (default: runs/harbor-<time>).")] = None,
    resume: Annotated[Path | None, typer.Option(
        parser=existing_dir, metavar="RUN_DIR",
        help="Finish an interrupted run (its saved settings are used; only --jobs and --json "
        "may be given with it).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print result.json.")] = False,
) -> None:
    """Run Harbor tasks (single- or multi-step) in containers: rewards, min_reward gates and
    the multi-step reward as Harbor computes them; the verifier never shares a process or a
    writable path with the agent."""
    from benchwright.api.harbor import run_harbor
    from benchwright.harbor.track import TRACK

    if resume is not None:  # given with --resume, a run option is refused by the API
        options = given_options(ctx, RUN_OPTIONS)
    else:  # unset ones left out: the API's defaults are the command's
        options = {k: ctx.params[k] for k in RUN_OPTIONS if ctx.params[k] is not None}
    result = run_harbor(resume=resume, jobs=jobs, **options)
    if as_json:
        echo_json(result.model_dump(mode="json"))
    else:
        typer.echo(TRACK.outcome(result.run_dir or Path(), result))
    _refuse_infrastructure(result)


def _refuse_infrastructure(result: HarborRunResult) -> None:
    """Exit 3, as `run web` and `run coding` do, when trials ended in the harness: the figures
    printed leave them out, and a pipeline must not read the run as the agent's whole result."""
    from benchwright.errors import InfrastructureError

    n = sum(task.statuses.get("infrastructure", 0) for task in result.tasks)
    if n:
        raise InfrastructureError(
            f"{n} trial(s) ended as infrastructure errors (the container engine or a cassette "
            "failed, not the agent); they are left out of the figures",
            path=result.run_dir, hint="each trial's record in trials.jsonl says why; start a "
            "new run once the cause is fixed")
