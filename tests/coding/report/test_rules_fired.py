"""A grading rule that fired is shown wherever the checkpoint's verdict is: `eval checkpoint`
(table and `--json`), the end-of-run failures and report.md."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from benchwright.cli.render import evaluation_view, failures_view
from benchwright.coding.grading.evaluation import (
    CheckpointEvaluation,
    EnvInfo,
    GraderInfo,
    GradeStatus,
    GradingRule,
    RuleFired,
)
from benchwright.coding.grading.evaluation import TestCase as Case
from benchwright.coding.problems.config import Group
from benchwright.coding.report.failures import AttemptFailure, failing_tests, rule_line
from benchwright.coding.report.markdown import rule_lines
from benchwright.sandbox.bwrap import Limits

FIRED = RuleFired(rule=GradingRule.NOT_RUN,
                  detail="1 of the checkpoint's tests did not run (deselected or missing)",
                  items=[".evaluation_tests/test_checkpoint_1.py::test_x", "a", "b", "c"])
LINE = ("rule not_run: 1 of the checkpoint's tests did not run (deselected or missing) "
        "(.evaluation_tests/test_checkpoint_1.py::test_x, a, b, +1 more)")


def _evaluation(rules: list[RuleFired]) -> CheckpointEvaluation:
    env = EnvInfo(key="k", python_version="3.12", packages=[], reused=True)
    return CheckpointEvaluation(
        problem="p", problem_version=1, checkpoint="checkpoint_1", checkpoint_version=1,
        status=GradeStatus.COMPLETED, rules_fired=rules, pytest_exit_code=1,
        pytest_collected=1, duration_s=1.0, total_duration_s=2.0,
        tests=[Case(id="test_x", file="t.py", checkpoint="checkpoint_1", group=Group.CORE,
                        outcome="failed", message="not run: deselected or missing from the run")],
        grader=GraderInfo(benchwright_version="0", runtime="bwrap", limits=Limits(),
                          entrypoint="python main.py", pytest_args=[], test_env=env,
                          solution_env=env))


def _text(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=300, soft_wrap=True)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_a_rule_is_one_line_with_its_first_items() -> None:
    assert rule_line(FIRED) == LINE
    assert rule_line(RuleFired(rule=GradingRule.CAP_EXCEEDED, detail="x\ny")) == \
        "rule cap_exceeded: x"


def test_eval_checkpoint_shows_the_rule_under_the_verdict() -> None:
    assert LINE in _text(evaluation_view(_evaluation([FIRED])))
    assert "rule " not in _text(evaluation_view(_evaluation([])))


def test_eval_checkpoint_json_has_the_rules(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from benchwright.cli.eval_cmd import _show

    _show(_evaluation([FIRED]), tmp_path, as_json=True)
    shown = json.loads(capsys.readouterr().out)
    assert shown["rules_fired"] == [FIRED.model_dump(mode="json")]


def test_the_run_summary_and_report_show_the_rule_under_the_checkpoint() -> None:
    tests = failing_tests(_evaluation([FIRED]))
    assert tests.rules_fired == [FIRED]
    failure = AttemptFailure(problem="p", trial=1, checkpoint="checkpoint_1", reason="tests",
                             tests=tests)
    summary = _text(failures_view([failure]))
    assert summary.index(LINE) < summary.index("failing tests (1):")
    assert rule_lines(tests) == [f"- {LINE}"]


def _fire(run: Path, problem: str, checkpoint: str, rule: RuleFired) -> None:
    """Record `rule` on a checkpoint of a written run: its grading.json and its journal line."""
    folder = run / problem / "trial_1"
    grading = folder / checkpoint / "grading.json"
    evaluation = CheckpointEvaluation.model_validate_json(grading.read_text())
    grading.write_text(evaluation.model_copy(update={"rules_fired": [rule]}).model_dump_json())
    journal = folder / "journal.jsonl"
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    for line in lines:
        if line["checkpoint"] == checkpoint:
            line["rules_fired"] = [str(rule.rule)]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_report_md_lists_every_checkpoint_a_rule_fired_on(tmp_path: Path) -> None:
    from benchwright.coding.report.figures import build_report
    from benchwright.coding.report.markdown import render_markdown
    from tests.helpers.coding_runs import write_run

    run = write_run(tmp_path / "run", {"alpha": ["SF"]})
    linked = RuleFired(rule=GradingRule.LINK_REFUSED, detail="a link was not followed",
                       items=["out.txt"])
    _fire(run, "alpha", "checkpoint_1", linked)
    _fire(run, "alpha", "checkpoint_2", FIRED)
    text = render_markdown(build_report(run))
    section = text[text.index("## Grading rules that fired"):]
    assert ("### alpha trial 1: checkpoint_1 (passed)\n\n"
            "- rule link_refused: a link was not followed (out.txt)") in section
    assert f"### alpha trial 1: checkpoint_2 (failed)\n\n- {LINE}" in section
    failures = text[text.index("## Failures"):text.index("## Grading rules that fired")]
    assert f"- {LINE}" in failures  # and under the checkpoint that ended the attempt


def test_a_report_without_fired_rules_has_no_such_section(tmp_path: Path) -> None:
    from benchwright.coding.report.figures import build_report
    from benchwright.coding.report.markdown import render_markdown
    from tests.helpers.coding_runs import write_run

    run = write_run(tmp_path / "run", {"alpha": ["SF"]})
    assert "Grading rules" not in render_markdown(build_report(run))
