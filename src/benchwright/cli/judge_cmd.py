"""`benchwright metrics judge RUN_DIR`: an LLM judge of code quality over a coding run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchwright.cli import option_checks
from benchwright.cli.json_output import echo_json
from benchwright.cli.option_checks import MAX_COST_USD
from benchwright.cli.option_values import MAX_JUDGE_SAMPLES, JudgeProtocol
from benchwright.cli.progress_bar import RunProgress
from benchwright.errors import RunIncomplete, UserInputError

# The judge, the run and rich are imported when the command runs: not for --help or a bad option.
if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

    from benchwright.judge.models import JudgeSettings
    from benchwright.judge.run_summary import JudgeRunSummary
    from benchwright.llm.models import LlmTraffic

SHOWN = 10
JUDGE_BASE_URL_ENV = "BENCHWRIGHT_JUDGE_BASE_URL"


def judge_cmd(
    ctx: typer.Context,
    run_dir: Annotated[Path, typer.Argument(help="The coding run to judge.")],
    model: Annotated[str, typer.Option("--model", "-m", help="The judge model.")],
    rubric: Annotated[Path | None, typer.Option(
        "--rubric", "-r", help="A rubric (JSONL, SCBench's format); default: benchwright's.")
    ] = None,
    base_url: Annotated[str | None, typer.Option(
        envvar=JUDGE_BASE_URL_ENV, parser=option_checks.base_url,
        help="The endpoint, e.g. https://openrouter.ai/api/v1 or http://localhost:11434/v1.")
    ] = None,
    api_key_env: Annotated[str | None, typer.Option(
        help="The variable holding the key (default OPENAI_API_KEY / ANTHROPIC_API_KEY).")
    ] = None,
    protocol: Annotated[JudgeProtocol, typer.Option(
        help="openai (any Chat Completions endpoint) or anthropic (Messages API).")
    ] = "openai",
    problem: Annotated[list[str] | None, typer.Option(
        "--problem", "-p", help="Judge only this problem (repeatable).")] = None,
    samples: Annotated[int, typer.Option(
        min=1, max=MAX_JUDGE_SAMPLES, help="Judge each request K times; report agreement.")] = 1,
    concurrency: Annotated[int, typer.Option(
        "--concurrency", "-c", min=1, max=256, help="Requests in flight at once.")] = 8,
    max_cost: Annotated[float | None, typer.Option(
        min=0.0, max=MAX_COST_USD,
        help="Stop before this judging spends more (USD); run again to finish.")
    ] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", "-w", help="Judge checkpoints already judged again.")] = False,
    prefix_template: Annotated[Path | None, typer.Option(
        help="A jinja template for the prompt's shared prefix (variables: spec, files).")
    ] = None,
    criteria_template: Annotated[Path | None, typer.Option(
        help="A jinja template for the criteria part (variable: items).")] = None,
    temperature: Annotated[float | None, typer.Option(
        min=0.0, max=2.0, help="Sampling temperature (default 0; 1 with --samples above 1).")
    ] = None,
    max_batch_lines: Annotated[int, typer.Option(min=1, help="Lines per batch of files.")
                               ] = 1000,
    max_batch_files: Annotated[int, typer.Option(min=1, help="Files per batch.")] = 5,
    retries: Annotated[int, typer.Option(
        min=0, max=20, help="Retries after a 429, 5xx or timeout.")] = 4,
    retry_backoff: Annotated[float, typer.Option(
        min=0.0, max=600.0, help="First wait before a retry, seconds (doubles).")] = 1.0,
    timeout: Annotated[float, typer.Option(
        min=1.0, max=3600.0, help="Seconds one request may take.")] = 300.0,
    llm_record: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Record every judge request into this cassette folder.")] = None,
    llm_replay: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Answer every judge request from this cassette: no network, no "
        "key.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Judge each checkpoint's code against a rubric with an LLM: rubric.jsonl, raw_rubric.json
    and judge.json per checkpoint; rubric metrics in the run's records and report."""
    _run_judge(dict(ctx.params))


_NOT_SETTINGS = {"run_dir", "problem", "max_cost", "overwrite", "as_json", "llm_record",
                 "llm_replay"}
_RENAMED = {"retry_backoff": "retry_backoff_s", "timeout": "request_timeout_s"}


def _run_judge(params: dict[str, Any]) -> None:
    from rich.console import Console

    from benchwright.api.coding import judge_settings_of
    from benchwright.llm.cassette import traffic_setting
    from benchwright.runs import amend

    run_dir: Path = params["run_dir"]
    settings = judge_settings_of({_RENAMED.get(k, k): v for k, v in params.items()
                                  if k not in _NOT_SETTINGS})
    traffic = traffic_setting(params["llm_record"], params["llm_replay"])
    # the kernel opens and locks the run, and finishes it (records, result.json, report.md)
    summary = amend(run_dir, "coding", lambda: _judge(
        run_dir, settings, params["problem"], params["max_cost"], params["overwrite"],
        quiet=params["as_json"], traffic=traffic))
    if params["as_json"]:
        echo_json(summary.model_dump(mode="json"))
    else:
        Console(soft_wrap=True).print(summary_view(summary))
    _end(summary, run_dir)


def _check_max_cost(settings: JudgeSettings, max_cost: float | None) -> None:
    """--max-cost needs each call's cost: the Messages API reports none, so the model needs a
    price (an OpenAI-compatible endpoint may report it; a call that does not stops the run)."""
    from benchwright.llm.pricing import price_of

    if max_cost is not None and settings.protocol == "anthropic" \
            and price_of(settings.model) is None:
        raise UserInputError(f"--max-cost {max_cost:g} cannot be enforced: model "
                             f"{settings.model!r} has no known price and the anthropic protocol "
                             "reports no cost", hint="leave --max-cost out, or judge with a "
                             "model benchwright prices (docs/judge.md)")


def _judge(run_dir: Path, settings: JudgeSettings, problems: list[str] | None,
           max_cost: float | None, overwrite: bool, quiet: bool,
           traffic: LlmTraffic | None = None) -> JudgeRunSummary:
    from benchwright.coding.attempts.judging.judge import judge_run
    from benchwright.coding.attempts.runner import load_manifest
    from benchwright.judge.run_summary import JudgedCheckpoint
    from benchwright.llm.pricing import format_cost

    _check_max_cost(settings, max_cost)
    spent = [0.0, 0.0]  # known dollars, requests of unknown cost
    with RunProgress("judging", quiet) as progress:
        def checked(row: JudgedCheckpoint) -> None:
            spent[0] += row.paid_now
            spent[1] += row.cost_unknown and row.requests_made > 0
            progress.update(advance=1, description=f"{row.problem}/{row.checkpoint}: "
                            f"{row.status} ({format_cost(spent[0], spent[1] > 0)})")

        return judge_run(run_dir, load_manifest(run_dir).config, settings, problems=problems,
                         max_cost=max_cost, overwrite=overwrite, traffic=traffic,
                         on_start=lambda n: progress.update(total=n), on_checked=checked)


def summary_view(summary: JudgeRunSummary) -> RenderableType:
    """Each checkpoint, the totals, why it stopped, the errors and the agreement."""
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table

    from benchwright.llm.pricing import format_cost

    table = Table(title=f"judge {summary.model} ({summary.protocol})", title_justify="left",
                  show_edge=False)
    names = {"problem": [r.problem for r in summary.checkpoints],
             "checkpoint": [r.checkpoint for r in summary.checkpoints]}
    for name in ("problem", "trial", "checkpoint", "status", "flags (carried)",
                 "requests (sent)", "cost USD"):  # at 80 columns, headers wrap, names stay whole
        longest = max((len(v) for v in names.get(name, [])), default=None)
        table.add_column(name, overflow="fold", min_width=longest)
    for row in summary.checkpoints:
        flags = "-" if row.flags is None else f"{row.flags} ({row.carried_over})"
        table.add_row(row.problem, str(row.trial), row.checkpoint, row.status, flags,
                      f"{row.requests} ({row.requests_made})",
                      format_cost(row.cost_usd, row.cost_unknown, dollar=False))
    parts: list[RenderableType] = [table, _totals(summary)]
    if summary.stopped:
        parts.append(f"[yellow]stopped: {escape(summary.stopped)}[/]")
    parts += [f"[red]error:[/] {escape(e)}" for e in summary.errors[:SHOWN]]
    if len(summary.errors) > SHOWN:
        parts.append(f"... and {len(summary.errors) - SHOWN} more (each checkpoint's judge.json)")
    if summary.agreement:
        parts.append(agreement_view(summary))
    return Group(*parts)


def _totals(summary: JudgeRunSummary) -> str:
    from benchwright.llm.pricing import format_cost

    return (f"judged {summary.n_judged}, already judged {summary.n_skipped}, errors "
            f"{summary.n_errors}, left unjudged {summary.n_unjudged}; requests sent "
            f"{summary.requests_made}, from the cache {summary.requests_cached}; "
            f"spent {format_cost(summary.cost_usd_paid, summary.cost_unknown, dollar=False)} USD")


def agreement_view(summary: JudgeRunSummary) -> Table:
    """Per rubric item: Krippendorff's alpha over lines and the flags' stability."""
    from rich.table import Table

    table = Table("item", "alpha", "stability", "flags (kept)", "lines flagged / judged",
                  title=f"agreement across {summary.samples} samples", title_justify="left",
                  show_edge=False)
    for a in summary.agreement:
        table.add_row(a.criterion, "-" if a.alpha is None else f"{a.alpha:.3f}",
                      "-" if a.stability is None else f"{a.stability:.3f}",
                      f"{a.flags} ({a.flags_kept})", f"{a.lines_flagged} / {a.lines}")
    return table


def _end(summary: JudgeRunSummary, run_dir: Path) -> None:
    again = f"benchwright metrics judge {run_dir} --model {summary.model}"
    if summary.n_errors:
        raise RunIncomplete(f"{summary.n_errors} checkpoint(s) could not be judged, first: "
                            f"{summary.errors[0]}",
                            hint=f"fix the cause, then run `{again}` again: it retries them")
    if summary.stopped and summary.n_unjudged and "--max-cost" not in summary.stopped:
        raise UserInputError(f"judging stopped: {summary.stopped}",
                             hint=f"fix the cause, then run `{again}` again")
