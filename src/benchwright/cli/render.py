"""Rich tables for results shown in the terminal."""

from __future__ import annotations

from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from benchwright.coding.evaluation import CheckpointEvaluation
from benchwright.coding.policies import PassPolicy

SHOWN_POLICIES = (PassPolicy.CORE_CASES, PassPolicy.ALL_NON_ERROR_CASES, PassPolicy.ALL_CASES)


def _ratio(passed: int, total: int) -> Text:
    style = "green" if passed == total else ("yellow" if passed else "red")
    return Text(f"{passed}/{total}", style=style)


def evaluation_view(evaluation: CheckpointEvaluation) -> RenderableType:
    """Counts per group, policy verdicts, status and duration of one graded checkpoint."""
    title = f"{evaluation.problem} / {evaluation.checkpoint}"
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("group")
    table.add_column("passed/total", justify="right")
    for group, count in evaluation.counts.items():
        table.add_row(str(group), _ratio(count.passed, count.total))
    total = sum(c.total for c in evaluation.counts.values())
    table.add_row("all", _ratio(sum(c.passed for c in evaluation.counts.values()), total),
                  end_section=True)
    verdicts = Text("  ".join(""))
    for policy in SHOWN_POLICIES:
        ok = evaluation.verdicts.get(policy, False)
        verdicts.append(f"{policy}: ", style="bold")
        verdicts.append("pass" if ok else "fail", style="green" if ok else "red")
        verdicts.append("   ")
    footer = Text(
        f"status: {evaluation.status}   pytest exit {evaluation.pytest_exit_code}   "
        f"collected {evaluation.pytest_collected}   tests {evaluation.duration_s:.1f} s   "
        f"total {evaluation.total_duration_s:.1f} s   runtime {evaluation.grader.runtime}",
        style="dim",
    )
    parts: list[RenderableType] = [table, verdicts, footer]
    if evaluation.infrastructure_reason:
        parts.append(Text(evaluation.infrastructure_reason, style="red"))
    return RichGroup(*parts)
