"""`benchwright metrics causes RUN_DIR`: the optional LLM pass over a run's failures
(coding/report/refine_causes.py; a web run's evidence from web/trials/refine.py), with the
judge's model and options (a web run has no judge: --model); report.md then shows the refined
causes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchwright.cli.json_output import echo_json
from benchwright.cli.option_values import JudgeProtocol as Protocol

if TYPE_CHECKING:
    from benchwright.coding.report.refine_causes import Prompts
    from benchwright.judge.models import JudgeSettings


def causes_cmd(
    run_dir: Annotated[Path, typer.Argument(help="The run (coding or web) whose failures to "
                                                 "sort.")],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", help="The model; default: the run's judge model (`--judge-model`).")
    ] = None,
    protocol: Annotated[Protocol | None, typer.Option(
        help="The endpoint's protocol; default: the run judge's, else openai.")] = None,
    base_url: Annotated[str | None, typer.Option(
        envvar="BENCHWRIGHT_LLM_BASE_URL",
        help="An OpenAI- or Anthropic-compatible endpoint; default: the run judge's.")] = None,
    api_key_env: Annotated[str | None, typer.Option(
        metavar="VAR", help="The variable holding the key.")] = None,
    llm_record: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Record every request into this cassette folder.")] = None,
    llm_replay: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Answer every request from this cassette: no network, no key.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answers as JSON.")] = False,
) -> None:
    """Sort each failed checkpoint's (web attempt's) cause again with an LLM reading its failing
    tests or the evaluator's verdict and the agent's transcript (answers kept in
    failure_causes.json; docs/failure-causes.md)."""
    from benchwright.coding.report.refine_causes import refine_run
    from benchwright.llm.cassette import traffic_setting
    from benchwright.runs import open_run
    from benchwright.runs.lock import run_lock

    run = open_run(run_dir)
    web = run.track.name == "web"
    settings = _settings(run_dir, model, protocol, base_url, api_key_env, web)
    with run_lock(run_dir):
        refined = refine_run(run_dir, settings, traffic_setting(llm_record, llm_replay),
                             _web_prompts() if web else None)
        run.track.finish(run_dir)  # report.md shows the refined causes
    if as_json:
        echo_json(refined.model_dump(mode="json"))
        return
    typer.echo(f"{len(refined.answers)} failure(s) sorted by {refined.model}; "
               f"report.md rewritten")
    for error in refined.errors:
        typer.echo(f"  not answered: {error}", err=True)


def _web_prompts() -> Prompts:
    from benchwright.web.trials.refine import web_prompts

    return web_prompts


def _settings(run_dir: Path, model: str | None, protocol: Protocol | None,
              base_url: str | None, api_key_env: str | None, web: bool) -> JudgeSettings:
    """The judge's settings of the run (a web run has none), with what the options change."""
    from benchwright.coding.attempts.runner import load_manifest
    from benchwright.errors import UserInputError
    from benchwright.judge.models import JudgeSettings

    judge = None if web else load_manifest(run_dir).config.judge
    if model is None and judge is None:
        raise UserInputError("no model to sort the failures with", path=run_dir,
                             hint="pass --model (the run was not judged, so it has none)")
    base = judge if judge is not None else JudgeSettings(model=model or "")
    changes = {k: v for k, v in {"model": model, "protocol": protocol, "base_url": base_url,
                                 "api_key_env": api_key_env}.items() if v is not None}
    return JudgeSettings.model_validate({**base.model_dump(), **changes})
