"""ATIF out: conversion of `trajectory.json`, validation with the `atif` package's models, a
hostile trajectory file, and `benchwright export atif` on a real `mini` run (fake LLM server)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.agents.atif import export_run, from_atif, to_atif, write_atif
from benchwright.coding.agents.base import Usage
from benchwright.coding.agents.trajectory import (
    Role,
    Step,
    ToolCall,
    ToolResult,
    Trajectory,
)
from benchwright.files.atif import ATIF_FILE, schema_version, validated
from benchwright.files.redaction import Redactor
from tests.helpers import run_cli
from tests.helpers.mini_runs import FAKE_KEY, PROBLEM

atif = pytest.importorskip("atif")


def _trajectory() -> Trajectory:
    return Trajectory(agent="mini", agent_version="1.0", model="fake", steps=[
        Step(role=Role.SYSTEM, text="You are a coder."),
        Step(role=Role.USER, text="Write ledger.py"),
        Step(role=Role.ASSISTANT, text="Writing.", thinking="plan", input_tokens=100,
             output_tokens=20, cache_read_tokens=40, timestamp="2026-11-26T16:00:00Z",
             tool_calls=[ToolCall(id="c1", name="bash", arguments={"command": "ls"}),
                         ToolCall(name="edit", arguments="not json")]),
        Step(role=Role.TOOL, tool_results=[ToolResult(call_id="c1", output="a.py"),
                                           ToolResult(call_id="other", output="x",
                                                      is_error=True)]),
        Step(role=Role.ASSISTANT, text="Done.", input_tokens=130, output_tokens=5)],
        usage=Usage(input_tokens=230, output_tokens=25, cached_input_tokens=40,
                    cost_usd=0.0012, steps=2))


def test_conversion_fills_tool_calls_observations_and_metrics() -> None:
    model = validated(to_atif(_trajectory(), "ledger_cli/trial_1/checkpoint_1"))
    assert model.schema_version == schema_version() == "ATIF-v1.8"
    assert [s.source for s in model.steps] == ["system", "user", "agent", "agent"]
    turn = model.steps[2]
    assert [c.function_name for c in turn.tool_calls] == ["bash", "edit"]
    assert turn.tool_calls[1].arguments == {"raw": "not json"}
    assert turn.reasoning_content == "plan"
    results = turn.observation.results
    assert results[0].source_call_id == "c1" and results[0].content == "a.py"
    assert results[1].source_call_id is None  # answers no call of this step: kept, marked
    assert results[1].extra == {"is_error": True, "call_id": "other"}
    assert (turn.metrics.prompt_tokens, turn.metrics.completion_tokens,
            turn.metrics.cached_tokens) == (100, 20, 40)
    final = model.final_metrics
    assert (final.total_prompt_tokens, final.total_completion_tokens, final.total_cached_tokens,
            final.total_cost_usd, final.total_steps) == (230, 25, 40, 0.0012, 4)


def test_unknown_cost_stays_unknown() -> None:
    trajectory = _trajectory().model_copy(update={"usage": Usage(cost_usd=None)})
    assert validated(to_atif(trajectory)).final_metrics.total_cost_usd is None


def test_tool_results_with_no_agent_step_before_them_are_a_system_observation() -> None:
    trajectory = Trajectory(agent="x", steps=[
        Step(role=Role.TOOL, tool_results=[ToolResult(call_id="c9", output="early")]),
        Step(role=Role.TOOL, text="bare tool text")])
    [step] = validated(to_atif(trajectory)).steps
    assert step.source == "system"
    assert [r.content for r in step.observation.results] == ["early", "bare tool text"]


def test_written_beside_the_trajectory_and_valid(tmp_path: Path) -> None:
    _trajectory().write(tmp_path)
    path = write_atif(tmp_path, "s")
    assert path == tmp_path / ATIF_FILE
    atif.Trajectory.model_validate_json(path.read_text())


def test_hostile_trajectory_files_write_nothing(tmp_path: Path) -> None:
    cases = {
        "link": None,
        "bad_json": "{not json",
        "wrong_format": json.dumps({"format": "other/9", "agent": "x"}),
        "deep": "[" * 5000 + "]" * 5000,
        "bad_timestamp": _trajectory().model_copy(update={"steps": [
            Step(role=Role.ASSISTANT, text="t", timestamp="next tuesday\u0000")]}
        ).model_dump_json(),
    }
    secret = tmp_path / "secret.json"
    _trajectory().write(tmp_path)
    (tmp_path / "trajectory.json").rename(secret)
    for name, text in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        if text is None:
            (folder / "trajectory.json").symlink_to(secret)  # never followed
        else:
            (folder / "trajectory.json").write_text(text)
        written = write_atif(folder)
        assert (written is not None) == (name == "bad_timestamp"), name
    # an unparseable timestamp is dropped, not copied into the ATIF file
    doc = json.loads((tmp_path / "bad_timestamp" / ATIF_FILE).read_text())
    assert "timestamp" not in doc["steps"][0]


def test_export_skips_hostile_checkpoints_and_follows_no_link(tmp_path: Path) -> None:
    run = tmp_path / "run"
    good = run / "p" / "trial_1" / "checkpoint_1" / "agent"
    good.mkdir(parents=True)
    _trajectory().write(good)
    bad = run / "p" / "trial_1" / "checkpoint_2" / "agent"
    bad.mkdir(parents=True)
    (bad / "trajectory.json").write_text('{"format": 1}')
    elsewhere = tmp_path / "elsewhere" / "checkpoint_3" / "agent"
    elsewhere.mkdir(parents=True)
    _trajectory().write(elsewhere)
    (run / "p" / "trial_2").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    result = export_run(run, tmp_path / "out", Redactor({}))
    assert result.written == [f"p/trial_1/checkpoint_1/{ATIF_FILE}"]
    assert [s.split(":")[0] for s in result.skipped] == ["p/trial_1/checkpoint_2/agent/"
                                                         "trajectory.json"]
    assert not (tmp_path / "out" / "p" / "trial_2").exists()


def test_export_cli_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    for run_dir in ("missing", "empty", "link"):
        proc = run_cli("export", "atif", str(tmp_path / run_dir), "--out", str(tmp_path / "o"))
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith(("error", "Error")), proc.stderr


def _script() -> Any:
    from benchwright.testing import Script

    turns: list[dict[str, Any]] = [
        {"text": "Looking around.", "tool_calls": [{"name": "bash",
                                                     "arguments": {"command": "ls"}}]},
        {"text": "Nothing to do."}]
    return Script.model_validate({"turns": turns})


@pytest.mark.sandbox
def test_mini_run_then_export_every_file_validates_and_holds_no_key(
        problems_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("openai")
    from benchwright.testing import FakeLLMServer

    run = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY}
    with FakeLLMServer(_script()) as server:
        proc = run_cli("run", "coding", "--agent", "mini", "--model", "fake", "--problems-dir",
                       str(problems_dir), "--base-url", f"{server.base_url}/v1", "--no-metrics",
                       "--out", str(run), "-A", "input_price_per_mtok=2", env=env)
    assert proc.returncode == 0, proc.stderr
    agent_dir = run / PROBLEM / "trial_1" / "checkpoint_1" / "agent"
    beside = atif.Trajectory.model_validate_json((agent_dir / ATIF_FILE).read_text())
    assert beside.steps[-1].message == "Nothing to do."
    assert any(s.tool_calls for s in beside.steps)
    out = tmp_path / "atif"
    proc = run_cli("export", "atif", str(run), "--out", str(out), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "written": [f"{PROBLEM}/trial_1/checkpoint_1/{ATIF_FILE}"], "skipped": []}
    files = sorted(out.rglob("*.json"))
    assert [f.relative_to(out).as_posix() for f in files] == [
        f"{PROBLEM}/trial_1/checkpoint_1/{ATIF_FILE}"]
    for path in [*files, agent_dir / ATIF_FILE]:
        text = path.read_text()
        assert FAKE_KEY not in text
        atif.Trajectory.model_validate_json(text)


def test_atif_in_round_trips_ours() -> None:
    ours = _trajectory()
    back = from_atif(to_atif(ours))
    assert back is not None
    assert [s.role for s in back.steps] == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL,
                                            Role.ASSISTANT]
    assert back.steps[2].tool_calls[0].arguments == {"command": "ls"}
    assert back.steps[3].tool_results[0].output == "a.py"
    assert back.steps[3].tool_results[1].is_error
    assert (back.usage.input_tokens, back.usage.cost_usd, back.usage.steps) == (230, 0.0012, 2)


def test_atif_in_refuses_what_is_not_atif() -> None:
    for value in (None, [], "x", {"schema_version": "ATIF-v1.8"},
                  {"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"},
                   "steps": [{"step_id": 2, "source": "user", "message": "skipped one"}]}):
        assert from_atif(value) is None
