"""`benchwright view [RUNS...]`: the dashboard and trial viewer, served on loopback or written as
a static site (`--bundle OUT_DIR`). Parses and dispatches to `benchwright.view`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchwright.cli.option_checks import host_name
from benchwright.cli.progress_bar import RunProgress
from benchwright.errors import UserInputError


def view_cmd(
    runs: Annotated[list[Path] | None, typer.Argument(
        help="Run folders, or folders holding runs (searched recursively); default: here.")]
    = None,
    host: Annotated[str, typer.Option(
        parser=host_name, help="Address to listen on (loopback by default).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port; 0 picks a free one.")] = 0,
    open_browser: Annotated[bool, typer.Option(
        "--open/--no-open", help="Open the viewer in a browser.")] = True,
    bundle: Annotated[Path | None, typer.Option(
        help="Write the viewer as a static site into this folder instead of serving it.")]
    = None,
) -> None:
    """See runs of both tracks: overview, runs, problems, checkpoints, trials, head-to-head."""
    folders = runs or [Path.cwd()]
    if bundle is not None:
        _bundle(folders, bundle)
        return
    from rich.console import Console

    from benchwright.view.server import is_loopback, serve_forever, start

    if not is_loopback(host):
        Console(stderr=True).print(f"[bold yellow]warning:[/] --host {host} is not loopback: "
                                   "anyone who can reach it can read these runs (agent code, "
                                   "logs, network traces)", highlight=False)
    server = start(folders, host, port)
    if not server.model.scan() and not server.model.unreadable:
        raise UserInputError("no run found", path=folders[0],
                             hint="pass a run folder, or a folder holding runs")
    serve_forever(server, open_browser)


def _bundle(folders: list[Path], out: Path) -> None:
    from rich.console import Console

    from benchwright.view.bundle import write_bundle

    with RunProgress("bundling", quiet=False) as progress:
        pages = write_bundle(folders, out.expanduser().resolve(),
                             lambda done, total: progress.update(completed=done, total=total))
    Console().print(f"{pages} pages written; open {out / 'index.html'} (no server needed)",
                    highlight=False)
