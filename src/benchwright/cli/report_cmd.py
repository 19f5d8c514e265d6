"""`benchwright report RUN_DIR`: solve rates and costs with confidence intervals."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from benchwright.coding.report.figures import build_report
from benchwright.coding.report.markdown import render_markdown
from benchwright.web.runs.layout import is_web_run


class Format(StrEnum):
    MD = "md"
    JSON = "json"


def report_cmd(
    run_dir: Annotated[Path, typer.Argument(help="The run directory.")],
    baseline: Annotated[Path | None, typer.Option(
        help="A run to compare with (paired differences with 95% CIs).")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="md or json.")] = Format.MD,
) -> None:
    """Report a run: solve rates, pass rates by group, cost, tokens and time, with 95% CIs."""
    if is_web_run(run_dir):
        from benchwright.cli.run_web_cmd import web_run_report
        from benchwright.web.stats_report import render_markdown as render_web

        web = web_run_report(run_dir, baseline)
        typer.echo(web.model_dump_json(indent=2) if fmt is Format.JSON else render_web(web),
                   nl=fmt is Format.JSON)
        return
    report = build_report(run_dir, baseline)
    if fmt is Format.JSON:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(render_markdown(report), nl=False)
