"""The SCBench-shaped files of a coding run (issue 18 point 7), on a real oracle run of the
bundled problems through the CLI: every row field SCBench's tools read is present and typed as
SCBench writes it, config.yaml and result.json carry what SCBench's dashboard reads, the run
folder is named as SCBench names runs, and `eval RUN_DIR` regenerates every derived file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.coding.attempts.models import RunResult
from benchwright.version import __version__
from tests.helpers import run_cli
from tests.helpers.shared_runs import bundled_oracle_run

pytestmark = pytest.mark.sandbox

INT, FLOAT, STR, BOOL = int, float, str, bool
GROUPS = ("core", "functionality", "error", "regression")
SG = ("complexity", "style", "verbosity", "safety", "performance", "types", "naming")
MASSES = ("complexity", "branches", "comparisons", "vars_used", "vars_defined", "try_scaffold")

# Every field of a row, as SCBench writes it (ints stay ints, ratios and means are floats).
ROW: dict[str, type] = {
    "problem": STR, "version": INT, "checkpoint": STR, "idx": INT, "path": STR, "state": STR,
    "is_first": BOOL, "is_last": BOOL, "pass_rate": FLOAT, "core_pass_rate": FLOAT,
    "checkpoint_pass_rate": FLOAT, "duration": FLOAT, "total_tests": INT, "passed_tests": INT,
    **{f"{g}_{k}": INT for g in GROUPS for k in ("total", "passed")},
    "started": STR, "ended": STR, "elapsed": FLOAT, "cost": FLOAT, "steps": INT,
    # SCBench spreads its net_tokens into the row: input, output, cache_read, ...
    **dict.fromkeys(("input", "output", "cache_read", "cache_write", "reasoning"), INT),
    "loc": INT, "total_lines": INT, "single_comments": INT, "lint_errors": INT,
    "lint_fixable": INT, "lint_per_loc": FLOAT, "ast_grep_violations": INT,
    "ast_grep_per_loc": FLOAT, **{f"sg_{c}_violations": INT for c in SG}, "files": INT,
    "source_file_count": INT, "functions": INT, "methods": INT, "classes": INT,
    "statements": INT, "symbols_total": INT, "cc_max": INT, "cc_mean": FLOAT, "cc_std": FLOAT,
    "cc_high_count": INT, "cc_extreme_count": INT, "cc_normalized": FLOAT,
    "cc_concentration": FLOAT, "high_cc_mean": FLOAT, "max_nesting_depth": INT,
    "lines_per_symbol": FLOAT,
    **{f"{f}_{k}": FLOAT for f in ("nesting", "comparisons", "branches", "control", "statements")
       for k in ("mean", "concentration")},
    "lines_concentration": FLOAT, "single_use_functions": INT, "trivial_wrappers": INT,
    "single_method_classes": INT, "clone_instances": INT, "clone_lines": INT,
    "graph_cyclic_dependency_mass": FLOAT, "graph_propagation_cost": FLOAT,
    "graph_dependency_entropy": FLOAT, "lines_added": INT, "lines_removed": INT,
    "mean_func_loc": FLOAT, "comparisons": INT, "try_scaffold": INT,
    **{f"mass.{m}": FLOAT for m in MASSES}, **{f"mass.{m}_concentration": FLOAT for m in MASSES},
    "mass.high_cc": FLOAT, "mass.high_cc_pct": FLOAT,
    **{f"mass.top{p}_{k}": (INT if k == "count" else FLOAT) for p in (50, 75, 90)
       for k in ("count", "mass")},
}
DELTA: dict[str, type] = {
    **{f"delta.{k}": FLOAT for k in ("loc", "lint_errors", "ast_grep_violations",
                                     "cc_high_count", "comparisons", "churn_ratio")},
    **{f"delta.mass.{m}": FLOAT for m in MASSES},
    **{f"delta.mass.complexity_{k}": FLOAT for k in (
        "added", "added_concentration", "removed", "removed_concentration", "gross",
        "net_to_gross_ratio")},
    "delta.mass.complexity_added_count": INT, "delta.mass.complexity_removed_count": INT,
    **{f"delta.mass.complexity_added_top{p}_{k}": (INT if k == "count" else FLOAT)
       for p in (50, 75, 90) for k in ("count", "mass")},
    **{f"delta.mass.{m}_added_top90_{k}": (INT if k == "count" else FLOAT)
       for m in MASSES[1:] for k in ("count", "mass")},
    **{f"delta.mass.top{p}_{k}": (INT if k == "count" else FLOAT) for p in (50, 75, 90)
       for k in ("count", "mass")},
    **{f"delta.symbols_{k}": INT for k in ("added", "removed", "modified")},
}
RUBRIC = ("rubric_total_flags", "rubric_carried_over", "rubric_verbosity_flags",
          "rubric_erosion_flags", "rubric_per_loc", "delta.new_violations_per_loc")
# The keys of SCBench's resolved run configuration (its loader refuses any other).
CONFIG_KEYS = {"agent_config_path", "agent", "environment_config_path", "environment",
               "prompt_path", "prompt_content", "model", "thinking", "thinking_max_tokens",
               "pass_policy", "problems", "save_dir", "save_template", "output_path"}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An oracle run of both bundled problems, in the default folder (no --out): made once per
    test session (tests/judge uses it too), this module's own copy."""
    found, _summary = bundled_oracle_run(tmp_path_factory)
    return found


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (run_dir / "checkpoint_results.jsonl").read_text().splitlines()]


def _wrong_types(row: dict[str, Any], spec: dict[str, type]) -> dict[str, str]:
    """Fields missing or of another type (a bool is not an int here)."""
    wrong = {}
    for key, kind in spec.items():
        value = row.get(key, "<missing>")
        if type(value) is not kind:
            wrong[key] = f"{type(value).__name__}: {value!r}"
    return wrong


def test_the_folder_is_named_as_scbench_names_runs(run_dir: Path) -> None:
    assert run_dir.parent.name == "none"  # the oracle calls no model
    assert re.fullmatch(rf"oracle-{re.escape(__version__)}_just-solve_none_202\d{{5}}T\d{{4}}",
                        run_dir.name)


def test_every_row_field_is_present_and_typed_as_scbench_writes_it(run_dir: Path) -> None:
    rows = _rows(run_dir)
    assert [(r["problem"], r["checkpoint"]) for r in rows] == [
        ("kv_server", f"checkpoint_{i}") for i in (1, 2, 3)] + [
        ("ledger_cli", f"checkpoint_{i}") for i in (1, 2, 3)]
    for row in rows:
        assert _wrong_types(row, ROW) == {}, row["checkpoint"]
        assert _wrong_types(row, DELTA) == {} if not row["is_first"] else \
            not [k for k in row if k.startswith("delta.")]
        assert not set(RUBRIC) & set(row)  # not judged: SCBench leaves the rubric keys out
    assert [r["idx"] for r in rows] == [1, 2, 3, 1, 2, 3]
    assert [r["is_last"] for r in rows] == [False, False, True] * 2


def test_rows_agree_with_our_records(run_dir: Path) -> None:
    records = [json.loads(line) for line in
               (run_dir / "checkpoint_records.jsonl").read_text().splitlines()]
    for row, record in zip(_rows(run_dir), records, strict=True):
        counts = {g.lower(): c for g, c in record["counts"].items()}
        assert row["total_tests"] == sum(c["total"] for c in counts.values())
        assert row["core_passed"] == counts["core"]["passed"]
        assert (row["pass_rate"] == 1.0) == record["solved"]
        assert (row["checkpoint_pass_rate"] == 1.0) == record["iso_solved"]
        assert row["loc"] == record["quality"]["values"]["sloc"]
        assert row["elapsed"] == record["agent"]["duration_s"]


def test_config_yaml_has_what_the_dashboard_reads(run_dir: Path) -> None:
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert set(config) == CONFIG_KEYS
    assert config["agent"] == {"type": "oracle", "version": __version__}
    assert config["model"]["name"] == "none" and config["thinking"] == "none"
    assert Path(config["prompt_path"]).stem == "just-solve"
    assert config["problems"] == ["kv_server", "ledger_cli"]
    # --start-from, which SCBench has no key for, in its free-form environment mapping
    assert config["environment"] == {"type": "local", "name": "benchwright",
                                     "sandbox": "bubblewrap", "start_from": "chain"}


def test_result_json_has_scbench_statistics_beside_ours(run_dir: Path) -> None:
    data = json.loads((run_dir / "result.json").read_text())
    ours = RunResult.model_validate(data)  # our model still reads the file
    assert ours.format == "benchwright.run-result/2" and ours.n_checkpoints == 6
    assert data["model"] is None  # ours wins the one shared key
    assert (data["num_problems"], data["num_checkpoints"]) == (2, 6)
    assert (data["agent_type"], data["agent_version"], data["prompt"], data["thinking"]) == (
        "oracle", __version__, "just-solve", "none")
    solved = sum(r["pass_rate"] == 1.0 for r in _rows(run_dir))
    assert data["checkpoints_solved"] == solved
    assert data["pct_checkpoints_solved"] == pytest.approx(solved / 6 * 100)
    assert data["costs"]["total"] == 0.0 and data["verbosity"]["count"] == 6


def test_quality_files_in_scbench_names(run_dir: Path) -> None:
    folder = run_dir / "kv_server" / "trial_1" / "checkpoint_2" / "quality_analysis"
    overall = json.loads((folder / "overall_quality.json").read_text())
    row = _rows(run_dir)[1]
    assert overall["lines"]["loc"] == row["loc"]
    assert overall["functions"]["cc_max"] == row["cc_max"]
    assert overall["ast_grep"]["category_counts"]["safety"] == row["sg_safety_violations"]
    symbols = [json.loads(line) for line in (folder / "symbols.jsonl").read_text().splitlines()]
    assert sum(s["type"] == "method" for s in symbols) == row["methods"]
    assert all(s["parent_class"] for s in symbols if s["type"] == "method")
    files = [json.loads(line) for line in (folder / "files.jsonl").read_text().splitlines()]
    assert [f["file_path"] for f in files] == ["kv_server.py"]
    assert sum(f["lint_errors"] for f in files) == row["lint_errors"]
    findings = (folder / "ast_grep.jsonl").read_text().splitlines()
    assert len(findings) == row["ast_grep_violations"]


def test_eval_regenerates_every_derived_file(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    quality = copy / "ledger_cli" / "trial_1" / "checkpoint_3" / "quality_analysis"
    before = {p: (copy / p).read_text() for p in ("checkpoint_results.jsonl",
                                                  "checkpoint_records.jsonl")}
    for path in (copy / "config.yaml", copy / "checkpoint_results.jsonl",
                 quality / "symbols.jsonl", quality / "overall_quality.json"):
        path.unlink()
    result = json.loads((copy / "result.json").read_text())
    (copy / "result.json").write_text(json.dumps({k: v for k, v in result.items()
                                                  if k not in ("num_problems", "costs")}))
    done = run_cli("eval", str(copy), "--json")
    assert done.returncode == 0, done.stderr
    assert (quality / "symbols.jsonl").is_file() and (quality / "overall_quality.json").is_file()
    assert yaml.safe_load((copy / "config.yaml").read_text())["output_path"] == str(copy)
    again = json.loads((copy / "result.json").read_text())
    assert again["num_problems"] == 2 and again["costs"] == result["costs"]
    rows = [json.loads(line) for line in (copy / "checkpoint_results.jsonl").read_text()
            .splitlines()]
    old = [json.loads(line) for line in before["checkpoint_results.jsonl"].splitlines()]
    assert [_without_times(r) for r in rows] == [_without_times(r) for r in old]


def _without_times(row: dict[str, Any]) -> dict[str, Any]:
    """A row without what a re-grade may change: the grading's duration."""
    return {k: v for k, v in row.items() if k != "duration"}
