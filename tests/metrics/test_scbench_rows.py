"""The figures of SCBench's rows that benchwright computes for them, against hand computations:
nesting and scaffolding, the spread of complexity, mass and its change, percent deltas, rubric
figures, SCBench's run statistics; config.yaml's redaction; the default folder's name."""

from __future__ import annotations

import ast
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.coding.agents.settings import AgentSettings
from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import ChainSummary, Manifest, RunConfig
from benchwright.coding.attempts.scbench.export import attempt_rows, export_scbench
from benchwright.coding.attempts.scbench.rows import percent_change
from benchwright.coding.attempts.scbench.run_config import thinking, thinking_max_tokens
from benchwright.coding.attempts.scbench.run_name import run_name, unused
from benchwright.coding.attempts.scbench.summary import scbench_summary
from benchwright.files.redaction import Redactor
from benchwright.metrics.languages.python_shape import body_shape, module_variables
from benchwright.metrics.mass import snapshot_mass
from benchwright.metrics.mass_delta import mass_delta
from benchwright.metrics.models import SymbolMetrics
from benchwright.metrics.spread import spread
from tests.helpers.coding_runs import write_run

SHAPED = '''
def f(items):
    total = 0
    for item in items:
        if item:
            total += item
        elif item is None:
            pass
        else:
            try:
                self.seen = item
            except ValueError:
                pass
            finally:
                pass
    return total
'''


def _symbol(name: str, complexity: int, statements: int, body_hash: str = "",
            **extra: int) -> SymbolMetrics:
    fields = {"branches": 0, "comparisons": 0, "max_nesting_depth": 0, "control_blocks": 0,
              "exception_scaffold": 0, "variables_defined": 0, "variables_used": 0, **extra}
    return SymbolMetrics(name=name, kind="function", file="a.py", start=1, end=statements,
                         complexity=complexity, band="A", statements=statements,
                         body_hash=body_hash or name, **fields)


def test_nesting_counts_an_elif_at_its_if_level_and_scaffolding_counts_every_clause() -> None:
    tree = ast.parse(SHAPED)
    # for (1) > if (2); the elif is level 2 too; its else holds a try (3)
    assert body_shape(tree.body[0]) == {
        "max_nesting_depth": 3, "control_blocks": 1, "exception_scaffold": 3,
        "variables_defined": 3,  # total, self, seen
        "variables_used": 4}  # items, item, total, ValueError
    assert module_variables(ast.parse("A = 1\nB: int = 2\nC.x = 3\nD, E = 1, 2\n")) == 2


def test_spread_of_complexity_by_hand() -> None:
    symbols = [_symbol(n, cc, 5) for n, cc in zip("abcd", (1, 3, 12, 40), strict=True)]
    stats = spread(symbols)
    assert (stats.cc_max, stats.cc_high_count, stats.cc_extreme_count) == (40, 2, 1)
    assert stats.high_cc_mean == 26.0 and stats.cc_mean == 14.0
    # Gini over 1, 3, 12, 40: 2 * (1 + 6 + 36 + 160) / (4 * 56) - 5 / 4
    assert stats.cc_concentration == pytest.approx(0.5625)
    # squares 1754 between an even spread (4 * 14^2 = 784) and all in one (56^2 = 3136)
    assert stats.cc_normalized == pytest.approx(970 / 2352)
    assert stats.lines_mean == 5.0 and stats.lines_concentration == 0.0


def test_mass_by_hand() -> None:
    symbols = [_symbol("f", 3, 4, branches=2), _symbol("g", 1, 9, branches=1)]
    mass = snapshot_mass(symbols)
    assert mass["mass.complexity"] == 4.0  # (3 - 1) * sqrt(4); g has none above 1
    assert mass["mass.branches"] == 7.0  # 2 * 2 + 1 * 3
    assert mass["mass.branches_concentration"] == 0.071  # Gini of 3, 4
    assert (mass["mass.top50_count"], mass["mass.top90_mass"]) == (1, 4.0)
    assert (mass["mass.high_cc"], mass["mass.high_cc_pct"]) == (0.0, 0.0)
    assert type(mass["mass.high_cc"]) is float


def test_mass_delta_by_hand() -> None:
    before = [_symbol("f", 3, 4), _symbol("old_name", 2, 1, body_hash="same")]
    after = [_symbol("f", 5, 4), _symbol("new_name", 2, 1, body_hash="same"),
             _symbol("g", 2, 1)]
    delta = mass_delta(before, after)
    assert delta["delta.mass.complexity_added"] == 5.0  # f: 8 - 4, g: 1
    assert delta["delta.mass.complexity_added_count"] == 2
    assert delta["delta.mass.complexity_removed"] == 0.0
    assert delta["delta.mass.complexity_net_to_gross_ratio"] == 1.0
    # the renamed function matched by its body: not added, not removed
    assert (delta["delta.symbols_added"], delta["delta.symbols_removed"],
            delta["delta.symbols_modified"]) == (1, 0, 1)
    assert mass_delta([], []) == {}


def test_percent_change_from_zero_is_infinite() -> None:
    assert percent_change(0, 0) == 0.0 and percent_change(0, 3) == math.inf
    assert percent_change(4, 5) == 25.0


@pytest.fixture
def measured_run(tmp_path: Path) -> Path:
    """A two-checkpoint run (no grading) whose checkpoints have real metrics and diffs."""
    from benchwright.metrics.static import analyze_snapshot

    run_dir = write_run(tmp_path / "run", {"p": ["SS"]}, n_checkpoints=2)
    sources = ["def f(x):\n    return x\n", "def f(x):\n    if x:\n        return 1\n"
               "    return x\n\n\ndef g():\n    return 2\n"]
    for index, source in enumerate(sources, 1):
        folder = RunLayout(run_dir).checkpoint_dir("p", 1, f"checkpoint_{index}")
        (folder / "snapshot").mkdir()
        (folder / "snapshot" / "a.py").write_text(source)
        metrics = analyze_snapshot(folder / "snapshot", entry="a.py", scbench=False)
        (folder / "quality_analysis").mkdir()
        (folder / "quality_analysis" / "metrics.json").write_text(metrics.model_dump_json())
        (folder / "diff.json").write_text(json.dumps(
            {"lines_added": 99, "lines_removed": 0,
             "file_diffs": {"a.py": {"lines_added": 2 if index == 1 else 6,
                                     "lines_removed": index - 1},
                            "notes.txt": {"lines_added": 50, "lines_removed": 0}}}))
    return run_dir


def _attempts(run_dir: Path) -> list[ChainSummary]:
    """The fixture's one attempt, from its journal (its problems folder does not exist)."""
    records = journal.read_records(RunLayout(run_dir).journal("p", 1))
    return [ChainSummary(problem="p", trial=1, n_checkpoints=len(records), records=records)]


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    manifest = Manifest.model_validate_json(RunLayout(run_dir).manifest.read_text())
    return attempt_rows(run_dir, manifest, _attempts(run_dir)[0])


def test_rubric_figures_and_deltas_by_hand(measured_run: Path) -> None:
    folder = RunLayout(measured_run).checkpoint_dir("p", 1, "checkpoint_2")
    flags = [{"criteria": "a", "type": "verbosity", "carried_over": 1},
             {"criteria": "b", "type": "verbosity"}, {"criteria": "c", "type": "erosion"}]
    (folder / "rubric.jsonl").write_text("".join(json.dumps(f) + "\n" for f in flags)
                                         + "not json\n")
    first, second = _rows(measured_run)
    assert not any(k.startswith(("delta.", "rubric")) for k in first)
    assert (first["loc"], second["loc"]) == (2, 6)
    assert second["delta.loc"] == 200.0  # 2 -> 6 lines of code
    assert second["delta.comparisons"] == 0.0
    # lines added and removed in the measured file only (notes.txt is not measured)
    assert (second["lines_added"], second["lines_removed"]) == (6, 1)
    assert second["delta.churn_ratio"] == 7 / 2  # over the previous snapshot's 2 lines
    assert (second["rubric_total_flags"], second["rubric_carried_over"],
            second["rubric_verbosity_flags"], second["rubric_erosion_flags"]) == (3, 1, 2, 1)
    assert second["rubric_per_loc"] == 3 / 6
    assert second["delta.new_violations_per_loc"] == 2 / 6


def test_rubric_figures_in_our_record_win_over_the_file(measured_run: Path) -> None:
    journal_path = RunLayout(measured_run).journal("p", 1)
    records = [json.loads(line) for line in journal_path.read_text().splitlines()]
    records[1]["quality"] = {"values": {"rubric_total_flags": 4, "rubric_carried_over": 0,
                                        "rubric_verbosity_flags": 4,
                                        "rubric_erosion_flags": 0}}
    journal_path.write_text("".join(json.dumps(r) + "\n" for r in records))
    folder = RunLayout(measured_run).checkpoint_dir("p", 1, "checkpoint_2")
    (folder / "rubric.jsonl").write_text(json.dumps({"type": "erosion"}) + "\n")
    second = _rows(measured_run)[1]
    assert (second["rubric_total_flags"], second["rubric_verbosity_flags"]) == (4, 4)
    assert second["delta.new_violations_per_loc"] == 4 / 6


def test_scbench_statistics_by_hand() -> None:
    rows = [{"problem": "a", "pass_rate": 1.0, "checkpoint_pass_rate": 1.0,
             "core_pass_rate": 1.0, "cost": 1.0, "core_passed": 2, "core_total": 2},
            {"problem": "a", "pass_rate": 0.5, "checkpoint_pass_rate": 1.0,
             "core_pass_rate": 1.0, "cost": 2.0, "core_passed": 1, "core_total": 2},
            {"problem": "b", "pass_rate": 1.0, "checkpoint_pass_rate": 1.0,
             "core_pass_rate": 0.0, "cost": 4.0, "core_passed": 0, "core_total": 0}]
    identity = {"model": "m", "thinking": "none", "prompt": "p", "agent_type": "a",
                "agent_version": None}
    summary = scbench_summary(identity, rows)
    assert (summary.checkpoints_solved, summary.checkpoints_iso_solved,
            summary.checkpoints_core_solved) == (2, 3, 2)
    assert summary.pct_checkpoints_solved == pytest.approx(200 / 3)
    assert (summary.problem_solved, summary.problem_partial) == (1, 2)
    assert summary.costs.total == 7.0 and summary.costs.problem.mean == 3.5
    # core pass rate per checkpoint: 1.0 and 0.5 (b has no Core tests: left out)
    assert summary.pass_rates.checkpoint.core == 0.75


def test_config_yaml_keeps_no_secret(tmp_path: Path) -> None:
    secret = "sk-template-secret-0a9f3e"
    template = tmp_path / "mine.jinja"
    template.write_text(f"key {secret}\n{{{{ spec }}}}\n")
    run_dir = write_run(tmp_path / "run", {"p": ["S"]}, n_checkpoints=1)
    manifest = Manifest.model_validate_json(RunLayout(run_dir).manifest.read_text())
    config = manifest.config.model_copy(update={"prompt": str(template)})
    manifest = manifest.model_copy(update={"config": config})
    export_scbench(run_dir, manifest, _attempts(run_dir), Redactor({"OPENAI_API_KEY": secret}))
    text = (run_dir / "config.yaml").read_text()
    assert secret not in text and "<redacted:OPENAI_API_KEY>" in text
    assert yaml.safe_load(text)["prompt_path"] == str(template)


def test_the_default_folder_name_climbs_nowhere(tmp_path: Path) -> None:
    config = RunConfig(problems_dir=tmp_path, problems=["p"], agent="command",
                       model="../../etc/evil model", prompt="plan-first")
    name = run_name(config, datetime(2026, 1, 2, 3, 4, tzinfo=UTC))
    # the command agent has no pinned version: `-<version>` is left out, as SCBench does
    assert name.as_posix() == "etc-evil-model/command_plan-first_none_20260102T0304"
    (tmp_path / "x").mkdir()
    assert unused(tmp_path / "x") == tmp_path / "x-2"


def test_thinking_is_the_budget_as_scbench_names_it(tmp_path: Path) -> None:
    def named(budget: int | None) -> tuple[str, int | None]:
        config = RunConfig(problems_dir=tmp_path, problems=["p"], agent="oracle",
                           agent_settings=AgentSettings(thinking_budget=budget))
        return thinking(config), thinking_max_tokens(config)

    assert named(None) == ("none", None)  # the agent's default
    assert named(0) == ("disabled", None)
    assert named(8000) == ("medium", 8000)
    config = RunConfig(problems_dir=tmp_path, problems=["p"], agent="oracle",
                       agent_settings=AgentSettings(thinking_budget=30000))
    assert run_name(config, datetime(2026, 1, 2, 3, 4, tzinfo=UTC)).name.endswith(
        "_just-solve_high_20260102T0304")



def test_metrics_written_before_the_new_fields_still_give_rows(measured_run: Path) -> None:
    """A run measured by an older benchwright: the figures that need the new fields are null
    (their masses left out), the rest are computed; nothing breaks."""
    for index in (1, 2):
        path = (RunLayout(measured_run).checkpoint_dir("p", 1, f"checkpoint_{index}")
                / "quality_analysis" / "metrics.json")
        data = json.loads(path.read_text())
        for symbol in data["symbols"]:
            for key in ("max_nesting_depth", "control_blocks", "exception_scaffold",
                        "variables_defined", "variables_used"):
                del symbol[key]
        data.pop("astgrep_findings")
        data.pop("lint_fixable")
        path.write_text(json.dumps(data))
    second = _rows(measured_run)[1]
    assert second["nesting_mean"] is None and second["max_nesting_depth"] is None
    assert second["try_scaffold"] is None and second["lint_fixable"] is None
    assert "mass.vars_used" not in second and second["mass.complexity"] >= 0
    assert second["delta.loc"] == 200.0


def test_a_write_killed_in_quality_analysis_is_cleared_next_time(measured_run: Path) -> None:
    folder = RunLayout(measured_run).checkpoint_dir("p", 1, "checkpoint_1") / "quality_analysis"
    torn = folder / ".symbols.jsonl.ab_3x9qz.tmp"  # kill -9 during an earlier export
    torn.write_text('{"name": ')
    _rows(measured_run)
    assert not torn.exists() and (folder / "symbols.jsonl").is_file()
