"""`benchwright report RUN_DIR`: solve rates and costs with confidence intervals."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel

from benchwright.coding.report.figures import build_report
from benchwright.runs import open_run


class Format(StrEnum):
    MD = "md"
    JSON = "json"


def report_cmd(
    run_dir: Annotated[Path, typer.Argument(help="The run directory.")],
    baseline: Annotated[Path | None, typer.Option(
        help="A run to compare with (paired differences with 95% CIs).")] = None,
    counterfactual: Annotated[Path | None, typer.Option(
        help="A coding run of the other --start-from (chain vs reference): solve rates by "
        "checkpoint with paired 95% CIs and the share of failures due to inherited code.")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="md or json.")] = Format.MD,
) -> None:
    """Report a run: solve rates, pass rates by group, cost, tokens and time, with 95% CIs."""
    track = open_run(run_dir).track
    report = track.report(run_dir, baseline) if counterfactual is None else \
        _with_counterfactual(run_dir, baseline, counterfactual)
    if fmt is Format.JSON:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(track.render(report), nl=False)


def _with_counterfactual(run_dir: Path, baseline: Path | None, other: Path) -> BaseModel:
    """The coding report with the chain-against-reference-start section (both runs coding)."""
    open_run(run_dir, expect="coding")
    open_run(other, expect="coding")
    return build_report(run_dir, baseline, other)
