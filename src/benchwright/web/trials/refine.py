"""What the LLM pass over failures (`benchwright metrics causes RUN_DIR`,
coding/report/refine_causes.py) is told about each failed web attempt: the closed set, the
rules' cause and detail, what the evaluator expected and got, the agent's final response, and
the end of its browser-use history. Every file is read from the trial folder through no link
and size-capped: a run folder is hostile.
"""

from __future__ import annotations

from pathlib import Path

from benchwright.files.nofollow import read_regular
from benchwright.report_parts.failure_causes import CAUSES, FailedUnit
from benchwright.web.evaluation.scoring import AGENT_RESPONSE, HISTORY, TaskRow, load_summary
from benchwright.web.scorecard.causes import attempt_failure
from benchwright.web.trials.layout import WebRunLayout

MAX_HISTORY = 6000
"""Characters of the history sent (its end: where the agent stopped)."""
MAX_RESPONSE = 2000
"""Characters of the final response sent."""


def web_prompts(run_dir: Path, units: list[FailedUnit] | None = None
                ) -> list[tuple[FailedUnit, str]]:
    """Each failed attempt (those of `units` when given) and the text sent about it."""
    layout = WebRunLayout(run_dir)
    wanted = None if units is None else {u.unit: u for u in units}
    found = []
    for row in sorted(load_summary(layout.tasks_dir).tasks, key=lambda r: (r.task_id, r.trial)):
        if row.score >= 1:
            continue
        unit = attempt_failure(row)
        if wanted is not None and unit.unit not in wanted:
            continue
        folder = layout.trial_dir(row.task_id, row.trial)
        found.append((wanted[unit.unit] if wanted else unit, _prompt(unit, row, folder)))
    return found


def _prompt(unit: FailedUnit, row: TaskRow, folder: Path) -> str:
    mismatches = "\n".join(f"- {m.field or m.evaluator}: expected {m.expected}, got {m.got}"
                           for m in row.mismatches[:5])
    return "\n".join([
        "A web agent's attempt at a task failed. Sort the failure into exactly one cause of "
        "this closed set: " + ", ".join(str(c) for c in CAUSES) + ".",
        f"Attempt: {unit.unit}",
        f"The rules found: {unit.cause} ({unit.detail or 'no detail'}).",
        "What the evaluator expected and got:", mismatches or "(nothing recorded)",
        "The agent's final response:", _text(folder, AGENT_RESPONSE, MAX_RESPONSE, last=False),
        "The end of the agent's history:", _text(folder, HISTORY, MAX_HISTORY, last=True),
        "Answer with the cause, the exception type if the agent crashed (else null), and "
        "one sentence saying why."])


def _text(folder: Path, name: str, limit: int, last: bool) -> str:
    data = read_regular(folder, name, limit=limit, last=last)
    return data.decode("utf-8", "replace") if data else "(none)"
