"""A web trial whose only trajectory is an ATIF file another tool wrote, in Chromium: its steps
show (actions, results, errors, reasoning, page, tokens and cost), its planted HTML stays text; a
trial whose ATIF file is not valid shows one warning line, the page still drawn, no console
error. The same for a coding checkpoint's transcript."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli
from tests.helpers.coding_runs import write_run
from tests.helpers.tiers import starts
from tests.helpers.view_runs import Page, cut_off, rid, section_shot, serving

PLANTED = "<img src=x onerror=\"document.title='pwned'\">"


def _foreign() -> dict[str, Any]:
    """An ATIF trajectory as another harness writes it (no benchwright extras, v1.6)."""
    def step(n: int, call: str, args: dict[str, Any], result: str,
             error: bool = False) -> dict[str, Any]:
        return {"step_id": n, "source": "agent", "message": f"goal of step {n}",
                "reasoning_content": f"I think {n}", "timestamp": f"2026-11-26T19:00:0{n}Z",
                "tool_calls": [{"tool_call_id": f"t{n}", "function_name": call,
                                "arguments": args}],
                "observation": {"results": [{"source_call_id": f"t{n}", "content": result,
                                             **({"extra": {"is_error": True}} if error else {})}]},
                "metrics": {"prompt_tokens": 900, "completion_tokens": 40}}
    return {"schema_version": "ATIF-v1.6", "session_id": "other-harness-42",
            "agent": {"name": "other-web-agent", "version": "3.1", "model_name": "some-model"},
            "steps": [{"step_id": 1, "source": "user", "message": "Find the order total"},
                      step(2, "browser_navigate", {"url": "http://shop.local/orders"}, "opened"),
                      step(3, "browser_click", {"selector": "#order-7"},
                           "no element #order-7", error=True),
                      step(4, "final_answer", {"text": f"$51.95 {PLANTED}"},
                           f"$51.95 {PLANTED}")],
            "final_metrics": {"total_prompt_tokens": 2700, "total_completion_tokens": 120,
                              "total_steps": 4}}


@pytest.fixture(scope="module")
@starts("e2e")
def web_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("atif")
    run = tmp_path_factory.mktemp("atif_view") / "runs" / "web"
    done = run_cli("run", "web", "--suite", "local", "--task-ids", "9001-9002", "--out", str(run),
                   env={**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"})
    assert done.returncode == 0, done.stderr[-3000:]
    first, second = (run / "tasks" / t / "trial_1" for t in ("9001", "9002"))
    for trial in (first, second):
        (trial / "history.json").unlink()
        (trial / "trajectory.atif.json").unlink()
    (first / "trajectory.json").write_text(json.dumps(_foreign()))  # Harbor's name for it
    bad = _foreign()
    bad["steps"][2]["step_id"] = 7
    (second / "trajectory.atif.json").write_text(json.dumps(bad))
    return run


@pytest.fixture(scope="module")
def coding_run(web_run: Path) -> Path:
    """A coding run beside it (written directly): checkpoint 1's agent left another tool's ATIF
    trajectory, checkpoint 2's a bad one."""
    run = write_run(web_run.parent / "coding", {"kv_server": ["SS"]}, 2)
    first, second = (run / "kv_server" / "trial_1" / f"checkpoint_{n}" / "agent" for n in (1, 2))
    for agent in (first, second):
        agent.mkdir()
    (first / "trajectory.json").write_text(json.dumps(_foreign()))
    (second / "trajectory.atif.json").write_text("[" * 10_000)
    return run


@pytest.fixture(scope="module")
def served(web_run: Path, coding_run: Path) -> Iterator[str]:
    with serving(web_run.parent) as url:
        yield url


def test_a_foreign_atif_trial_shows_its_steps(page: Page, served: str, web_run: Path,
                                              tmp_path: Path) -> None:
    tab = page.open(f"{served}#/run/{rid(web_run)}/t/9001/1")
    section_shot(tab, "steps", tmp_path / "view-atif-trial.png")
    steps = tab.locator("#s-steps ~ .step")
    assert steps.count() == 4
    source = tab.inner_text(".atif-source")
    assert "trajectory.json" in source and "2,820" in source and "unknown" in source
    assert "Find the order total" in steps.nth(0).inner_text()
    second = steps.nth(1).inner_text()
    assert "browser navigate" in second and "url http://shop.local/orders" in second
    assert "I think 2" in second and "goal of step 2" in second and "→ opened" in second
    third = steps.nth(2)
    assert "err" in (third.get_attribute("class") or "")
    assert "✘ no element #order-7" in third.inner_text()
    assert PLANTED in steps.nth(3).inner_text() and tab.title() != "pwned"
    assert tab.locator("#s-steps ~ .step img").count() == 0
    assert cut_off(tab) == [] and page.errors == []


def test_a_bad_atif_file_is_one_warning(page: Page, served: str, web_run: Path) -> None:
    tab = page.open(f"{served}#/run/{rid(web_run)}/t/9002/1")
    note = tab.inner_text(".steps-note")
    assert note.startswith("Steps not shown: trajectory.atif.json: not valid ATIF")
    assert "\n" not in note.strip() and "Traceback" not in tab.inner_text("body")
    assert tab.locator(".step").count() == 0 and page.errors == []


def test_a_checkpoints_atif_transcript_and_a_bad_one(page: Page, served: str, coding_run: Path,
                                                     tmp_path: Path) -> None:
    run = rid(coding_run)
    tab = page.open(f"{served}#/run/{run}/cp/kv_server/1/checkpoint_1")
    section_shot(tab, "agent", tmp_path / "view-atif-checkpoint.png")
    assert tab.inner_text("#s-agent ~ h3").startswith("Transcript: 3 steps (other-web-agent")
    shown = tab.inner_text("main")
    assert "task (user)" in shown and "no element #order-7" in shown
    assert PLANTED in shown and tab.title() != "pwned"
    tab = page.open(f"{served}#/run/{run}/cp/kv_server/1/checkpoint_2")
    section_shot(tab, "agent", tmp_path / "view-atif-bad-checkpoint.png")
    note = tab.inner_text(".trajectory-note")
    assert note.startswith("Transcript not shown: trajectory.atif.json: the ATIF trajectory")
    assert "nested" in note and page.errors == []
