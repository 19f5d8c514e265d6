"""A web run's report header and result.json: who ran what, when, and what it spent."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from benchwright.report_parts.failure_causes import CauseTable, cause_table
from benchwright.report_parts.grading_noise import read_noise
from benchwright.report_parts.header import RunHeader
from benchwright.report_parts.sequence import read_sequence
from benchwright.web.evaluation.scoring import WebEvalSummary
from benchwright.web.scorecard.figures import WebReport
from benchwright.web.trials.layout import WebRunLayout
from benchwright.web.trials.models import WebManifest, WebRunResult
from benchwright.web.trials.trial_rules import read_trials


def web_header(run_dir: Path, manifest: WebManifest, summary: WebEvalSummary) -> RunHeader:
    """The run's identity from its manifest, journal and scoring."""
    config = manifest.config
    records = read_trials(WebRunLayout(run_dir).journal, manifest)
    return RunHeader(
        track="web", run_dir=run_dir, suite=config.suite,
        problems=[str(t.task_id) for t in manifest.tasks], agent=str(config.agent.name),
        model=config.agent.model, prompt=config.agent.prompt, policy=None, trials=config.trials,
        created_at=manifest.created_at,
        finished_at=max((r.finished_at for r in records), default=None),
        benchwright_version=manifest.benchwright_version,
        grader_versions=[f"webarena-verified {summary.evaluator.version}"],
        model_traffic=config.llm.describe() if config.llm else None)


def with_identity(report: WebReport, run_dir: Path, manifest: WebManifest,
                  summary: WebEvalSummary, grading_time_s: float | None) -> WebReport:
    """The report with the run's header, the scoring time in its totals, and what the run's
    own files add: the grading noise measured, the `--until-decided` sequence."""
    totals = report.totals.model_copy(update={"grading_time_s": grading_time_s})
    return report.model_copy(update={"header": web_header(run_dir, manifest, summary),
                                     "totals": totals, "grading_noise": read_noise(run_dir),
                                     "sequence": read_sequence(run_dir),
                                     "failure_causes": _refined(report, run_dir, summary)})


def _refined(report: WebReport, run_dir: Path, summary: WebEvalSummary) -> CauseTable | None:
    """The failures by cause with the LLM pass's answers put in while their evidence holds
    (`metrics causes`; the baseline's counts kept as they were)."""
    from benchwright.coding.report.refine_causes import apply_refined, read_refined
    from benchwright.web.scorecard.causes import summary_failures
    from benchwright.web.trials.refine import web_prompts

    table = report.failure_causes
    if table is None or read_refined(run_dir) is None:
        return table
    refined = cause_table(apply_refined(run_dir, summary_failures(summary), web_prompts))
    before = {row.cause: row.baseline for row in table.rows}
    rows = [row.model_copy(update={"baseline": before.get(row.cause)}) for row in refined.rows]
    return refined.model_copy(update={"rows": rows,
                                      "n_baseline_failed": table.n_baseline_failed})


def saved_grading_time(run_dir: Path) -> float | None:
    """The scoring time the run's result.json recorded, if any."""
    try:
        saved = WebRunResult.model_validate_json(
            WebRunLayout(run_dir).result_json.read_bytes())
    except (OSError, ValidationError):
        return None
    return saved.totals.grading_time_s if saved.totals is not None else None
