"""The viewer's pages of web runs: the list row of a run, the run page (the report's per-site
rates, macro average, failure modes and unpassable flags, with every trial), one trial (intent,
steps, answer, verdict, HAR), and a head-to-head of two web runs.

Figures are the web track's: `track.report(run, baseline)` (web/scorecard/figures.py) and
result.json; a trial's files are read by `web.runs.trial_files`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from benchwright.errors import BenchwrightError
from benchwright.view.catalog import RunRef, read_result
from benchwright.view.run_state import RunState
from benchwright.view.stamped import StampedCache
from benchwright.web.evaluation.scoring import TaskRow, load_summary
from benchwright.web.evaluation.tasks import WebTask, load_task_file
from benchwright.web.scorecard.figures import WebReport, task_scores
from benchwright.web.trials.layout import WebRunLayout
from benchwright.web.trials.models import TrialRecord, WebManifest, WebRunResult
from benchwright.web.trials.trial_files import har_entries, read_trial
from benchwright.web.trials.trial_rules import read_trials

INTENT_SHOWN = 160
"""Characters of a task's intent shown in the run page's table."""


def manifest_of(ref: RunRef) -> WebManifest:
    """The web manifest, read by the run's own track."""
    manifest = ref.track.read(ref.path)
    assert isinstance(manifest, WebManifest), "a web run's track reads a web manifest"
    return manifest


def result_of(path: Path) -> WebRunResult | None:
    """result.json, when there is a readable one."""
    return read_result(path, WebRunResult)


@functools.lru_cache(maxsize=16)
def _dataset(path: Path | None, _mtime: float) -> dict[int, WebTask]:
    if path is None:
        return {}
    try:
        return load_task_file(path).tasks
    except BenchwrightError:
        return {}


def tasks_of(manifest: WebManifest) -> dict[int, WebTask]:
    """The run's tasks as its dataset file says (empty for the official dataset, which lives in
    the evaluator's environment: the viewer never builds it)."""
    path = manifest.dataset_file
    mtime = path.stat().st_mtime if path is not None and path.is_file() else 0.0
    return _dataset(path, mtime)


def _summary_rows(path: Path) -> list[TaskRow] | None:
    try:
        return load_summary(WebRunLayout(path).tasks_dir).tasks
    except BenchwrightError:
        return None


MAX_JOURNALS = 64
"""Runs whose parsed journal is kept (every trial page needs its record: reading a journal of
2,400 trials takes 11 ms, a page's worth)."""


class WebPages:
    """The web track's pages."""

    track = "web"

    def __init__(self) -> None:
        self._journals: StampedCache[Path, list[TrialRecord]] = StampedCache(MAX_JOURNALS)

    def journal(self, ref: RunRef) -> list[TrialRecord]:
        """The run's journal records; kept while the file's time and size stay the same (it is
        stamped before it is read, so a line added meanwhile only makes the next read afresh)."""
        path = WebRunLayout(ref.path).journal
        try:
            info = path.stat()
            stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = None
        return list(self._journals.get(path, stamp, lambda: read_trials(path, manifest_of(ref))))

    def row(self, ref: RunRef, state: RunState) -> dict[str, Any]:
        """What the run list and the overview show of a run."""
        manifest = manifest_of(ref)
        result = None if state.running else result_of(ref.path)
        done = len(self.journal(ref))
        totals = result.totals if result else None
        return {**_identity(ref, manifest), **state.fields(result.complete if result else None),
                "progress": {"done": done, "planned": len(manifest.tasks)
                             * manifest.config.trials, "unit": "trials"},
                "rate": result.pass_rate if result else None,
                "rate_ci": result.pass_rate_ci if result else None,
                "macro": result.macro_average if result else None,
                "finished": result.finished_at if result else None,
                "cost": totals.cost_usd if totals else None,
                "tokens": totals.input_tokens + totals.output_tokens if totals else None,
                "agent_s": totals.agent_time_s if totals else None,
                "errors": result.n_errors if result else 0}

    def ci(self, ref: RunRef) -> dict[str, Any]:
        """The pass rate and macro average with their CIs, as result.json has them."""
        result = result_of(ref.path)
        metrics = []
        if result is not None and result.pass_rate_ci is not None:
            metrics.append({"name": "pass rate", "estimate": result.pass_rate_ci})
        if result is not None and result.macro_average is not None:
            metrics.append({"name": "template macro average", "estimate": result.macro_average})
        return {"rid": ref.rid, "metrics": metrics}

    def run_page(self, ref: RunRef, state: RunState) -> dict[str, Any]:
        """The run page: the report and every trial."""
        manifest = manifest_of(ref)
        report = _report(ref, None)
        result = result_of(ref.path)
        records = self.journal(ref)
        return {**_identity(ref, manifest), **state.fields(result.complete if result else None),
                "progress": {"done": len(records), "planned": len(manifest.tasks)
                             * manifest.config.trials, "unit": "trials"},
                "report": report, "result": result,
                "trial_rows": _trial_rows(manifest, records, _summary_rows(ref.path))}

    def detail(self, ref: RunRef, rest: list[str]) -> dict[str, Any] | None:
        """A page below the run: `t/<task_id>/<trial>`."""
        match rest:
            case ["t", task_id, trial] if task_id.isdigit() and trial.isdigit():
                return self.trial_page(ref, int(task_id), int(trial))
        return None

    def trial_page(self, ref: RunRef, task_id: int, trial: int) -> dict[str, Any] | None:
        """One trial."""
        manifest = manifest_of(ref)
        planned = {t.task_id: t for t in manifest.tasks}
        if task_id not in planned or not 1 <= trial <= manifest.config.trials:
            return None
        folder = WebRunLayout(ref.path).trial_dir(task_id, trial)
        if not folder.is_dir():
            return None
        task = tasks_of(manifest).get(task_id)
        record = next((r for r in self.journal(ref)
                       if r.task_id == task_id and r.trial == trial), None)
        return {**_identity(ref, manifest), "task_id": task_id, "trial": trial,
                "task": _task(task, planned[task_id].sites), "record": record,
                "files": read_trial(folder), "har": har_entries(folder)}

    def compare(self, a: RunRef, b: RunRef) -> dict[str, Any]:
        """Run a against run b, paired by task: the report's comparison and per-task scores."""
        ma, mb = manifest_of(a), manifest_of(b)
        rows_a, rows_b = _summary_rows(a.path) or [], _summary_rows(b.path) or []
        scores_a = {t.task_id: t for t in task_scores(rows_a)}
        scores_b = {t.task_id: t for t in task_scores(rows_b)}
        ids = sorted(scores_a.keys() | scores_b.keys())
        return {"a": _identity(a, ma), "b": _identity(b, mb), "report": _report(a, b),
                "tasks": [{"task_id": i, "a": scores_a[i].mean if i in scores_a else None,
                           "b": scores_b[i].mean if i in scores_b else None,
                           "sites": (scores_a.get(i) or scores_b[i]).sites} for i in ids],
                "overlap": _overlap(rows_a, rows_b)}

    def keys(self, ref: RunRef) -> list[str]:
        """Every data key of the run's pages (what a bundle writes)."""
        records = self.journal(ref)
        return [f"run/{ref.rid}", f"run/{ref.rid}/ci",
                *(f"run/{ref.rid}/t/{r.task_id}/{r.trial}" for r in records)]


def _report(ref: RunRef, baseline: RunRef | None) -> WebReport | None:
    """The report, or None before the run is scored."""
    try:
        report = ref.track.report(ref.path, baseline.path if baseline else None)
    except BenchwrightError:
        return None
    assert isinstance(report, WebReport)
    return report


def _identity(ref: RunRef, manifest: WebManifest) -> dict[str, Any]:
    config = manifest.config
    sites = sorted({s for t in manifest.tasks for s in t.sites})
    return {"rid": ref.rid, "track": "web", "path": str(ref.path), "name": ref.path.name,
            "suite": config.suite, "problems": [str(t.task_id) for t in manifest.tasks],
            "sites": sites, "trials": config.trials, "agent": str(config.agent.name),
            "model": config.agent.model, "prompt": config.agent.prompt,
            "created": manifest.created_at, "version": manifest.benchwright_version}


def _trial_rows(manifest: WebManifest, records: list[TrialRecord],
                scored: list[TaskRow] | None) -> list[dict[str, Any]]:
    verdicts = {(r.task_id, r.trial): r for r in scored or []}
    tasks = tasks_of(manifest)
    rows = []
    for record in sorted(records, key=lambda r: (r.task_id, r.trial)):
        verdict = verdicts.get((record.task_id, record.trial))
        task = tasks.get(record.task_id)
        rows.append({"task_id": record.task_id, "trial": record.trial,
                     "status": str(record.status), "steps": record.steps,
                     "duration_s": record.duration_s, "response": str(record.response_status),
                     "intent": task.intent[:INTENT_SHOWN] if task else None,
                     "sites": [str(s) for s in task.sites] if task else [record.group],
                     "verdict": verdict})
    return rows


def _task(task: WebTask | None, sites: list[str]) -> dict[str, Any]:
    if task is None:
        return {"intent": None, "sites": sites}
    return {"intent": task.intent, "sites": [str(s) for s in task.sites],
            "start_urls": list(task.start_urls), "type": str(task.task_type),
            "template": task.intent_template_id, "expected_status": task.expected_status,
            "unpassable": task.unpassable}


def _overlap(a: list[TaskRow], b: list[TaskRow]) -> dict[str, int]:
    scores_b = {(r.task_id, r.trial): r.score for r in b}
    counts = {"both": 0, "a_only": 0, "b_only": 0, "neither": 0}
    for row in a:
        other = scores_b.get((row.task_id, row.trial))
        if other is None:
            continue
        pa, pb = row.score >= 1, other >= 1
        counts["both" if pa and pb else "a_only" if pa else "b_only" if pb else "neither"] += 1
    return counts


PAGES = WebPages()
