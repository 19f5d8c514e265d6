"""report.md of a coding run, written after `run coding` and after `eval RUN_DIR`, and the lines
the CLI prints at the end about attempts that broke off and agents that failed."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import RunResult
from benchwright.coding.report.figures import CodingReport, build_report
from benchwright.coding.report.markdown import render_markdown
from benchwright.files.atomic import write_text_atomic

SHOWN = 10  # errors listed on the terminal; report.md and result.json list them all


def write_run_report(run_dir: Path, result: RunResult) -> CodingReport:
    """Write report.md from the run's files; returns the report it holds."""
    report = build_report(run_dir)
    text = render_markdown(report) + "".join(_errors_section(result))
    write_text_atomic(RunLayout(run_dir).report_md, text)
    return report


def _errors_section(result: RunResult) -> list[str]:
    out: list[str] = []
    if result.errors:
        out += ["\n## Attempts that broke off\n\n",
                "These attempts stopped with an error before their end (they are not solved); "
                "`benchwright run coding --resume RUN_DIR` runs them again.\n\n",
                *(f"- {_md(e)}\n" for e in result.errors)]
    if result.agent_errors:
        out += ["\n## Agent errors\n\n",
                "The agent crashed, could not start or ran out of time at these checkpoints; "
                "each was graded as the agent left the workspace (the agent's failure).\n\n",
                *(f"- {_md(e)}\n" for e in result.agent_errors)]
    if result.no_reference:
        out += ["\n## Not attempted: no reference solution\n\n",
                "A reference start begins checkpoint N from the reference solution of "
                "checkpoint N-1; these have none, so they were not attempted (counted as not "
                "solved, and left out of `report --counterfactual`).\n\n",
                *(f"- {_md(e)}\n" for e in result.no_reference)]
    return out


def _md(text: str) -> str:
    return text.replace("\n", " ").replace("|", "/")


def print_run_problems(result: RunResult, console: Console) -> None:
    """Say, at the end of a run, which attempts broke off and where the agent failed."""
    for title, lines in (("attempt(s) broke off with an error", result.errors),
                         ("checkpoint(s) where the agent failed", result.agent_errors),
                         ("checkpoint(s) not attempted: no reference solution to start from",
                          result.no_reference),
                         ("checkpoint(s) the LLM judge could not judge", result.judge_errors)):
        if not lines:
            continue
        console.print(f"[bold yellow]{len(lines)} {title}:[/]")
        for line in lines[:SHOWN]:
            console.print(f"  {escape(line)}", soft_wrap=True)
        if len(lines) > SHOWN:
            console.print(f"  ... and {len(lines) - SHOWN} more in result.json")
