"""`benchwright report` on coding run folders written by the test: header, totals, failures,
trials and the baseline comparison, against hand-computed values (through the CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli
from tests.helpers.coding_runs import (
    AGENT_S,
    CACHED,
    COST,
    CREATED,
    GRADE_S,
    GRADER_VERSION,
    IN,
    OUT,
    report_json,
    write_run,
)


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["comparisons"]}


def test_header_and_totals_equal_hand_computed_values(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {"alpha": ["SSS", "SF"], "beta": ["F", "SSS"]})
    report = report_json(run)
    n = 3 + 2 + 1 + 3  # checkpoints graded
    totals = report["totals"]
    assert totals["cost_usd"] == pytest.approx(n * COST)
    assert (totals["input_tokens"], totals["output_tokens"], totals["cached_input_tokens"]) == (
        n * IN, n * OUT, n * CACHED)
    assert totals["agent_time_s"] == pytest.approx(n * AGENT_S)
    assert totals["grading_time_s"] == pytest.approx(n * GRADE_S)
    header = report["header"]
    assert (header["track"], header["agent"], header["model"], header["prompt"],
            header["policy"], header["trials"]) == ("coding", "mini", "fake-model", "plan-first",
                                                     "core-cases", 2)
    assert header["problems"] == ["alpha", "beta"] and header["created_at"] == CREATED
    assert header["grader_versions"] == [GRADER_VERSION]
    assert header["benchwright_version"] == "1.2.3"
    text = run_cli("report", str(run)).stdout
    assert "| 2.2500 | 9,000 | 1,800 | 2,700 | 9 | 90.0 | 18.0 |" in text
    assert "pass policy: `core-cases`" in text and "started 2026-01-02T03:04:05" in text


def test_failures_section_names_the_checkpoint_tests_and_output(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {"alpha": ["SF"]}, n_failing=12)
    text = run_cli("report", str(run)).stdout
    section = text[text.index("## Failures"):]
    assert "### alpha trial 1: ended at checkpoint_2 (tests)" in section
    assert "- Core `test_case_0` (failed): AssertionError: expected 0, got 1" in section
    assert "more detail" not in section  # first line only
    assert "test_case_9" in section and "test_case_10" not in section
    assert "... and 2 more failing tests" in section
    assert f"full output: {run}/alpha/trial_1/checkpoint_2/evaluation/stdout.txt" in section


def test_agent_errors_are_named_as_the_reason(tmp_path: Path) -> None:
    from benchwright.coding.agents.base import AgentStatus

    run = write_run(tmp_path / "run", {"alpha": ["F"]}, agent_status=AgentStatus.ERROR)
    failure = report_json(run)["failures"][0]
    assert (failure["checkpoint"], failure["reason"]) == ("checkpoint_1", "agent error")
    assert failure["detail"] == "agent crashed: exit 3" and failure["tests"]["n_failing"] == 12


@pytest.mark.parametrize(("agent", "grade", "reason", "detail"), [
    ("timeout", "completed", "agent timeout", "agent timed out after 600 s"),
    ("completed", "wall_clock_timeout", "grading timeout",
     "the tests ran past the wall-clock limit"),
    ("completed", "infrastructure_failure", "infrastructure error",
     "tests failed to collect: conftest.py: ImportError"),
])
def test_each_end_reason_is_named(tmp_path: Path, agent: str, grade: str, reason: str,
                                  detail: str) -> None:
    from benchwright.coding.agents.base import AgentStatus
    from benchwright.coding.grading.evaluation import GradeStatus

    run = write_run(tmp_path / "run", {"alpha": ["SF"]}, agent_status=AgentStatus(agent),
                    grade_status=GradeStatus(grade))
    [failure] = report_json(run)["failures"]
    assert (failure["checkpoint"], failure["reason"], failure["detail"]) == (
        "checkpoint_2", reason, detail)
    text = run_cli("report", str(run)).stdout
    assert f"### alpha trial 1: ended at checkpoint_2 ({reason}): {detail}" in text


def test_a_provider_failure_is_an_infrastructure_error(tmp_path: Path) -> None:
    from benchwright.coding.agents.base import AgentResult, AgentStatus
    from benchwright.coding.attempts.layout import RunLayout
    from benchwright.coding.attempts.models import InfraErrorRecord

    run = write_run(tmp_path / "run", {"alpha": ["S"]})
    record = InfraErrorRecord(problem="alpha", trial=1, checkpoint="checkpoint_2", index=2,
                              attempts=3, finished_at=CREATED, agent=AgentResult(
                                  status=AgentStatus.INFRA_ERROR,
                                  error="provider: 503 Service Unavailable\nretried 2 times"))
    RunLayout(run).infra_error("alpha", 1).write_text(record.model_dump_json())
    [failure] = report_json(run)["failures"]
    assert (failure["checkpoint"], failure["reason"], failure["detail"]) == (
        "checkpoint_2", "infrastructure error", "provider: 503 Service Unavailable")


def test_one_common_problem_gets_no_verdict_and_unpaired_problems_are_named(
        tmp_path: Path) -> None:
    ours = write_run(tmp_path / "a", {"alpha": ["F"], "beta": ["SSS"]})
    base = write_run(tmp_path / "b", {"alpha": ["SSS"], "gamma": ["SSS"]})
    report = report_json(ours, "--baseline", str(base))
    assert (report["n_paired"], report["only_run"], report["only_baseline"]) == (
        1, ["beta"], ["gamma"])
    assert {c["verdict"] for c in report["comparisons"]} == {"too few clusters"}
    text = run_cli("report", str(ours), "--baseline", str(base)).stdout
    section = text[text.index("## Against baseline"):text.index("## Attempts")]
    assert "too few problems to tell (n=1)" in section
    assert "| regression |" not in section and "| improvement |" not in section
    assert "Only in the baseline: gamma" in section and "Only in this run: beta" in section
    assert "Paired over the 1 problem both runs scored." in section


def test_six_common_problems_with_a_clear_drop_is_a_regression(tmp_path: Path) -> None:
    names = [f"p{i}" for i in range(6)]
    ours = write_run(tmp_path / "a", {p: ["F"] for p in names})
    base = write_run(tmp_path / "b", {p: ["SSS"] for p in names})
    report = report_json(ours, "--baseline", str(base))
    solved = _by_name(report)["checkpoints solved"]
    assert solved["verdict"] == "regression" and solved["difference"]["value"] == -1.0
    assert _by_name(report)["cost (USD) per attempt"]["verdict"] == "improvement"  # spent less
    text = run_cli("report", str(ours), "--baseline", str(base)).stdout
    assert "| checkpoints solved | higher | -100.0% [-100.0%, -100.0%] | regression |" in text


def test_a_rising_partial_rate_is_never_an_improvement(tmp_path: Path) -> None:
    names = [f"p{i}" for i in range(8)]
    ours = write_run(tmp_path / "a", {p: ["SF"] for p in names})
    base = write_run(tmp_path / "b", {p: ["F"] for p in names})
    partial = _by_name(report_json(ours, "--baseline", str(base)))["problems partial"]
    assert partial["difference"]["value"] == 1.0 and partial["better"] == "none"
    assert partial["verdict"] == "no preferred direction"


def test_pass_at_k_and_pass_hat_k_over_three_trials(tmp_path: Path) -> None:
    # solved trials per problem: 2, 1, 0, 3 of 3
    run = write_run(tmp_path / "run", {"a": ["SS", "SS", "F"], "b": ["F", "SS", "SF"],
                                       "c": ["F", "F", "SF"], "d": ["SS", "SS", "SS"]},
                    n_checkpoints=2)
    trials = report_json(run)["trials"]
    overall = {p["k"]: (p["pass_at_k"]["value"], p["pass_hat_k"]["value"])
               for p in trials["overall"]}
    assert overall[1] == pytest.approx((6 / 12, 6 / 12))
    # pass@2 = mean(1 - C(3-c,2)/3): 1, 2/3, 0, 1; pass^2 = mean(C(c,2)/3): 1/3, 0, 0, 1
    assert overall[2] == pytest.approx(((1 + 2 / 3 + 0 + 1) / 4, (1 / 3 + 1) / 4))
    assert overall[3] == pytest.approx((3 / 4, 1 / 4))
    rows = {r["name"]: r for r in trials["per_cluster"]}
    assert rows["b"]["outcomes"] == [False, True, False]
    assert rows["b"]["pass_at"]["3"] == 1.0 and rows["a"]["pass_hat"]["3"] == 0.0
    assert trials["per_trial_rate"] == {"1": 0.5, "2": 0.75, "3": 0.25}
    text = run_cli("report", str(run)).stdout
    assert "| 3 | 75.0% [" in text and "| a | ✔✔✘ | 66.7% | 100.0% | 0.0% |" in text


def test_few_problems_mark_their_intervals(tmp_path: Path) -> None:
    few = run_cli("report", str(write_run(tmp_path / "few", {"a": ["SSS"], "b": ["F"]}))).stdout
    assert "| checkpoints solved | 50.0% [0.0%, 100.0%]† | 2 |" in few
    assert "†: fewer than 6 problems" in few
    many = write_run(tmp_path / "many", {f"p{i}": ["SSS"] for i in range(6)})
    assert "| checkpoints solved | 100.0% [100.0%, 100.0%] | 6 |" in run_cli(
        "report", str(many)).stdout


def test_an_attempt_that_broke_off_says_why(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", {"alpha": ["S"]})
    (run / "result.json").write_text(json.dumps({
        "run_dir": str(run), "n_problems": 1, "n_trials": 1, "n_checkpoints": 1,
        "n_checkpoints_solved": 1, "n_checkpoints_passed": 1, "n_problems_solved": 0,
        "n_problems_partial": 1, "complete": False,
        "errors": ["alpha/trial_1: checkpoint_2.md is missing"]}))
    [failure] = report_json(run)["failures"]
    assert (failure["checkpoint"], failure["reason"], failure["detail"]) == (
        "checkpoint_2", "not finished", "checkpoint_2.md is missing")
