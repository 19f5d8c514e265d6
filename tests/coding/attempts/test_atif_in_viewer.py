"""ATIF in: a trajectory another tool wrote in ATIF shows in the checkpoint page's transcript."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.coding.attempts.checkpoint_files import CheckpointFiles
from benchwright.view.transcript import transcript

pytest.importorskip("atif")

# as another harness writes it: its own tool names and ids, a multimodal message, no costs
OTHER_TOOL = {
    "schema_version": "ATIF-v1.6",
    "session_id": "their-run-42",
    "agent": {"name": "terminus-2", "version": "0.9", "model_name": "some-model"},
    "steps": [
        {"step_id": 1, "source": "user", "message": "Fix the bug in app.py"},
        {"step_id": 2, "source": "agent", "message": "Let me look.",
         "tool_calls": [{"tool_call_id": "t1", "function_name": "bash_command",
                         "arguments": {"keystrokes": "cat app.py\n"}}],
         "observation": {"results": [{"source_call_id": "t1", "content": "print(1/0)"}]},
         "metrics": {"prompt_tokens": 50, "completion_tokens": 9}},
        {"step_id": 3, "source": "agent",
         "message": [{"type": "text", "text": "Fixed it."}]},
    ],
    "final_metrics": {"total_prompt_tokens": 120, "total_completion_tokens": 20},
}


@pytest.mark.parametrize("name", ["trajectory.json", "trajectory.atif.json"])
def test_an_atif_file_any_tool_wrote_shows_as_the_transcript(tmp_path: Path, name: str) -> None:
    agent = tmp_path / "p" / "trial_1" / "checkpoint_1" / "agent"
    agent.mkdir(parents=True)
    (agent / name).write_text(json.dumps(OTHER_TOOL))
    files = CheckpointFiles(tmp_path, "p", 1, "checkpoint_1").agent()
    assert files.trajectory is not None and files.logs == []
    assert files.trajectory.agent == "terminus-2"
    assert files.trajectory.usage.cost_usd is None  # not said: unknown, never 0
    shown = json.dumps(transcript(files.trajectory))
    for text in ("Fix the bug in app.py", "cat app.py", "print(1/0)", "Fixed it."):
        assert json.dumps(text)[1:-1] in shown, text


def test_a_link_named_like_an_atif_file_is_not_followed(tmp_path: Path) -> None:
    agent = tmp_path / "p" / "trial_1" / "checkpoint_1" / "agent"
    agent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(OTHER_TOOL))
    (agent / "trajectory.atif.json").symlink_to(elsewhere)
    assert CheckpointFiles(tmp_path, "p", 1, "checkpoint_1").agent().trajectory is None
    assert "link" in (CheckpointFiles(tmp_path, "p", 1, "checkpoint_1").agent().trajectory_note
                      or "")


@pytest.mark.parametrize("content,expected", [
    ("{", "not JSON"), ("[" * 5000, "nested"),
    (json.dumps({**OTHER_TOOL, "steps": [{"step_id": 2, "source": "user", "message": "x"}]}),
     "not valid ATIF: Value error, steps[0].step_id=2 is not sequential")])
def test_a_bad_atif_file_is_a_one_line_note(tmp_path: Path, content: str, expected: str) -> None:
    agent = tmp_path / "p" / "trial_1" / "checkpoint_1" / "agent"
    agent.mkdir(parents=True)
    (agent / "trajectory.atif.json").write_text(content)
    files = CheckpointFiles(tmp_path, "p", 1, "checkpoint_1").agent()
    assert files.trajectory is None and files.trajectory_note is not None
    assert files.trajectory_note.startswith("trajectory.atif.json: ")
    assert expected in files.trajectory_note and "\n" not in files.trajectory_note
