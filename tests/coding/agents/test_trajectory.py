"""The normalised trajectory format round-trips and refuses other versions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchwright.coding.agents.base import AgentStatus, Usage
from benchwright.coding.agents.trajectory import (
    Role,
    Step,
    ToolCall,
    ToolResult,
    Trajectory,
    load_trajectory,
)


def test_round_trip(tmp_path: Path) -> None:
    trajectory = Trajectory(
        agent="claude_code", agent_version="1.0.0", model="m",
        steps=[Step(role=Role.ASSISTANT, text="hi",
                    tool_calls=[ToolCall(id="c1", name="Bash", arguments={"command": "ls"})]),
               Step(role=Role.TOOL, tool_results=[ToolResult(call_id="c1", output="a.py")])],
        usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.25, steps=1),
        exit_status=AgentStatus.INFRA_ERROR)
    path = trajectory.write(tmp_path)
    assert json.loads(path.read_text())["format"] == "benchwright.trajectory/1"
    assert load_trajectory(path) == trajectory
    assert trajectory.cost_usd == 0.25


def test_unknown_version_is_refused(tmp_path: Path) -> None:
    path = Trajectory(agent="x").write(tmp_path)
    data = json.loads(path.read_text()) | {"format": "benchwright.trajectory/99"}
    path.write_text(json.dumps(data))
    with pytest.raises(ValidationError):
        load_trajectory(path)
