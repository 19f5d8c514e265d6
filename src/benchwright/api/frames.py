"""Runs as pandas DataFrames: one row per run (`runs_frame`), per graded checkpoint of coding runs
(`checkpoints_frame`) or per finished trial of web runs (`trials_frame`). Each takes run folders,
or folders holding run folders (one level down), and reads them through `load_run`. pandas is
an optional dependency (`pip install 'benchwright[pandas]'`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchwright.api.runs import CodingRun, Run, WebRun, load_run
from benchwright.coding.grading.policies import GroupCount
from benchwright.coding.problems.config import Group
from benchwright.errors import UserInputError, missing_extra
from benchwright.runs.layout import MANIFEST

if TYPE_CHECKING:
    import pandas

    from benchwright.coding.attempts.models import CheckpointRecord
    from benchwright.web.evaluation.scoring import TaskRow

Paths = Path | str | Iterable[Path | str]


def runs_frame(paths: Paths) -> pandas.DataFrame:
    """One row per run, of either track: identity, configuration and result.json's figures
    (nested ones flattened with dots: `totals.cost_usd`); a run not finished yet has its
    identity and configuration only."""
    return _frame([_run_row(run) for run in runs_among(paths)], ["run_dir", "track"])


def checkpoints_frame(paths: Paths) -> pandas.DataFrame:
    """One row per graded checkpoint of the coding runs among `paths` (web runs are skipped):
    its verdicts, tests passed per group, the agent's usage and the code-quality figures."""
    rows = [_checkpoint_row(run, record) for run in runs_among(paths) if isinstance(run, CodingRun)
            for record in run.checkpoints]
    return _frame(rows, ["run_dir", "problem", "trial", "index"])


def trials_frame(paths: Paths) -> pandas.DataFrame:
    """One row per finished trial of the web runs among `paths` (coding runs are skipped): how
    it ended, the evaluator's score and `cause` (once scored: passed, wrong answer, step limit,
    agent error, evaluator error, infrastructure) and the trial's steps, tokens and cost."""
    rows = [row for run in runs_among(paths) if isinstance(run, WebRun) for row in _trial_rows(run)]
    return _frame(rows, ["run_dir", "task_id", "trial"])


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise missing_extra("data frames need pandas", "pandas") from None
    return pandas


def _frame(rows: list[dict[str, Any]], order: list[str]) -> pandas.DataFrame:
    pandas = _pandas()
    frame = pandas.json_normalize(rows) if rows else pandas.DataFrame(columns=order)
    return frame.sort_values(order, kind="stable").reset_index(drop=True) if rows else frame


def runs_among(paths: Paths) -> Iterator[Run]:
    """Every run among `paths`: a run folder, or a folder whose children include run folders."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    for raw in given:
        folder = Path(raw).expanduser()
        if (folder / MANIFEST).exists() or not folder.is_dir():
            yield load_run(folder)
            continue
        children = sorted(c for c in folder.iterdir()
                          if not c.is_symlink() and c.is_dir() and (c / MANIFEST).is_file())
        if not children:
            raise UserInputError("no run here (no manifest.json, nor in a folder below)",
                                 path=folder, hint="pass run folders or a folder of runs")
        yield from (load_run(child) for child in children)


def _run_row(run: Run) -> dict[str, Any]:
    config = run.config.model_dump(mode="json", exclude={"task_ids"})
    identity = {"format", "run_dir", "agent", "model", "created_at", "benchwright_version"}
    result = run.result.model_dump(mode="json", exclude=identity) if run.result else {}
    agent = run.config.agent if isinstance(run, CodingRun) else run.config.agent.name
    model = run.config.model if isinstance(run, CodingRun) else run.config.agent.model
    return {"run_dir": str(run.path), "track": run.track, "agent": str(agent), "model": model,
            "created_at": run.manifest.created_at,
            "benchwright_version": run.manifest.benchwright_version,
            **{f"config.{k}": v for k, v in config.items()}, **result}


def _checkpoint_row(run: CodingRun, record: CheckpointRecord) -> dict[str, Any]:
    counts = {str(group).lower(): record.counts.get(group, GroupCount()) for group in Group}
    usage = record.agent.usage
    return {
        "run_dir": str(run.path), "agent": run.config.agent, "model": run.config.model,
        "problem": record.problem, "trial": record.trial, "checkpoint": record.checkpoint,
        "index": record.index, "passed": record.passed, "solved": record.solved,
        "iso_solved": record.iso_solved, "core_solved": record.core_solved,
        "grade_status": str(record.grade_status), "agent_status": str(record.agent.status),
        "passed_tests": sum(c.passed for c in counts.values()),
        "total_tests": sum(c.total for c in counts.values()),
        **{f"{group}_{key}": getattr(count, key) for group, count in counts.items()
           for key in ("passed", "total")},
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cached_input_tokens": usage.cached_input_tokens, "cost_usd": usage.cost_usd,
        "steps": usage.steps, "agent_duration_s": record.agent.duration_s,
        "grade_duration_s": record.grade_duration_s, "snapshot_files": record.snapshot_files,
        "finished_at": record.finished_at,
        **({"quality": record.quality.values} if record.quality else {})}


def _trial_rows(run: WebRun) -> list[dict[str, Any]]:
    scored = _scored(run)
    tasks = {t.task_id: t for t in run.manifest.tasks}
    rows = []
    for record in run.trials:
        row = scored.get((record.task_id, record.trial))
        task = tasks.get(record.task_id)
        rows.append({
            "run_dir": str(run.path), "agent": str(run.config.agent.name),
            "model": run.config.agent.model, "task_id": record.task_id, "trial": record.trial,
            "sites": ",".join(task.sites) if task else None,
            "task_type": str(task.task_type) if task else None,
            "status": str(record.status), "response_status": str(record.response_status),
            "steps": record.steps, "duration_s": record.duration_s,
            "score": row.score if row else None,
            "eval_status": str(row.status) if row else None,
            "cause": str(row.cause) if row else None,
            "intent_template_id": row.intent_template_id if row else None,
            **_trial_metrics(row), "finished_at": record.finished_at})
    return rows


def _trial_metrics(row: TaskRow | None) -> dict[str, Any]:
    metrics = row.metrics if row is not None else None
    names = ("input_tokens", "output_tokens", "cached_input_tokens", "cost_usd")
    return {name: getattr(metrics, name) if metrics else None for name in names}


def _scored(run: WebRun) -> dict[tuple[int, int], TaskRow]:
    """The evaluator's verdicts (eval_summary.json), by (task, trial); none before scoring."""
    from benchwright.web.evaluation.scoring import SUMMARY, load_summary
    from benchwright.web.trials.layout import WebRunLayout

    tasks_dir = WebRunLayout(run.path).tasks_dir
    if not (tasks_dir / SUMMARY).exists():
        return {}
    return {(row.task_id, row.trial): row for row in load_summary(tasks_dir).tasks}
