"""`benchwright llm cassette show|stats DIR`: what a cassette of model traffic holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchwright.cli.json_output import echo_json

app = typer.Typer(help="Model traffic: cassettes recorded with --llm-record.",
                  no_args_is_help=True)
cassette_app = typer.Typer(help="Read a cassette (docs/cassettes.md).", no_args_is_help=True)
app.add_typer(cassette_app, name="cassette")

CassetteArgument = Annotated[Path, typer.Argument(
    metavar="DIR", help="A cassette folder (--llm-record DIR).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print it as JSON.")]


@cassette_app.command("show")
def show_cmd(cassette: CassetteArgument, as_json: JsonOption = False) -> None:
    """Every conversation: who talked, the model, calls, tokens, cost and model time."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from benchwright.llm.pricing import format_cost
    from benchwright.llm.stats import cassette_stats

    stats = cassette_stats(cassette)
    if as_json:
        echo_json([row.model_dump(mode="json") for row in stats.conversations])
        return
    table = Table("conversation", "agent", "model", "calls", "errors", "tokens in",
                  "tokens out", "cost USD", "model s", show_edge=False,
                  title=f"cassette {escape(str(cassette))} ({stats.format}, recorded "
                  f"{stats.created} by benchwright {stats.benchwright})", title_justify="left")
    for row in stats.conversations:
        table.add_row(escape(row.key), escape(row.agent), escape(row.model or "-"),
                      str(row.calls), str(row.errors), f"{row.input_tokens:,}",
                      f"{row.output_tokens:,}",
                      format_cost(row.cost_usd, row.cost_unknown > 0, dollar=False),
                      f"{row.model_time_s:.1f}")
    Console(soft_wrap=True).print(table)


@cassette_app.command("stats")
def stats_cmd(cassette: CassetteArgument, as_json: JsonOption = False) -> None:
    """Totals per agent: conversations, calls, tokens, the cost recorded and model time."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from benchwright.llm.pricing import format_cost
    from benchwright.llm.stats import cassette_stats

    stats = cassette_stats(cassette)
    if as_json:
        echo_json(stats.model_dump(mode="json", exclude={"conversations"}))
        return
    table = Table("agent", "conversations", "calls", "errors", "tokens in", "tokens out",
                  "cost USD", "model s", show_edge=False, title_justify="left",
                  title=f"cassette {escape(str(cassette))}")
    for agent in stats.agents:
        table.add_row(escape(agent.agent), str(agent.conversations), str(agent.calls),
                      str(agent.errors), f"{agent.input_tokens:,}", f"{agent.output_tokens:,}",
                      format_cost(agent.cost_usd, agent.cost_unknown > 0, dollar=False),
                      f"{agent.model_time_s:.1f}")
    Console(soft_wrap=True).print(table)
