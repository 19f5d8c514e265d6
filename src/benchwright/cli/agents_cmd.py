"""`benchwright agents list`: every agent on offer, built-in or plugin, and where each is from."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from benchwright.cli.json_output import echo_json
from benchwright.errors import PluginError
from benchwright.registry import BUILT_IN, CODING_AGENTS, PLUGIN_KINDS, Entry, Kind

app = typer.Typer(help="The agents (and other parts) benchwright can run, with plugins.",
                  no_args_is_help=True)
AGENT_KINDS = ("coding agent", "web agent")


@app.command("list")
def list_cmd(
    every_kind: Annotated[bool, typer.Option(
        "--all", help="Runtimes, graders, web suites and web sites too.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
    = False,
) -> None:
    """List the coding and web agents: the built-ins, then those installed distributions add
    (entry points `benchwright.agents`, `benchwright.web_agents`), with where each comes from.
    A plugin that fails to load is listed with why."""
    kinds = {k: v for k, v in PLUGIN_KINDS.items() if every_kind or k in AGENT_KINDS}
    rows = [_row(label, kind, entry) for label, kind in kinds.items()
            for entry in kind.entries()]
    if as_json:
        echo_json(rows)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table("kind", "name", "from", "version", "status", show_edge=False)
    table.add_column("where", overflow="fold")
    for row in rows:
        table.add_row(row["kind"], row["name"], escape(row["source"]), row["version"] or "",
                      _state(row), escape(row["target"]))
    console = Console(soft_wrap=True)
    console.print(table)
    for row in rows:
        if row["error"]:
            console.print(f"[red]{row['name']}:[/] {escape(row['error'])}", highlight=False)


def _row(label: str, kind: Kind[Any], entry: Entry) -> dict[str, Any]:
    error = _load_error(kind, entry)
    return {"kind": label, "name": entry.name, "source": entry.source, "target": entry.target,
            "group": kind.group, "shadowed": entry.shadowed, "error": error,
            "version": None if error or entry.shadowed else _pinned(kind, entry)}


def _pinned(kind: Kind[Any], entry: Entry) -> str | None:
    """The version a CLI agent installs by default (`--agent-version` picks another)."""
    from benchwright.api.coding import pinned_version

    return pinned_version(entry.name) if kind is CODING_AGENTS else None


def _load_error(kind: Kind[Any], entry: Entry) -> str | None:
    """Why a plugin does not load (built-ins are checked by the test suite, not here)."""
    if entry.source == BUILT_IN or entry.shadowed:
        return None
    try:
        kind.get(entry.name)
    except PluginError as exc:
        return exc.message
    return None


def _state(row: dict[str, Any]) -> str:
    if row["shadowed"]:
        return "[yellow]not used (a built-in's name)[/]"
    if row["error"]:
        return "[red]fails to load (below)[/]"
    return "ok"
