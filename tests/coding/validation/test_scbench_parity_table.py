"""scripts/scbench_parity.py --table: docs/scbench-parity.md's v1.0 table from the reference lines
and benchwright's --out lines (a later line for a checkpoint is its re-run)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.helpers import ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scbench_parity",
                                                  ROOT / "scripts" / "scbench_parity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _reference(problem: str, checkpoint: int, failed: list[str]) -> dict[str, Any]:
    core = f"{2 - len(failed)}/2"
    return {"problem": problem, "checkpoint": f"checkpoint_{checkpoint}", "collected": 2,
            "groups": {"Core": core, "Functionality": "", "Error": "", "Regression": ""},
            "failed": failed, "exit_code": 1 if failed else 0}


def _ours(key: str, core: str, failed: list[str]) -> dict[str, Any]:
    return {"key": key, "row": [2, core, "", "", "", 1 if failed else 0],
            "failed": dict.fromkeys(failed, "message")}


def test_each_reference_line_gets_its_row_and_benchwrights_verdict(tmp_path: Path) -> None:
    reference = _lines(tmp_path / "ref.jsonl", [
        _reference("a", 1, []), _reference("a", 2, ["test_checkpoint_2.py::test_x"]),
        _reference("b", 1, []), _reference("c", 1, []),
        {"problem": "d", "missing_files": ["d/data/big.csv"]}])
    first = _lines(tmp_path / "bw.jsonl", [
        _ours("a/1", "2/2", []), _ours("a/2", "1/2", ["test_checkpoint_2.py::test_x"]),
        _ours("b/1", "1/2", ["test_checkpoint_1.py::test_slow"])])
    rerun = _lines(tmp_path / "rerun.jsonl", [_ours("b/1", "2/2", [])])
    rows = _script().table_lines(reference, [first, rerun])
    assert rows[2] == "| a/1 | 2 | 2/2 | - | - | - | 0 | - | same |"
    assert rows[3].startswith("| a/2 | 2 | 1/2 | - | - | - | 1 | 1: `test_checkpoint_2.py::test_x`")
    assert rows[3].endswith("| same |")
    assert rows[4].endswith("| same on the re-run (1 differed) |")
    assert rows[5].endswith("| not graded yet |")
    assert rows[6] == "| d | not graded: missing from the checkout: d/data/big.csv | | | | | | | |"


def test_a_difference_names_the_counts_that_differ(tmp_path: Path) -> None:
    reference = _lines(tmp_path / "ref.jsonl", [_reference("a", 1, [])])
    saved = _lines(tmp_path / "bw.jsonl", [_ours("a/1", "0/2", ["t::a", "t::b"])] * 2)
    (row,) = _script().table_lines(reference, [saved])[2:]
    assert "| differs twice: Core: ours '0/2', SCBench '2/2'; exit: ours 1, SCBench 0" in row


def test_matching_another_run_of_the_references_is_said_so(tmp_path: Path) -> None:
    line = _reference("a", 1, [])
    line["other_runs"] = [{"groups": {**line["groups"], "Core": "1/2"}, "exit_code": 1,
                           "failed": ["t::slow"]}]
    reference = _lines(tmp_path / "ref.jsonl", [line])
    saved = _lines(tmp_path / "bw.jsonl", [_ours("a/1", "1/2", ["t::slow"])])
    (row,) = _script().table_lines(reference, [saved])[2:]
    assert row.endswith("| same as another run of the reference's (its failures vary from run "
                        "to run) |")
