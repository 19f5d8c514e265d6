"""scripts/validate_table.py: the docs table of `problems validate` on the public problems, checked
against the parity table's failing tests."""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any

from tests.helpers import ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("validate_table",
                                                  ROOT / "scripts" / "validate_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(passed: int, total: int) -> dict[str, Any]:
    return {"total": total, "passed": passed, "core_passed": True, "all_passed": passed == total}


def test_the_parity_table_gives_each_checkpoints_failing_tests() -> None:
    failing = _script().parity_failing((ROOT / "docs" / "scbench-parity.md").read_text())
    assert failing["dynamic_buffer/3"] == 31  # Core 10/20, Functionality 21/42
    assert failing["circuit_eval/1"] == 0
    assert failing["trajectory_api/4"] is None  # nothing collected


def test_a_row_folds_scratch_paths_and_agrees_within_the_flaky_tests() -> None:
    script = _script()
    scratch = "/root/.cache/benchwright/grading/grade-1-2-{}/workspace/.evaluation_tests/a.csv"
    findings = [
        *({"kind": "missing_data", "test": "t.py::a", "detail": f"{scratch.format(r)} is missing"}
          for r in ("x1", "y2")),  # one file, named once per run by an older version
        {"kind": "reference_fails", "test": "t.py::a", "detail": "boom"},
        {"kind": "reference_fails", "test": "t.py::b", "detail": "boom"},
        {"kind": "flaky", "test": "t.py::c", "detail": "failed 1 of 2 runs"}]
    checkpoint = {"runs": [_run(7, 10), _run(8, 10)], "findings": findings}
    row = script.table_row("p/1", checkpoint, {"p/1": 3})
    assert row == "| p/1 | 2 | 10 | 2/2 | 0/2 | 2 | 1 | missing_data 1 | yes |"
    assert script.table_row("p/1", checkpoint, {"p/1": 4}).endswith("| no (parity: 4) |")
    [line] = [d for d in script.details([("p/1", checkpoint)]) if "missing_data" in d]
    assert line == "- `missing_data` p/1: `t.py::a`: .evaluation_tests/a.csv is missing"
