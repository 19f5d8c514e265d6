"""Issue 26 point 1, the web side: every file of a web run read back is hostile. A figure out of
bounds (a score of 5, passed over total, a negative count, NaN) or a verdict that names another
task than its folder's is refused naming the file, or, where docs/web.md says so (metrics.json, a
cached verdict), left out with a warning: no figure over 100% or under 0% can be printed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchwright.api.runs import read_result
from benchwright.errors import UserInputError
from benchwright.web.trials.models import WebRunResult
from tests.helpers.bad_input_probes import (
    SOURCE_ROOT,
    WEB_RUN,
    Probe,
    finished_web_run,
    run_probe,
)

pytestmark = pytest.mark.e2e
TRIAL = "tasks/{task}/trial_1"


@pytest.fixture(scope="module")
def web_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return finished_web_run(tmp_path_factory.mktemp("web"))


def _edit_json(change: Callable[[Any], Any]) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        path.write_text(json.dumps(change(json.loads(path.read_text()))))
    return edit


def _set(**values: Any) -> Callable[[Path], None]:
    return _edit_json(lambda data: {**data, **values})


def _totals(**values: Any) -> Callable[[Path], None]:
    return _edit_json(lambda data: {**data, "totals": {**data["totals"], **values}})


def test_an_edited_summary_or_result_is_one_line_naming_the_file(tmp_path: Path,
                                                                  web_run: Path) -> None:
    summary = "w/tasks/eval_summary.json"
    damages = {
        "pass-rate-over-1": {summary: _totals(pass_rate=1.5)},
        "success-over-attempts": {summary: _totals(n_success=9)},
        "negative-errors": {summary: _totals(n_error=-1, n_success=3)},
        "score-nan": {summary: _edit_json(lambda d: {**d, "tasks": [
            {**d["tasks"][0], "score": float("nan")}, *d["tasks"][1:]]})},
        "row-twice": {summary: _edit_json(lambda d: {**d, "tasks": [d["tasks"][0]] * 2})},
    }
    probes = [Probe(f"report-{name}", ["report", "{tmp}/w"], {"w": WEB_RUN, **files},
                    "eval_summary.json") for name, files in damages.items()]
    probes += [Probe(f"baseline-{name}", ["web", "eval", "{tmp}/w/tasks", "--run", "{tmp}/w",
                                         "--baseline", "{tmp}/b/tasks"],
                     {"w": WEB_RUN, "b": WEB_RUN, **{k.replace("w/", "b/", 1): v
                                                     for k, v in files.items()}},
                     "eval_summary.json")
               for name, files in damages.items() if name != "row-twice"]
    failures = [v for v in (run_probe(p, tmp_path, {WEB_RUN: web_run}) for p in probes) if v]
    assert not failures, "\n".join(failures)


def test_an_edited_result_json_is_refused_by_the_api(tmp_path: Path, web_run: Path) -> None:
    for name, change in {"passed-over-trials": {"n_passed": 7},
                         "rate-over-1": {"pass_rate": 3.0},
                         "negative-trials": {"n_trials": -2},
                         "ci-over-1": {"pass_rate_ci": {"value": 1.2, "low": 1.0, "high": 1.4,
                                                        "n_clusters": 2}}}.items():
        run = tmp_path / name
        shutil.copytree(web_run, run)
        _set(**change)(run / "result.json")
        with pytest.raises(UserInputError, match=r"result\.json"):
            read_result(run, WebRunResult)


def test_edited_verdicts_and_metrics_never_become_figures(tmp_path: Path,
                                                          web_run: Path) -> None:
    """A cached verdict scored 5 (its inputs digest kept, so it would be reused) or copied from
    another task's folder is scored again; a metrics.json with negative steps or a NaN cost is
    left out with a warning."""
    run = tmp_path / "w"
    shutil.copytree(web_run, run)
    first, second = (run / TRIAL.format(task=t) for t in (7001, 7002))
    _set(score=5.0)(first / "eval_result.json")
    shutil.copyfile(first / "eval_result.json", second / "eval_result.json")
    _edit_json(lambda d: {**d, "task_id": 7001, "score": 1.0})(second / "eval_result.json")
    _set(steps=-3)(first / "metrics.json")
    (second / "metrics.json").write_text(
        (second / "metrics.json").read_text().replace('"cost_usd": 0.0', '"cost_usd": NaN'))
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT}
    done = subprocess.run([sys.executable, "-m", "benchwright", "eval", str(run)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads((run / "result.json").read_text())
    assert (result["n_passed"], result["n_trials"], result["pass_rate"]) == (2, 2, 1.0)
    assert result["totals"]["steps"] >= 0
    for folder, task in ((first, 7001), (second, 7002)):
        verdict = json.loads((folder / "eval_result.json").read_text())
        assert (verdict["task_id"], verdict["score"]) == (task, 1.0)
    warnings = json.loads((run / "tasks" / "eval_summary.json").read_text())["warnings"]
    assert any("metrics.json" in w and "steps" in w for w in warnings), warnings
    report = (run / "report.md").read_text()
    assert all(0 <= float(p) <= 100 for p in re.findall(r"(-?[\d.]+)%", report)), report
    assert " nan" not in report.lower()
