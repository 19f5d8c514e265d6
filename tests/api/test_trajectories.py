"""`benchwright.load_atif`: a web trial's or coding checkpoint's trajectory as ATIF, whatever wrote
it (ours, another tool's, or older runs' own logs converted), and a bad or missing one as one
UserInputError line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import benchwright
from benchwright.coding.agents.base import Usage
from benchwright.coding.agents.trajectory import Role, Step, ToolCall, Trajectory
from benchwright.files.atif import ATIF_FILE, schema_version, write_atif

pytest.importorskip("atif")


def _foreign() -> dict[str, object]:
    return {"schema_version": "ATIF-v1.5", "agent": {"name": "other", "version": "2"},
            "steps": [{"step_id": 1, "source": "user", "message": "hi"},
                      {"step_id": 2, "source": "agent", "message": "done"}]}


def test_a_trials_own_and_a_foreign_file_are_read(tmp_path: Path) -> None:
    ours = tmp_path / "tasks" / "7" / "trial_1"
    ours.mkdir(parents=True)
    write_atif(ours / ATIF_FILE, {**_foreign(), "schema_version": schema_version()})
    assert benchwright.load_atif(ours).agent.name == "other"
    harbor = tmp_path / "harbor" / "agent"
    harbor.mkdir(parents=True)
    (harbor / "trajectory.json").write_text(json.dumps(_foreign()))
    assert [s.source for s in benchwright.load_atif(harbor.parent).steps] == ["user", "agent"]


def test_older_runs_logs_are_converted(tmp_path: Path) -> None:
    checkpoint = tmp_path / "kv" / "trial_1" / "checkpoint_1"
    (checkpoint / "agent").mkdir(parents=True)
    trajectory = Trajectory(agent="mini", model="m", steps=[
        Step(role=Role.USER, text="go"),
        Step(role=Role.ASSISTANT, text="ok", tool_calls=[ToolCall(id="a", name="bash",
                                                                   arguments={"c": "ls"})])],
        usage=Usage(input_tokens=5, output_tokens=1, cost_usd=None, steps=1))
    (checkpoint / "agent" / "trajectory.json").write_text(trajectory.model_dump_json())
    loaded = benchwright.load_atif(checkpoint)
    assert loaded.session_id == "kv/trial_1/checkpoint_1"
    assert loaded.steps[1].tool_calls[0].function_name == "bash"
    assert loaded.final_metrics.total_cost_usd is None
    trial = tmp_path / "tasks" / "9" / "trial_1"
    trial.mkdir(parents=True)
    (trial / "history.json").write_text(json.dumps({"steps": [{"done": "42"}]}))
    web = benchwright.load_atif(trial)
    assert web.steps[0].tool_calls[0].function_name == "done" and web.agent.name == "unknown"


@pytest.mark.parametrize("content,expected", [
    (None, "no agent trajectory"), (b"{", "not JSON"),
    (b'{"schema_version": 1}', "not valid ATIF"),
    (b'{"a": 1}', "neither ATIF nor benchwright's"), ("link", "link")])
def test_a_bad_or_missing_trajectory_is_one_error(tmp_path: Path, content: bytes | str | None,
                                                   expected: str) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    if content == "link":
        (tmp_path / "elsewhere.json").write_text(json.dumps(_foreign()))
        (folder / ATIF_FILE).symlink_to(tmp_path / "elsewhere.json")
        (folder / "trajectory.json").symlink_to(tmp_path / "elsewhere.json")
    elif isinstance(content, bytes):
        (folder / "trajectory.json").write_bytes(content)
    with pytest.raises(benchwright.UserInputError) as caught:
        benchwright.load_atif(folder)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_not_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(benchwright.UserInputError, match="not a trial or checkpoint folder"):
        benchwright.load_atif(tmp_path / "missing")
