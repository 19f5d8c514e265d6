"""`benchwright cache`: the caches this machine holds, and `cache prune` to bound them."""

from __future__ import annotations

from typing import Annotated

import typer

from benchwright.cli.json_output import echo_json
from benchwright.errors import UserInputError

app = typer.Typer(help="The caches benchwright keeps on this machine (environments, agent "
                  "tools, image builds, collected tests, grading and browser scratch): list, "
                  "prune.", invoke_without_command=True)

KIND_HELP = "Only these caches (repeat): envs, tools, images, collections, grading, " \
            "browser-profiles."


def _kinds(kinds: list[str] | None) -> list[str] | None:
    from benchwright.sandbox.caches import KINDS

    unknown = sorted(set(kinds or []) - set(KINDS))
    if unknown:
        raise UserInputError(f"--kind {unknown[0]!r} is not a cache",
                             hint=f"choose from {', '.join(KINDS)}")
    return kinds or None


@app.callback()
def cache_cmd(
    ctx: typer.Context,
    kind: Annotated[list[str] | None, typer.Option(help=KIND_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every entry as JSON.")] = False,
) -> None:
    """List each cache: where it is, its size, its entries, when each was last used and
    whether a running process holds it."""
    if ctx.invoked_subcommand is not None:
        return
    from benchwright.sandbox.caches import cache_base, entries

    found = entries(cache_base(), _kinds(kind))
    if as_json:
        echo_json({"format": "benchwright.caches/1", "base": str(cache_base()),
                   "entries": [e.model_dump(mode="json") for e in found]})
        return
    from rich.console import Console

    from benchwright.cli.cache_views import caches_table

    Console().print(caches_table(found, cache_base(), _kinds(kind)))


@app.command("prune")
def prune_cmd(
    older_than: Annotated[str | None, typer.Option(
        help="Remove entries last used longer ago than this: 30d, 12h, 90m.")] = None,
    max_size: Annotated[str | None, typer.Option(
        help="Then remove the least recently used until the caches named take at most this: "
        "10G, 500M.")] = None,
    kind: Annotated[list[str] | None, typer.Option(help=KIND_HELP)] = None,
    dry_run: Annotated[bool, typer.Option(help="Say what would go; remove nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Remove cache entries by age and total size; an entry a running process holds is never
    removed (it is listed as kept)."""
    from benchwright.sandbox.caches import age, cache_base, prune, size

    if older_than is None and max_size is None:
        raise UserInputError("say what to prune", hint="give --older-than, --max-size or both")
    result = prune(cache_base(), older_than=age(older_than) if older_than else None,
                   max_bytes=size(max_size) if max_size else None, kinds=_kinds(kind),
                   dry_run=dry_run)
    if as_json:
        echo_json({"format": "benchwright.cache-prune/1", "dry_run": dry_run,
                   **result.model_dump(mode="json")})
        return
    from benchwright.cli.cache_views import prune_lines

    typer.echo(prune_lines(result, dry_run))
