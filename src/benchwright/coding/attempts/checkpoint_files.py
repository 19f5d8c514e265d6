"""Reading one graded checkpoint's files for display: the prompt, the files the agent changed
(old and new text), every test with its output, and the agent's result, trajectory and logs.

Everything here may hold what an agent or its code wrote: files are read without following a
link (`nofollow.read_regular`), cut at a bound, decoded with replacement, and a file that is
missing or malformed reads as absent, never as an error. Nothing is interpreted beyond JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from benchwright.coding.agents.atif import from_atif_model
from benchwright.coding.agents.base import AgentResult
from benchwright.coding.agents.trajectory import TRAJECTORY_FILE, Trajectory
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.snapshots import text_lines
from benchwright.coding.attempts.starts import START
from benchwright.coding.grading.artifacts import GRADING_JSON
from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.errors import BenchwrightError
from benchwright.files.atif import ATIF_FILE, read_atif
from benchwright.files.nofollow import TreeWalk, read_regular

MAX_TEXT = 512 * 1024
"""Characters kept of a prompt, a log or pytest's output."""
MAX_TEST_OUTPUT = 16 * 1024
"""Characters kept of one test's failure report, stdout and stderr."""
MAX_JSON = 64 * 2**20
"""Largest JSON file read (pytest's report of a big test suite)."""
MAX_FILES = 200
"""Changed files, and agent log files, shown per checkpoint."""
SNAPSHOT = "snapshot"
DIFF_JSON = "diff.json"
PROMPT = "prompt.txt"
AGENT_RESULT = "inference_result.json"
AGENT_DIR = "agent"
PYTEST_STDOUT = "evaluation/stdout.txt"
PYTEST_REPORT = "evaluation/report.json"


class TextFile(BaseModel):
    """A text file, cut at a bound."""

    name: str
    """Its path relative to the folder it was read from."""
    text: str
    """Its text (invalid UTF-8 replaced)."""
    truncated: bool = False
    """Whether the text was cut."""


class TestOutput(BaseModel):
    """What pytest reported for one test besides its outcome."""

    longrepr: str = ""
    """The failure report (traceback and assertion)."""
    stdout: str = ""
    """Output the test captured."""
    stderr: str = ""
    """Error output the test captured."""


class ChangedFile(BaseModel):
    """A file the agent added, removed or modified since the previous checkpoint."""

    path: str
    """Relative to the workspace."""
    change: Literal["added", "removed", "modified"]
    """What happened to it."""
    old: list[str] = Field(default_factory=list)
    """Its lines before (empty when added, binary or too large)."""
    new: list[str] = Field(default_factory=list)
    """Its lines now (empty when removed, binary or too large)."""


class AgentFiles(BaseModel):
    """What the agent left for this checkpoint."""

    result: AgentResult | None = None
    """Status, usage, duration and error (inference_result.json)."""
    trajectory: Trajectory | None = None
    """The normalised conversation, for agents that call a model."""
    logs: list[TextFile] = Field(default_factory=list)
    """Every other file of its artifacts folder (stdout, stderr, native logs)."""
    trajectory_note: str | None = None
    """Why no trajectory is shown when an ATIF file is there but cannot be read (a link, too
    large, not JSON, not valid ATIF), in one line."""


def read_text(root: Path, rel: str, limit: int = MAX_TEXT) -> TextFile | None:
    """`root/rel` as text, never following a link; None when it is not a regular file."""
    data = read_regular(root, rel, limit=limit * 4 + 4)
    if data is None:
        return None
    text = data.decode("utf-8", errors="replace")
    return TextFile(name=rel, text=text[:limit], truncated=len(text) > limit)


def _read_json(root: Path, rel: str) -> Any:
    data = read_regular(root, rel, limit=MAX_JSON + 1)
    if data is None or len(data) > MAX_JSON:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _model(root: Path, rel: str, model: type[BaseModel]) -> Any:
    raw = _read_json(root, rel)
    if raw is None:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None


class CheckpointFiles:
    """The files of `RUN_DIR/<problem>/trial_<n>/<checkpoint>/`."""

    def __init__(self, run_dir: Path, problem: str, trial: int, checkpoint: str) -> None:
        self.run_dir = run_dir
        self.rel = RunLayout(run_dir).checkpoint_dir(problem, trial, checkpoint) \
            .relative_to(run_dir).as_posix()
        self.problem, self.trial = problem, trial

    def _at(self, name: str) -> str:
        return f"{self.rel}/{name}"

    def prompt(self) -> TextFile | None:
        """The rendered prompt the agent got."""
        return read_text(self.run_dir, self._at(PROMPT))

    def grading(self) -> CheckpointEvaluation | None:
        """grading.json: every test with its group and outcome."""
        found: CheckpointEvaluation | None = _model(self.run_dir, self._at(GRADING_JSON),
                                                    CheckpointEvaluation)
        return found

    def pytest_output(self) -> TextFile | None:
        """pytest's whole output."""
        return read_text(self.run_dir, self._at(PYTEST_STDOUT))

    def test_outputs(self) -> dict[str, TestOutput]:
        """`file::id` -> the test's report, from pytest's JSON report (written in the sandbox)."""
        raw = _read_json(self.run_dir, self._at(PYTEST_REPORT))
        tests = raw.get("tests") if isinstance(raw, dict) else None
        found: dict[str, TestOutput] = {}
        for test in tests if isinstance(tests, list) else []:
            if isinstance(test, dict) and isinstance(test.get("nodeid"), str):
                found[test["nodeid"]] = _test_output(test)
        return found

    def reference_start(self) -> Path | None:
        """What a reference-start checkpoint started from (its `start/` folder: the reference
        solution of the checkpoint before); None for a checkpoint that continued the agent's
        own code."""
        folder = self.run_dir / self._at(START)
        return folder if folder.is_dir() and not folder.is_symlink() else None

    def changed_files(self, previous: str | None) -> list[ChangedFile]:
        """What changed since the checkpoint `previous` (everything, at the first), or since
        the reference solution it started from (as diff.json measures it)."""
        diff = _read_json(self.run_dir, self._at(DIFF_JSON))
        if not isinstance(diff, dict):
            return []
        here = self.run_dir / self._at(SNAPSHOT)
        before = self.reference_start() or (
            (self.run_dir / self.rel).parent / previous / SNAPSHOT if previous else None)
        files = []
        for change in ("added", "removed", "modified"):
            for rel in _strings(diff.get(change))[:MAX_FILES]:
                files.append(ChangedFile(
                    path=rel, change=change,
                    old=text_lines(before, rel) if before and change != "added" else [],
                    new=text_lines(here, rel) if change != "removed" else []))
        return sorted(files, key=lambda f: f.path)[:MAX_FILES]

    def agent(self) -> AgentFiles:
        """The agent's result, trajectory and logs."""
        folder = self.run_dir / self._at(AGENT_DIR)
        logs: list[TextFile] = []
        if folder.is_dir() and not folder.is_symlink():
            for entry in TreeWalk(folder):
                if (entry.kind == "file" and entry.rel not in (TRAJECTORY_FILE, ATIF_FILE)
                        and len(logs) < MAX_FILES):
                    text = read_text(folder, entry.rel)
                    if text is not None:
                        logs.append(text)
        trajectory, note = self._trajectory()
        return AgentFiles(result=_model(self.run_dir, self._at(AGENT_RESULT), AgentResult),
                          trajectory=trajectory, logs=logs, trajectory_note=note)

    def _trajectory(self) -> tuple[Trajectory | None, str | None]:
        """Ours (`trajectory.json`), else an ATIF one whatever wrote it: in `trajectory.json`
        (Harbor's name for it) or `trajectory.atif.json` (ours); with why none could be read."""
        ours = self._at(f"{AGENT_DIR}/{TRAJECTORY_FILE}")
        found: Trajectory | None = _model(self.run_dir, ours, Trajectory)
        if found is not None:
            return found, None
        note = None
        for rel in (ours, self._at(f"{AGENT_DIR}/{ATIF_FILE}")):
            if not os.path.lexists(self.run_dir / rel):
                continue
            try:
                return from_atif_model(read_atif(self.run_dir, rel)), None
            except BenchwrightError as exc:  # AtifError, or the atif extra is missing
                note = note or f"{rel.rsplit('/', 1)[-1]}: {exc.message}"
        return None, note


def _test_output(test: dict[str, Any]) -> TestOutput:
    parts = [test.get(stage) for stage in ("setup", "call", "teardown")]
    stages = [p for p in parts if isinstance(p, dict)]
    return TestOutput(longrepr=_joined(s.get("longrepr") for s in stages),
                      stdout=_joined(s.get("stdout") for s in stages),
                      stderr=_joined(s.get("stderr") for s in stages))


def _joined(values: Any) -> str:
    text = "\n".join(v for v in values if isinstance(v, str) and v)
    return text if len(text) <= MAX_TEST_OUTPUT else text[:MAX_TEST_OUTPUT] + "\n… (cut)"


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
