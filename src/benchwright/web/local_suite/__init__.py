"""The local web task suite: small sites served on loopback, tasks in the WebArena Verified format,
and a reference action script per task. See docs/web.md, "The local task suite"."""

from benchwright.web.local_suite.action_script import (
    ActionScript,
    ScriptStep,
    load_script,
)
from benchwright.web.local_suite.catalog import (
    DATASET_PATH,
    SCRIPTS_DIR,
    dataset_path,
    load_local_dataset,
    reference_script,
    script_path,
    wrong_script_ids,
)
from benchwright.web.local_suite.server import LocalSuite, reset_sites, serve_suite, start_suite

__all__ = [
    "DATASET_PATH",
    "SCRIPTS_DIR",
    "ActionScript",
    "LocalSuite",
    "ScriptStep",
    "dataset_path",
    "load_local_dataset",
    "load_script",
    "reference_script",
    "reset_sites",
    "script_path",
    "serve_suite",
    "start_suite",
    "wrong_script_ids",
]
