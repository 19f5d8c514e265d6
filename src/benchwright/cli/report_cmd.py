"""`benchwright report RUN_DIR`: solve rates and costs with confidence intervals."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchwright.errors import UserInputError

if TYPE_CHECKING:  # the runs and the tracks are imported when the command runs, not for --help
    from pydantic import BaseModel


def report_cmd(
    run_dir: Annotated[Path, typer.Argument(help="The run directory.")],
    baseline: Annotated[Path | None, typer.Option(
        metavar="RUN_DIR", help="A run to compare with (paired differences with 95% CIs).")]
    = None,
    counterfactual: Annotated[Path | None, typer.Option(
        metavar="RUN_DIR",
        help="A coding run of the other --start-from (chain vs reference): solve rates by "
        "checkpoint with paired 95% CIs and the share of failures due to inherited code.")
    ] = None,
    frontier: Annotated[list[Path] | None, typer.Option(
        metavar="RUN_DIR", help="Other coding runs, or folders of runs (repeatable): this run "
        "among them on the cost-accuracy frontier (solve rate against cost and time per "
        "problem).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of "
                                          "markdown.")] = False,
    fail_if_worse: Annotated[float | None, typer.Option(
        metavar="POINTS", help="With --baseline: exit 1 when the run is worse than the "
        "baseline by more than POINTS with 95% confidence (a CI gate; docs/ci.md).")] = None,
) -> None:
    """Report a run: solve rates, pass rates by group, cost, tokens and time, with 95% CIs."""
    if fail_if_worse is not None and baseline is None:
        raise UserInputError("--fail-if-worse needs a --baseline to compare with",
                             hint="add --baseline RUN_DIR")
    from benchwright.runs import open_run

    track = open_run(run_dir).track
    report = track.report(run_dir, baseline) if counterfactual is None else \
        _with_counterfactual(run_dir, baseline, counterfactual)
    if frontier:
        report = _with_frontier(run_dir, report, frontier)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(track.render(report), nl=False)
    if fail_if_worse is not None and baseline is not None:
        _gate(run_dir, baseline, fail_if_worse)


def _gate(run_dir: Path, baseline: Path, worse_by: float) -> None:
    """The regression gate's line on stderr; exit 1 (`RegressionFound`) when it fails."""
    from benchwright.api.decisions import enforce, gate, gate_line

    result = gate(run_dir, baseline, worse_by)
    enforce(result)
    typer.echo(f"gate passed: {gate_line(result)}", err=True)


def _with_frontier(run_dir: Path, report: BaseModel, others: list[Path]) -> BaseModel:
    """The coding report with the frontier of this run and the others (`benchwright.frontier`)."""
    from benchwright.api.frontier import frontier
    from benchwright.runs import open_run

    open_run(run_dir, expect="coding")
    return report.model_copy(update={"frontier": frontier([run_dir, *others])})


def _with_counterfactual(run_dir: Path, baseline: Path | None, other: Path) -> BaseModel:
    """The coding report with the chain-against-reference-start section (both runs coding)."""
    from benchwright.coding.report.figures import build_report
    from benchwright.runs import open_run

    open_run(run_dir, expect="coding")
    open_run(other, expect="coding")
    return build_report(run_dir, baseline, other)
