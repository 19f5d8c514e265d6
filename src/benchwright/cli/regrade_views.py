"""What `eval RUN_DIR` prints for each track (each track's `regrade_view` in
`benchwright.registry.TRACKS`): the track re-grades, this module only shows the outcome."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from benchwright.cli.json_output import echo_json
from benchwright.cli.render import changes_view
from benchwright.coding.report.run_report import print_run_problems
from benchwright.coding.track import Regraded
from benchwright.report_parts.grading_noise import GradingNoise, noise_lines
from benchwright.web.track import Rescored


def show_coding(run_dir: Path, outcome: Regraded, as_json: bool) -> None:
    """The verdicts that changed; a word when the run is incomplete and about errors."""
    result = outcome.result
    if as_json:
        typer.echo(json.dumps({"run_dir": str(run_dir), "n_checkpoints": result.n_checkpoints,
                               "changes": [c.model_dump() for c in outcome.changes],
                               **_noise_json(outcome.noise)}, indent=2))
        return
    Console().print(changes_view(outcome.changes, result.n_checkpoints))
    _print_noise(outcome.noise, "checkpoint")
    err = Console(stderr=True)
    if not result.complete:
        err.print(f"[yellow]the run is incomplete[/]: continue it with "
                  f"`benchwright run coding --resume {run_dir}`", highlight=False)
    print_run_problems(result, Console(stderr=True, highlight=False))


def show_web(run_dir: Path, outcome: Rescored, as_json: bool) -> None:
    """The scored run's tables (or its JSON)."""
    from benchwright.cli.web_cmd import eval_json, print_report

    if as_json:
        echo_json({**eval_json(outcome.summary, outcome.report), **_noise_json(outcome.noise)})
        return
    # a run's title names the run, as its report does, not its tasks/ folder
    print_report(Console(), outcome.summary, outcome.report, title=f"web run {run_dir}")
    _print_noise(outcome.noise, "attempt")


def _noise_json(noise: GradingNoise | None) -> dict[str, Any]:
    """`--repeat`'s figures under "grading_noise" (nothing without --repeat)."""
    return {} if noise is None else {"grading_noise": noise.model_dump(mode="json")}


def _print_noise(noise: GradingNoise | None, unit: str) -> None:
    """The grading-noise section of report.md, on stdout (nothing without --repeat)."""
    if noise is not None:
        typer.echo("\n".join(noise_lines(noise, None, unit, with_agent=False)))
