"""Where the local suite's tasks and reference scripts live in the package, and their loaders."""

from __future__ import annotations

from pathlib import Path

from benchwright.web.evaluation.tasks import WebDataset, load_task_file
from benchwright.web.local_suite.action_script import ActionScript, load_script

PACKAGE_DIR = Path(__file__).parent
DATASET_PATH = PACKAGE_DIR / "tasks.json"
SCRIPTS_DIR = PACKAGE_DIR / "scripts"
WRONG_SUFFIX = ".wrong.yaml"


def dataset_path() -> Path:
    """The suite's tasks in the WebArena Verified dataset format (the evaluator's `dataset`)."""
    return DATASET_PATH


def load_local_dataset() -> WebDataset:
    """The suite's tasks as a `WebDataset` (its subsets are empty)."""
    return load_task_file(DATASET_PATH)


def script_path(task_id: int, wrong: bool = False) -> Path:
    """`scripts/<id>.yaml`, or the deliberately wrong `scripts/<id>.wrong.yaml`."""
    return SCRIPTS_DIR / (f"{task_id}{WRONG_SUFFIX}" if wrong else f"{task_id}.yaml")


def reference_script(task_id: int) -> ActionScript:
    """The task's reference script, validated."""
    return load_script(script_path(task_id))


def wrong_script_ids() -> list[int]:
    """Tasks that also have a deliberately wrong script."""
    found = SCRIPTS_DIR.glob(f"*{WRONG_SUFFIX}")
    return sorted(int(p.name.removesuffix(WRONG_SUFFIX)) for p in found)
