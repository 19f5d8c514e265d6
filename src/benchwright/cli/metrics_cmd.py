"""`benchwright metrics static` (code-quality metrics of a workspace) and `metrics judge`."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated

import typer

from benchwright.cli.causes_cmd import causes_cmd
from benchwright.cli.judge_cmd import judge_cmd
from benchwright.errors import UserInputError
from benchwright.files.nofollow import read_regular

if TYPE_CHECKING:  # the metrics and rich are imported when a command runs, not for --help
    from rich.console import RenderableType

    from benchwright.metrics.models import SnapshotMetrics

app = typer.Typer(help="Code-quality and erosion metrics.", no_args_is_help=True)
app.command("judge")(judge_cmd)
app.command("causes")(causes_cmd)


@app.command("static")
def static_cmd(
    workspace: Annotated[Path, typer.Option(help="The folder to measure.")],
    entry: Annotated[str | None, typer.Option(
        help="Entry file (relative) that roots the import graph.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every metric as JSON.")] = False,
) -> None:
    """Lines, maintainability, complexity, lint, ast-grep, clones, waste and import graph."""
    if not workspace.is_dir():
        raise UserInputError("workspace not found", path=workspace,
                             hint="pass the folder holding the code")
    if entry is not None:
        _check_entry(workspace, entry)
    from benchwright.metrics.static import analyze_snapshot

    metrics = analyze_snapshot(workspace, entry)
    if as_json:
        typer.echo(metrics.model_dump_json(indent=2))
    else:
        from rich.console import Console

        Console().print(metrics_view(metrics))


def _check_entry(workspace: Path, entry: str) -> None:
    """--entry names a regular file inside the workspace, relative to it (not /etc/passwd, not
    ../x). The workspace may be an agent's: its links are never followed (a loop, or a way out)."""
    parts = PurePosixPath(entry).parts
    if not parts or PurePosixPath(entry).is_absolute() or ".." in parts or "\0" in entry:
        raise UserInputError(f"--entry {entry!r} is not a file path inside the workspace",
                             path=workspace, hint="give it relative to --workspace")
    if read_regular(workspace, "/".join(parts), limit=0) is None:
        raise UserInputError(f"--entry {entry!r}: no such regular file in the workspace (a "
                             "missing file, a folder, or a path through a symbolic link)",
                             path=workspace, hint="give a file's path relative to --workspace")


def _scbench(m: SnapshotMetrics) -> str:
    """SCBench's three figures, or unknown and why."""
    if m.scbench is None:
        return "not measured"
    f = m.scbench.figures
    if f is None:
        return f"unknown: {m.scbench.reason}"
    return (f"{f.verbosity:.4f} / {f.erosion:.4f} / {f.cog_erosion:.4f} "
            f"(scb-check {m.scbench.version})")


def metrics_view(m: SnapshotMetrics) -> RenderableType:
    """The snapshot's figures, then the most complex callables."""
    from rich.console import Group
    from rich.table import Table

    summary = Table("measure", "value", title="snapshot", title_justify="left", show_edge=False)
    rows = [
        ("files / LOC / SLOC", f"{len(m.files)} / {m.lines.loc} / {m.lines.sloc}"),
        ("comments / blank", f"{m.lines.comments} / {m.lines.blank}"),
        ("maintainability (mean, SLOC-weighted)", f"{m.mi_mean:.1f}"),
        ("CC bands", "  ".join(f"{b}:{n}" for b, n in m.cc_bands.items()) or "-"),
        ("CC high (>10) / extreme (>30) / Gini", f"{m.cc_high} / {m.cc_extreme} / {m.cc_gini}"),
        ("ruff findings (weighted)", f"{sum(m.lint.values())} ({m.lint_weighted:.0f})"),
        ("ast-grep by category", "  ".join(f"{c}:{n}" for c, n in m.astgrep.items())),
        ("clones: groups / instances / lines / ratio",
         f"{len(m.clones)} / {m.clone_instances} / {m.clone_lines} / {m.clone_ratio}"),
        ("single-use functions / trivial wrappers / single-method classes",
         f"{len(m.single_use_functions)} / {len(m.trivial_wrappers)} / "
         f"{len(m.single_method_classes)}"),
        ("import graph: modules / cyclic mass / propagation / entropy",
         f"{m.graph.modules} / {m.graph.cyclic_dependency_mass} / "
         f"{m.graph.propagation_cost} / {m.graph.dependency_entropy}"),
        ("SCBench verbosity / erosion / cognitive erosion (scb-check)", _scbench(m)),
        ("benchwright's own verbosity / erosion composites", f"{m.bw_verbosity} / {m.bw_erosion}"),
        ("seconds", f"{m.seconds}"),
    ]
    rows += [("could not be parsed", f.path + ": " + f.parse_error)
             for f in m.files if f.parse_error is not None]
    rows += [("scb-check could not parse (left out of SCBench's figures)", path)
             for path in (m.scbench.unparsed if m.scbench else [])]
    for name, value in rows:
        summary.add_row(name, value)
    top = Table("callable", "file", "CC", "band", title="most complex", title_justify="left",
                show_edge=False)
    for s in sorted((s for s in m.symbols if s.kind != "class"),
                    key=lambda s: -s.complexity)[:10]:
        top.add_row(s.name, f"{s.file}:{s.start}", str(s.complexity), s.band)
    return Group(summary, top)
