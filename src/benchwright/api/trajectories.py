"""`load_atif`: the agent trajectory of one web trial or coding checkpoint, as ATIF.

Whatever wrote it: benchwright's own `trajectory.atif.json`, an ATIF file another tool left
(Harbor calls it `trajectory.json`), or, for older runs, benchwright's own logs converted on the
fly (a checkpoint's `agent/trajectory.json`, a trial's `history.json`). Every file is read as
hostile (no link followed, bounded, validated with the `atif` models): a bad one is one
`UserInputError` naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchwright.errors import UserInputError
from benchwright.files.atif import (
    ATIF_FILE,
    MAX_ATIF_BYTES,
    AtifError,
    read_atif,
    validated,
    validated_file,
)
from benchwright.files.nofollow import read_regular
from benchwright.files.untrusted import parse_untrusted_json

AGENT_DIR = "agent"
OTHER_NAME = "trajectory.json"
HISTORY = "history.json"


def load_atif(folder: Path | str) -> Any:
    """The trajectory of the trial or checkpoint in `folder`, as an `atif.Trajectory` (the
    `atif` package's pydantic model; needs the `atif` extra).

    `folder` is a web trial's folder (`RUN/tasks/TASK_ID/trial_N`) or a coding checkpoint's
    (`RUN/PROBLEM/trial_N/CHECKPOINT`). Raises `UserInputError` when it holds no trajectory, or
    one that is a link, too large, not JSON or not valid ATIF."""
    path = Path(folder).expanduser()
    if path.is_symlink() or not path.is_dir():
        raise UserInputError("not a trial or checkpoint folder", path=path, hint=(
            "give RUN/tasks/TASK_ID/trial_N or RUN/PROBLEM/trial_N/CHECKPOINT"))
    for rel in (ATIF_FILE, f"{AGENT_DIR}/{ATIF_FILE}"):
        if _present(path, rel):
            return read_atif(path, rel)
    for rel in (OTHER_NAME, f"{AGENT_DIR}/{OTHER_NAME}"):
        if _present(path, rel):
            return _trajectory_json(path, rel)
    if _present(path, HISTORY):
        return _web_history(path)
    raise AtifError("no agent trajectory here (agents that call no model leave none)",
                    path=path)


def _present(folder: Path, rel: str) -> bool:
    """Something is there (a link too: reading it then says it is a link, unread)."""
    return os.path.lexists(folder / rel)


def _trajectory_json(folder: Path, rel: str) -> Any:
    """An ATIF `trajectory.json` (another tool's), else benchwright's own, converted."""
    from benchwright.coding.agents.atif import to_atif
    from benchwright.coding.agents.trajectory import Trajectory

    data = read_regular(folder, rel, MAX_ATIF_BYTES + 1)
    if data is None:
        raise AtifError(f"{rel} is a link or not a regular file: not read", path=folder / rel)
    if len(data) > MAX_ATIF_BYTES:
        raise AtifError(f"{rel} is larger than {MAX_ATIF_BYTES // 2**20} MiB", path=folder / rel)
    value = parse_untrusted_json(data, folder / rel, what=rel, error=AtifError)
    if isinstance(value, dict) and "schema_version" in value:
        return validated_file(value, folder / rel)
    try:
        ours = Trajectory.model_validate(value)
    except ValueError:
        raise AtifError(f"{rel} is neither ATIF nor benchwright's trajectory",
                        path=folder / rel) from None
    session = "/".join(folder.resolve().parts[-3:])
    return validated(to_atif(ours, session))


def _web_history(folder: Path) -> Any:
    """An older web trial's history.json, converted (no per-step tokens: they were not kept)."""
    from benchwright.web.trials.trial_atif import trial_doc

    session = "/".join(folder.resolve().parts[-2:])
    return validated(trial_doc(folder, session, _web_identity(folder)))


def _web_identity(trial: Path) -> Any:
    """The agent and model from the run's manifest (`RUN/tasks/ID/trial_N`), when it reads."""
    from benchwright.errors import BenchwrightError
    from benchwright.web.trials.runner import load_web_manifest
    from benchwright.web.trials.trial_atif import TrialIdentity

    run_dir = trial.resolve().parents[2]
    try:
        agent = load_web_manifest(run_dir).config.agent
    except (BenchwrightError, OSError, ValueError):  # no run around it, or not one we read
        return TrialIdentity("unknown")
    return TrialIdentity(agent.name, agent.model)
