"""What a failure reads as on one line, and in which order failures are listed: a syntax error in
the submission keeps its code line and error (not just `File "...", line 2`), Core's failures come
before Regression's; `metrics judge`'s rows keep whole names at 80 columns."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from benchwright.coding.report.failures import error_line

SYNTAX = ('AssertionError: exit 1; stderr:   File "/tmp/r/.work/.grading/grade-1-2-x/workspace/'
          'ledger.py", line 2\n      def main(:\n               ^\n  SyntaxError: invalid syntax'
          '\n  \nassert 1 == 0\n +  where 1 = CompletedProcess(args=[...]).returncode')


def test_a_syntax_error_keeps_its_line_and_error() -> None:
    assert error_line(SYNTAX) == ('AssertionError: exit 1; stderr: File "ledger.py", line 2: '
                                  "def main(: SyntaxError: invalid syntax")
    assert error_line("assert 3 == 4\n where 3 = f()") == "assert 3 == 4"
    assert error_line(None) is None


def test_core_failures_are_listed_first() -> None:
    from benchwright.coding.grading.evaluation import CheckpointEvaluation, TestCase
    from benchwright.coding.report.failures import failing_tests

    tests = [TestCase.model_validate(
        {"id": f"test_{g}", "file": "t.py", "checkpoint": "checkpoint_1", "group": g,
         "outcome": "failed", "passed": False, "duration_s": 0.1, "message": SYNTAX})
        for g in ("Regression", "Error", "Core", "Functionality")]
    listed = failing_tests(CheckpointEvaluation.model_construct(tests=tests)).listed
    assert [str(t.group) for t in listed] == ["Core", "Functionality", "Error", "Regression"]
    assert all(t.message and t.message.endswith("SyntaxError: invalid syntax") for t in listed)


def test_judge_rows_keep_whole_names_at_80_columns() -> None:
    from benchwright.cli.judge_cmd import summary_view
    from benchwright.judge.run_summary import JudgedCheckpoint, JudgeRunSummary

    rows = [JudgedCheckpoint(problem="kv_server", trial=1, checkpoint=f"checkpoint_{i}",
                             status="judged", flags=3, requests=4, requests_made=4,
                             cost_usd=0.0123) for i in (1, 2, 3)]
    summary = JudgeRunSummary(
        run_dir=Path("/r"), model="fake-judge", protocol="openai-chat", endpoint=None,
        rubric="default", samples=1, checkpoints=rows, n_judged=3, n_skipped=0, n_errors=0,
        n_unjudged=0, requests_made=12, requests_cached=0, cost_usd_paid=0.03)
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(summary_view(summary))
    text = console.export_text()
    for i in (1, 2, 3):
        assert any("kv_server" in ln and f"checkpoint_{i}" in ln for ln in text.splitlines())
    assert "…" not in text
