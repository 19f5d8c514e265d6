"""The options of `run coding|web --baseline RUN --until-decided` (docs/statistics.md): rounds
of one trial per problem (web task) until the paired comparison is decided or a budget is
spent."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchwright.cli.option_checks import existing_dir
from benchwright.errors import UserInputError

if TYPE_CHECKING:
    from benchwright.stats.sequential import Look

BaselineOption = Annotated[Path | None, typer.Option(
    parser=existing_dir, metavar="RUN_DIR",
    help="With --until-decided: the run of the same track to compare with, paired by problem "
    "(coding) or intent template (web).")]
UntilDecidedOption = Annotated[bool, typer.Option(
    "--until-decided", help="Add one trial per problem (web task) a round until the "
    "comparison with --baseline is decided (problems solved, or the web pass rate by template; "
    "alpha 0.05 spent over --max-rounds) or a budget is spent; `--resume` continues the same "
    "sequence.")]
MaxRoundsOption = Annotated[int, typer.Option(
    min=1, max=100, metavar="N", help="The trial budget of --until-decided: at most N rounds "
    "(trials per problem or task).")]
MarginOption = Annotated[float | None, typer.Option(
    min=0.1, max=50, metavar="POINTS", help="With --until-decided: also stop, as `no "
    "difference`, once the interval lies within +-POINTS.")]
BudgetUsdOption = Annotated[float | None, typer.Option(
    min=0, metavar="USD", help="With --until-decided: start no round once the run has spent "
    "this much.")]
BudgetMinutesOption = Annotated[float | None, typer.Option(
    min=0, metavar="MINUTES", help="With --until-decided: start no round after this long.")]

SEQUENCE_PARAMS = ("baseline", "until_decided", "max_rounds", "margin", "budget_usd",
                   "budget_minutes")
"""The command's parameters that belong to the sequence, not to the run's configuration."""


def sequence_settings(params: dict[str, Any]) -> dict[str, Any]:
    """SequenceSettings' fields (but the baseline and the metric) from the command line."""
    if params.get("baseline") is None:
        raise UserInputError("--until-decided needs a --baseline to compare with",
                             hint="add --baseline RUN_DIR (a finished run of the same track)")
    minutes = params.get("budget_minutes")
    margin = params.get("margin")
    return {"max_rounds": params["max_rounds"], "max_cost_usd": params.get("budget_usd"),
            "max_seconds": None if minutes is None else 60 * minutes,
            "margin": None if margin is None else margin / 100}


def refuse_stray(ctx: typer.Context) -> None:
    """The sequence's options without --until-decided are a mistake, not a no-op."""
    given = [f"--{n.replace('_', '-')}" for n in ("baseline", *SEQUENCE_PARAMS[2:])
             if getattr(ctx.get_parameter_source(n), "name", None) == "COMMANDLINE"]
    if given:
        raise UserInputError(f"{', '.join(given)}: only with --until-decided",
                             hint="add --until-decided, or drop them (`benchwright report RUN "
                             "--baseline BASE` compares finished runs)")


def look_line(look: Look, unit: str = "problems") -> str:
    """One look, as printed after each round."""
    if look.difference is None or look.low is None or look.high is None:
        return f"round {look.round}: {look.n_clusters} {unit} paired, too few to decide"
    return (f"round {look.round}: {100 * look.difference:+.1f} points [{100 * look.low:+.1f}, "
            f"{100 * look.high:+.1f}] at {1 - look.alpha_spent:.2%} over {look.n_clusters} "
            f"{unit}: {look.decision}")
