"""`benchwright plan`: how many problems and trials a paired comparison needs to detect a
difference (docs/statistics.md, Planning)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchwright.cli.option_checks import existing_dir
from benchwright.errors import UserInputError

if TYPE_CHECKING:  # the API and rich are imported when the command runs, not for --help
    from rich.table import Table

    from benchwright.api.decisions import Metric
    from benchwright.stats.planning import Plan


def plan_cmd(
    difference: Annotated[float, typer.Option(
        metavar="POINTS", help="The difference to detect, in points (10: 50% -> 60%).")],
    baseline: Annotated[Path | None, typer.Option(
        parser=existing_dir, metavar="RUN_DIR", help="A finished run (coding, or web) to read "
        "the pass rate and the spread between problems (templates) from.")] = None,
    pass_rate: Annotated[float | None, typer.Option(
        metavar="POINTS", help="Without --baseline: the assumed pass rate, in points.")] = None,
    spread: Annotated[float | None, typer.Option(
        metavar="POINTS", help="Without --baseline: the assumed standard deviation of the "
        "problems' pass rates, in points (20 is typical of agent benchmarks).")] = None,
    power: Annotated[float, typer.Option(min=0.5, max=0.99, help="The chance of detecting "
                                         "the difference.")] = 0.8,
    alpha: Annotated[float, typer.Option(min=0.001, max=0.2, help="The test's two-sided "
                                         "level (the report's 95% intervals: 0.05).")] = 0.05,
    trials: Annotated[list[int] | None, typer.Option(
        min=1, max=1000, metavar="K", help="Trials per problem to plan for (repeatable); "
        "default 1, 2, 3, 5 and 10.")] = None,
    metric: Annotated[str | None, typer.Option(
        metavar="NAME", help="With a coding --baseline: problems solved (default) or "
        "checkpoints solved.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Problems and trials needed to detect a difference with a given power (paired design)."""
    from benchwright.api.decisions import assumed_plan, plan_from_run

    if baseline is not None:
        if pass_rate is not None or spread is not None:
            raise UserInputError("--baseline and --pass-rate/--spread both given",
                                 hint="read them from the run, or assume them, not both")
        made = plan_from_run(baseline, difference, power, alpha, trials, _metric(metric))
    elif pass_rate is None or spread is None:
        raise UserInputError("nothing to plan from", hint="give --baseline RUN_DIR, or both "
                             "--pass-rate and --spread")
    else:
        made = assumed_plan(pass_rate, spread, difference, power, alpha, trials)
    if as_json:
        typer.echo(made.model_dump_json(indent=2))
    else:
        from rich.console import Console

        Console(soft_wrap=True).print(plan_view(made))


def _metric(name: str | None) -> Metric | None:
    if name in (None, "problems solved", "checkpoints solved", "pass rate"):
        return name  # type: ignore[return-value]  # one of Metric's values, checked above
    raise UserInputError(f"--metric {name!r} is not one the plan compares",
                         hint="use 'problems solved' or 'checkpoints solved'")


def plan_view(made: Plan) -> Table:
    """The plan as a table, with its assumptions in the caption."""
    from rich.table import Table

    pop = made.population
    unit = made.unit
    table = Table(title=f"Detecting {100 * made.difference:+.1f} points with "
                  f"{made.power:.0%} power at alpha {made.alpha:g} (paired, clustered by "
                  f"{unit.rstrip('s')})", title_justify="left", caption_justify="left")
    per = "attempts per template" if unit == "templates" else "trials per problem"
    for name in (per, f"{unit} needed", "power", "sd of one paired difference"):
        table.add_column(name, justify="right")
    for row in made.rows:
        table.add_row(str(row.trials), str(row.problems), f"{row.power:.1%}", f"{row.sd:.3f}")
    caption = [f"pass rate {100 * pop.pass_rate:.1f}%, spread between {unit} "
               f"{100 * pop.spread:.1f} points ({pop.source})"]
    if made.available is not None and made.mde is not None:
        caption.append(f"the baseline's {made.available} {unit} x {made.available_trials} "
                       f"detect {100 * made.mde:.1f} points at this power")
    table.caption = "; ".join(caption)
    return table
