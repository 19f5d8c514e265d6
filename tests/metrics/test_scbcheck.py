"""SCBench's quality figures by scb-check (issue 43): code of any Python is measured, a file that
cannot be parsed is named, the SCBench-format files carry the figures under SCBench's keys, and
figures that cannot be had are unknown, never 0. The scb-check runs are real (its pinned uv
environment, in bubblewrap); the environment is built once into the user's cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import ChainSummary, Manifest
from benchwright.coding.attempts.scbench.export import export_scbench
from benchwright.coding.attempts.scbench.quality_files import OVERALL
from benchwright.files.redaction import Redactor
from benchwright.metrics import scbcheck
from benchwright.metrics.erosion import QualitySummary, summarise
from benchwright.metrics.models import SnapshotMetrics
from benchwright.metrics.static import analyze_snapshot
from tests.helpers.coding_runs import write_run

# Python 3.12 only: PEP 695 type aliases and generic functions and classes, PEP 701 f-strings.
NEW_SYNTAX = '''type Pair[T] = tuple[T, T]


def first[T](items: list[T]) -> T:
    if not items:
        raise ValueError("empty")
    return items[0]


class Box[T]:
    def __init__(self, value: T) -> None:
        self.value = value

    def show(self, table: dict[str, int]) -> str:
        return f"{table["key"]} {self.value}"
'''


@pytest.mark.sandbox
def test_code_of_python_312_is_measured_not_zero(tmp_path: Path) -> None:
    (tmp_path / "new.py").write_text(NEW_SYNTAX)
    metrics = analyze_snapshot(tmp_path)
    assert metrics.scbench is not None and metrics.scbench.figures is not None, \
        metrics.scbench
    figures = metrics.scbench.figures
    assert figures.files_scanned == 1 and figures.total_loc >= 10
    assert figures.total_functions == 3  # first, __init__, show
    assert metrics.scbench.unparsed == []
    # our own analysis: parsed by a 3.12+ harness; named and still counted under an older one
    (own,) = metrics.files  # parse_error set when the harness's Python is older than 3.12
    assert own.path == "new.py" and own.lines.sloc >= 10
    values = summarise(metrics, None, {}).values
    assert values["total_loc"] == figures.total_loc and "verbosity" in values


@pytest.mark.sandbox
def test_a_file_that_cannot_be_parsed_is_named(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("def ok(x):\n    if x:\n        return 1\n    return 2\n")
    (tmp_path / "bad.py").write_text("def broken(:\n    return 1\n\nx = 1\n")
    metrics = analyze_snapshot(tmp_path)
    assert metrics.scbench is not None and metrics.scbench.unparsed == ["bad.py"]
    assert metrics.scbench.figures is not None and metrics.scbench.figures.files_scanned == 1
    bad = next(f for f in metrics.files if f.path == "bad.py")
    assert bad.parse_error and bad.lines.loc == 4 and bad.lines.sloc == 3  # not 0 lines


def _measured_run(tmp_path: Path) -> Path:
    """A two-checkpoint run whose snapshots were measured with scb-check."""
    run_dir = write_run(tmp_path / "run", {"p": ["SS"]}, n_checkpoints=2)
    sources = ["def f(x):\n    return x\n",
               "def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n"
                                       for i in range(12)) + "    return x\n"]
    for index, source in enumerate(sources, 1):
        folder = RunLayout(run_dir).checkpoint_dir("p", 1, f"checkpoint_{index}")
        (folder / "snapshot").mkdir()
        (folder / "snapshot" / "a.py").write_text(source)
        metrics = analyze_snapshot(folder / "snapshot", entry="a.py")
        (folder / "quality_analysis").mkdir()
        (folder / "quality_analysis" / "metrics.json").write_text(metrics.model_dump_json())
        (folder / "diff.json").write_text(json.dumps({"lines_added": 1, "lines_removed": 0}))
    return run_dir


@pytest.mark.sandbox
def test_scbench_files_carry_the_figures_under_scbench_keys(tmp_path: Path) -> None:
    run_dir = _measured_run(tmp_path)
    layout = RunLayout(run_dir)
    manifest = Manifest.model_validate_json(layout.manifest.read_text())
    records = journal.read_records(layout.journal("p", 1))
    attempts = [ChainSummary(problem="p", trial=1, n_checkpoints=2, records=records)]
    summary = export_scbench(run_dir, manifest, attempts, Redactor({}))
    rows = [json.loads(line) for line in layout.results_jsonl.read_text().splitlines()]
    for row in rows:
        folder = layout.checkpoint_dir("p", 1, row["checkpoint"])
        saved = SnapshotMetrics.model_validate_json(
            (folder / "quality_analysis" / "metrics.json").read_text())
        assert saved.scbench is not None and saved.scbench.figures is not None
        expected = saved.scbench.figures
        for key in ("verbosity", "erosion", "cog_erosion", "total_loc", "clone_loc",
                    "ast_grep_flagged_loc", "high_cc_mass", "high_cog_mass"):
            assert row[key] == getattr(expected, key), key
        assert row["scb_check_version"] == scbcheck.SCB_CHECK_VERSION
        overall = json.loads((folder / "quality_analysis" / OVERALL).read_text())
        assert overall["scb_check"]["erosion"] == expected.erosion
    first, second = rows
    assert first["erosion"] == 0.0 and second["erosion"] == 1.0  # CC 13 holds all the mass
    assert second["delta.erosion"] == 1.0 and "delta.erosion" not in first
    assert summary["erosion"]["count"] == 2 and summary["erosion"]["max"] == 1.0


@pytest.mark.sandbox
def test_no_scb_check_environment_offline_is_unknown_never_zero(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(tmp_path / "cache"))  # nothing built here
    monkeypatch.setenv("UV_OFFLINE", "1")  # and no package index to build it from
    scbcheck._env_once.cache_clear()
    try:
        (tmp_path / "code").mkdir()
        (tmp_path / "code" / "a.py").write_text("def f(x):\n    return x\n")
        metrics = analyze_snapshot(tmp_path / "code")
    finally:
        scbcheck._env_once.cache_clear()
    assert metrics.scbench is not None and metrics.scbench.figures is None
    assert metrics.scbench.reason and "not available" in metrics.scbench.reason
    values = summarise(metrics, None, {}).values
    assert not {"verbosity", "erosion", "cog_erosion"} & set(values)
    assert "bw_verbosity" in values  # our own figures are still there, under their own names
    keys = scbcheck.report_keys(metrics.scbench)
    assert keys["scb_check_unknown"] == metrics.scbench.reason and "verbosity" not in keys


def test_version_1_records_read_our_own_composites_under_their_own_names() -> None:
    old = {"format": "benchwright.quality/1",
           "values": {"verbosity": 0.5, "erosion": 0.25, "verbosity_static": 0.4, "loc": 10},
           "delta": {"erosion": 0.1}}
    summary = QualitySummary.model_validate(old)
    assert summary.values == {"bw_verbosity": 0.5, "bw_erosion": 0.25,
                              "bw_verbosity_static": 0.4, "loc": 10}
    assert summary.delta == {"bw_erosion": 0.1}
    metrics = {"tools": {}, "files": [], "symbols": [], "lines": {}, "mi_mean": 0.0,
               "cc_bands": {}, "cc_high": 0, "cc_extreme": 0, "cc_gini": 0.0, "lint": {},
               "lint_weighted": 0.0, "astgrep": {}, "astgrep_rules": {}, "astgrep_weighted": 0.0,
               "clones": [], "clone_instances": 0, "clone_lines": 0, "clone_ratio": 0.0,
               "single_use_functions": [], "trivial_wrappers": [], "single_method_classes": [],
               "graph": {"entry": None}, "verbosity": 0.5, "erosion": 0.25}
    read = SnapshotMetrics.model_validate(metrics)
    assert (read.bw_verbosity, read.bw_erosion, read.scbench) == (0.5, 0.25, None)


def _with_erosion(run_dir: Path, problem: str, trial: int, erosion: list[float | None]) -> None:
    """The attempt's records with SCBench's erosion (None: unknown) and its change."""
    layout = RunLayout(run_dir)
    records = journal.read_records(layout.journal(problem, trial))
    lines = []
    for index, record in enumerate(records):
        now, before = erosion[index], erosion[index - 1] if index else None
        values = {"loc": 10.0} | ({"erosion": now} if now is not None else {})
        delta = {"erosion": now - before} if now is not None and before is not None else {}
        quality = QualitySummary(values=values, delta=delta)
        lines.append(record.model_copy(update={"quality": quality}).model_dump_json())
    layout.journal(problem, trial).write_text("".join(line + "\n" for line in lines))


def test_report_gives_erosion_over_checkpoints_per_problem_and_in_aggregate(
        tmp_path: Path) -> None:
    from benchwright.coding.report.figures import build_report
    from benchwright.coding.report.markdown import render_markdown

    run_dir = write_run(tmp_path / "run", {"a": ["SSS", "SSS"], "b": ["SSS"]})
    _with_erosion(run_dir, "a", 1, [0.1, 0.3, 0.2])  # rose once, fell once
    _with_erosion(run_dir, "a", 2, [0.1, 0.2, 0.4])  # rose twice
    _with_erosion(run_dir, "b", 1, [0.5, None, 0.6])  # unknown at 2: no change known
    report = build_report(run_dir)
    by_problem = {p.problem: {m.name: m.estimate for m in p.metrics}
                  for p in report.quality_by_problem}
    assert set(by_problem) == {"a"}  # b has no known change: left out, not 0
    assert by_problem["a"]["erosion increased"].value == pytest.approx(3 / 4)
    assert by_problem["a"]["erosion change"].value == pytest.approx(0.4 / 4)
    assert by_problem["a"]["erosion increased"].n_clusters == 2  # trials as clusters
    overall = {m.name: m.estimate for m in report.quality}
    assert overall["checkpoints where erosion increased (share)"].value == pytest.approx(3 / 4)
    assert overall["erosion"].n_clusters == 2  # problems as clusters
    text = render_markdown(report)
    assert "## Erosion over checkpoints, per problem (SCBench's figures)" in text


@pytest.mark.sandbox
def test_other_languages_measured_where_scb_check_reads_them_else_named(tmp_path: Path) -> None:
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "a.js").write_text(
        "function add(a, b) {\n  if (a > b) {\n    return a - b;\n  }\n  return a + b;\n}\n")
    measured = scbcheck.measure(tmp_path / "js")
    assert measured.figures is not None and measured.figures.total_functions == 1
    assert set(measured.model_dump()["figures"]["syntax_by_language"]) == {"javascript"}
    (tmp_path / "go").mkdir()
    (tmp_path / "go" / "main.go").write_text("package main\n\nfunc main() {}\n")
    unmeasured = scbcheck.measure(tmp_path / "go")
    assert unmeasured.figures is None
    assert unmeasured.reason and unmeasured.reason.startswith("not measured for .go")


# Runs in scb-check's environment: every bundled rule file read by scb-check's own reader, with
# PyYAML's pure-Python loader and with the libyaml one that benchwright swaps in.
_SAME_RULES = """
import json, sys, yaml
from importlib import resources
from scb_check.resources import _rule_documents_from_text, rule_texts
assert yaml.__with_libyaml__, "no libyaml"
texts = list(rule_texts())
pure = [_rule_documents_from_text(text) for _name, text in texts]
yaml.SafeLoader = yaml.CSafeLoader
fast = [_rule_documents_from_text(text) for _name, text in texts]
print(json.dumps({"files": len(texts), "documents": sum(map(len, pure)),
                  "same": json.dumps(pure, sort_keys=True) == json.dumps(fast, sort_keys=True)}))
"""


@pytest.mark.sandbox
def test_scb_check_rules_read_the_same_with_libyaml() -> None:
    import subprocess

    env = scbcheck.scb_check_env()
    assert scbcheck._FAST_YAML in scbcheck._MAIN
    out = subprocess.run([str(env.path / "bin" / "python"), "-I", "-c", _SAME_RULES],
                         capture_output=True, text=True, check=True).stdout
    found = json.loads(out)
    assert found["same"] and found["files"] >= 1 and found["documents"] >= 100, found
