"""Issue 41, point 5 on the web track, on recorded runs: real Chromium, browser-use and the
scripted agent on the local suite, each task's script made to fail one way. The causes come from
what the trials recorded (metrics.json, the evaluator's verdict), nothing rewritten afterwards:

- 9001 opens a page off the sites (the harness's resolver refuses its host), then answers:
  refused action;
- 9002 clicks an element the page does not have (the agent gives up): agent error;
- 9003 adds the wrong product (the suite's own wrong script): wrong output;
- 9004 waits past the run's step limit: step or cost limit.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchwright.web.local_suite import SCRIPTS_DIR
from tests.helpers.cli import run_real_web_cli as benchwright

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                       reason="needs browser-use: pip install 'benchwright[web]'"),
]
OFFSITE = "http://offsite.invalid/login"
SCRIPTS = {
    9001: [{"navigate": {"url": OFFSITE}}, {"done": {"text": "$0.00", "success": True}}],
    9002: [{"navigate": {"url": "__SHOPPING__"}}, {"click": {"match": "id=no-such-element"}},
           {"done": {"text": "never reached", "success": True}}],
    9004: [{"navigate": {"url": "__SHOPPING__"}}, *[{"wait": {"seconds": 1}}] * 10,
           {"done": {"text": "never reached", "success": True}}],
}
EXPECTED = {9001: "refused action", 9002: "agent error", 9003: "wrong output",
            9004: "step or cost limit"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("web-causes-recorded")
    scripts = root / "scripts"
    scripts.mkdir()
    for task, steps in SCRIPTS.items():
        (scripts / f"{task}.yaml").write_text(json.dumps({"task_id": task, "steps": steps}))
    shutil.copy(SCRIPTS_DIR / "9003.wrong.yaml", scripts / "9003.yaml")
    done = benchwright("run", "web", "--suite", "local", "--agent", "scripted", "--task-ids",
                       "9001-9004", "--scripts", str(scripts), "--step-limit", "8",
                       "--out", str(root / "run"))
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "run"


def _report(run: Path) -> dict[str, Any]:
    done = benchwright("report", str(run), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_each_recorded_failure_has_its_cause(run: Path) -> None:
    table = _report(run)["failure_causes"]
    found = {int(u["unit"].split()[1]): u["cause"] for u in table["units"]}
    assert found == EXPECTED


def test_the_refused_page_is_recorded_and_named(run: Path) -> None:
    metrics = json.loads((run / "tasks" / "9001" / "trial_1" / "metrics.json").read_text())
    assert metrics["refused_requests"] == [OFFSITE]
    for task in (9002, 9003, 9004):  # the sites' own pages are never refused
        other = json.loads((run / "tasks" / str(task) / "trial_1" / "metrics.json").read_text())
        assert other["refused_requests"] == [], task
    [unit] = [u for u in _report(run)["failure_causes"]["units"] if u["unit"].startswith(
        "task 9001")]
    assert OFFSITE in unit["detail"]
    assert "| refused action | 1 |" in (run / "report.md").read_text()
