"""The coding track enters the judge through its one door: what judges a run or a checkpoint
(coding/attempts/judging/judge.py, tasks.py and the checkpoint loop) imports from the judge its
session (the entry point and the values handed over) and its data models, never the rooms
behind it (planning, batching, the pool, carry-forward's line maps)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "benchwright"
CALLERS = ["coding/attempts/judging/judge.py", "coding/attempts/judging/tasks.py",
           "coding/attempts/chain.py", "coding/track.py", "cli/judge_cmd.py"]
DOOR = {"benchwright.judge.session", "benchwright.judge.run_summary",
        "benchwright.judge.models", "benchwright.judge.flags"}


def _judge_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = {node.module for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) and node.module}
    found |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
              for alias in node.names}
    return {name for name in found if name.startswith("benchwright.judge")}


def test_the_judging_path_imports_only_the_judges_door() -> None:
    beyond = {caller: sorted(_judge_imports(SRC / caller) - DOOR) for caller in CALLERS}
    assert beyond == {caller: [] for caller in CALLERS}
