"""Web trials in ATIF: the conversion of browser-use's history (actions as tool calls, results and
errors as observations, per-step metrics, unknown cost left unknown, a free-text answer shown as
given), a trial page reading an ATIF trajectory another tool wrote (and a bad one as a note), and
`benchwright export atif` on a web run, new and old, through the CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchwright.files.atif import ATIF_FILE, validated
from benchwright.web.browser.answer_watch import STAND_IN
from benchwright.web.browser.trial_models import StepUsage
from benchwright.web.evaluation.scoring import HISTORY, METRICS
from benchwright.web.trials.trial_atif import TrialIdentity, trial_doc, write_trial_atif
from benchwright.web.trials.trial_files import read_trial
from tests.helpers import run_cli
from tests.helpers.web_suites import write_suite

atif = pytest.importorskip("atif")

T0 = 1_790_000_000.0


def _item(n: int, actions: list[dict[str, Any]], results: list[dict[str, Any]],
          url: str) -> dict[str, Any]:
    return {"model_output": {"thinking": f"think {n}", "evaluation_previous_goal": "ok",
                             "memory": "m", "next_goal": f"goal {n}", "action": actions},
            "result": results, "state": {"url": url, "title": f"page {n}"},
            "metadata": {"step_start_time": T0 + n, "step_end_time": T0 + n + 0.5,
                         "step_number": n}}


def _trial(folder: Path, cost: float | None = 0.002) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    history = {"history": [
        _item(1, [{"go_to_url": {"url": "http://shop/"}}], [{"extracted_content": "opened"}],
              "about:blank"),
        _item(2, [{"click_element_by_index": {"index": 7}}, {"input_text": {"index": 3,
                                                                             "text": "tea"}}],
              [{"extracted_content": "clicked"}, {"error": "Element index 3 not found"}],
              "http://shop/"),
        _item(3, [{"done": {"success": True, "data": {"error_details": STAND_IN}}}],
              [{"extracted_content": "{stand-in}", "is_done": True}], "http://shop/cart"),
    ]}
    (folder / HISTORY).write_text(json.dumps(history))
    (folder / METRICS).write_text(json.dumps({
        "steps": 3, "tokens": 330, "input_tokens": 300, "output_tokens": 30,
        "cached_input_tokens": 100, "cost_usd": cost, "duration_s": 4.0,
        "trial_status": "completed", "errors": []}))
    return folder


USAGE = [StepUsage(step=1, calls=0),
         StepUsage(step=2, calls=1, input_tokens=100, cached_input_tokens=0, output_tokens=10,
                   cost_usd=0.001),
         StepUsage(step=3, calls=2, input_tokens=200, cached_input_tokens=100,
                   output_tokens=20, cost_usd=None)]


def test_browser_use_steps_become_tool_calls_observations_and_metrics(tmp_path: Path) -> None:
    folder = _trial(tmp_path / "t")
    who = TrialIdentity("browser-use", "gpt-x", "Buy tea", "I bought tea")
    doc = validated(trial_doc(folder, "7/trial_1", who, USAGE))
    user, first, second, last = doc.steps
    assert (user.source, user.message) == ("user", "Buy tea")
    assert [c.function_name for c in second.tool_calls] == ["click_element_by_index",
                                                            "input_text"]
    assert second.tool_calls[1].arguments == {"index": 3, "text": "tea"}
    clicked, failed = second.observation.results
    assert clicked.source_call_id == second.tool_calls[0].tool_call_id
    assert clicked.content == "clicked" and failed.content == "Element index 3 not found"
    assert failed.extra["is_error"] and clicked.extra["url"] == "http://shop/cart"
    assert (second.message, second.reasoning_content) == ("goal 2", "think 2")
    assert second.extra["url"] == "http://shop/" and second.extra["title"] == "page 2"
    assert second.timestamp.startswith("2026-") and second.extra["duration_s"] == 0.5
    # a step that thought but whose call was not seen: no count claimed
    assert (first.llm_call_count, first.metrics, first.reasoning_content) == (None, None,
                                                                              "think 1")
    assert (second.metrics.prompt_tokens, second.metrics.cost_usd) == (100, 0.001)
    assert last.llm_call_count == 2 and last.metrics.cost_usd is None  # unknown, not 0
    # the free-text answer, not the harness's stand-in
    assert last.tool_calls[0].arguments == {"text": "I bought tea"}
    assert last.observation.results[0].content == "I bought tea"
    final = doc.final_metrics
    assert (final.total_prompt_tokens, final.total_cached_tokens, final.total_cost_usd,
            final.total_steps) == (300, 100, 0.002, 4)


def test_an_unknown_cost_or_missing_metrics_stays_unknown(tmp_path: Path) -> None:
    doc = validated(trial_doc(_trial(tmp_path / "t", cost=None), "s", TrialIdentity("x")))
    assert doc.final_metrics.total_cost_usd is None and doc.agent.version == "unknown"
    (tmp_path / "t" / METRICS).unlink()
    final = validated(trial_doc(tmp_path / "t", "s", TrialIdentity("x"))).final_metrics
    assert (final.total_prompt_tokens, final.total_cost_usd) == (None, None)


@pytest.mark.parametrize("history", [b"{nope", b"[" * 10000, b'{"history": [1, "x", null]}',
                                     json.dumps({"history": [{"model_output": {"action": [
                                         {"a": 1, "b": 2}, "junk", {"done": "text"}]},
                                         "result": "junk", "state": [],
                                         "metadata": {"step_start_time": "x"}}]}).encode()])
def test_a_hostile_history_still_gives_a_valid_trajectory(tmp_path: Path, history: bytes) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / HISTORY).write_bytes(history)
    path = write_trial_atif(folder, "s", TrialIdentity("x"), None, None)
    assert path is not None
    atif.Trajectory.model_validate_json(path.read_text())


def test_a_history_behind_a_link_is_not_read(tmp_path: Path) -> None:
    folder = _trial(tmp_path / "real")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / HISTORY).symlink_to(folder / HISTORY)
    doc = validated(trial_doc(linked, "s", TrialIdentity("x")))
    assert doc.steps == []


def _foreign(steps: int = 2) -> dict[str, Any]:
    """An ATIF trajectory as another harness writes it (no benchwright extras)."""
    return {"schema_version": "ATIF-v1.6", "session_id": "other-tool-1",
            "agent": {"name": "other-agent", "version": "9.9", "model_name": "m"},
            "steps": [{"step_id": 1, "source": "user", "message": "Find the cheapest tea"},
                      *({"step_id": n, "source": "agent", "message": f"looking {n}",
                         "tool_calls": [{"tool_call_id": f"c{n}", "function_name": "browser_click",
                                         "arguments": {"selector": f"#item{n}"}}],
                         "observation": {"results": [{"source_call_id": f"c{n}",
                                                      "content": f"clicked {n}"}]}}
                        for n in range(2, steps + 2))],
            "final_metrics": {"total_prompt_tokens": 50, "total_completion_tokens": 5}}


def test_a_trial_page_reads_a_foreign_atif_trajectory(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "trajectory.json").write_text(json.dumps(_foreign()))
    files = read_trial(folder)
    assert files.steps_source == "trajectory.json" and files.steps_note is None
    assert [s.calls[0].name for s in files.steps[1:]] == ["browser_click", "browser_click"]
    assert files.steps[1].calls[0].target == "selector #item2"
    assert files.steps[1].results == ["clicked 2"] and files.final_answer == "clicked 3"
    assert files.trajectory_totals == {"prompt_tokens": 50, "completion_tokens": 5,
                                       "cost_usd": None}


def test_a_bad_atif_trajectory_is_a_note_not_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    bad = _foreign()
    bad["steps"][1]["step_id"] = 9
    (folder / ATIF_FILE).write_text(json.dumps(bad))
    files = read_trial(folder)
    assert files.steps == [] and files.steps_note is not None
    assert files.steps_note.startswith(f"{ATIF_FILE}: not valid ATIF")


def _fake_run(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    write_suite(suite)
    run_dir = tmp_path / "run"
    env = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake", "MY_API_KEY": "sk-x-" + "9" * 24}
    done = run_cli("run", "web", "--suite", str(suite / "tasks.json"), "--config",
                   str(suite / "env.yaml"), "--task-ids", "7001-7003", "--out", str(run_dir),
                   "--json", env=env)
    assert done.returncode == 0, done.stderr
    return run_dir


def test_export_atif_on_web_runs_new_and_old(tmp_path: Path) -> None:
    run_dir = _fake_run(tmp_path)
    trials = sorted((run_dir / "tasks").glob("*/trial_*"))
    assert len(trials) == 3 and all((t / ATIF_FILE).is_file() for t in trials)
    (trials[0] / ATIF_FILE).unlink()  # an old run's trial: converted from history.json
    (trials[1] / ATIF_FILE).write_text(json.dumps(_foreign()))  # another tool's: kept
    (trials[2] / ATIF_FILE).write_text("{junk")  # a bad one: skipped, named
    key = "sk-secret-" + "7" * 24
    (trials[0] / HISTORY).write_text(json.dumps({"steps": [{"done": f"the key {key}"}]}))
    out = tmp_path / "atif"
    done = run_cli("export", "atif", str(run_dir), "--out", str(out), "--json",
                   env={**os.environ, "MY_API_KEY": key})
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["written"] == [f"{t.parent.name}/{t.name}/{ATIF_FILE}" for t in trials[:2]]
    [skipped] = summary["skipped"]
    assert skipped.startswith(f"{trials[2].parent.name}/trial_1: {ATIF_FILE}: ")
    assert "Traceback" not in done.stderr and skipped in done.stderr
    first, second = (atif.Trajectory.model_validate_json((out / w).read_text())
                     for w in summary["written"])
    assert first.agent.name == "scripted" and first.steps[0].message.startswith("Fixture task")
    assert key not in (out / summary["written"][0]).read_text()
    assert second.agent.name == "other-agent"


def test_export_atif_refuses_a_run_without_trajectories(tmp_path: Path) -> None:
    run_dir = _fake_run(tmp_path)
    for trial in (run_dir / "tasks").glob("*/trial_*"):
        shutil.rmtree(trial)
    done = run_cli("export", "atif", str(run_dir), "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and "no agent trajectory" in done.stderr
    assert "Traceback" not in done.stderr


def test_export_follows_no_link_out_of_the_run(tmp_path: Path) -> None:
    run_dir = _fake_run(tmp_path)
    outside = tmp_path / "outside" / "trial_1"
    outside.mkdir(parents=True)
    (outside / HISTORY).write_text(json.dumps({"steps": [{"done": "outside secret"}]}))
    (run_dir / "tasks" / "666").symlink_to(outside.parent)  # a task folder that is a link
    (run_dir / "tasks" / "7001" / "trial_2").symlink_to(outside)  # a trial folder that is one
    out = tmp_path / "atif"
    done = run_cli("export", "atif", str(run_dir), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert len(summary["written"]) == 3
    assert sorted(summary["skipped"]) == ["666/trial_1: a link, not a trial folder",
                                          "7001/trial_2: a link, not a trial folder"]
    assert "outside secret" not in "".join(p.read_text() for p in out.rglob("*.json"))
