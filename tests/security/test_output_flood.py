"""Bounded output: a submission that writes 10 MB to stderr per call, echoed by the tests into
23 assertion messages, drove the harness to 4 GB resident and 2 GB written to --out (then the
1 GiB file limit cut the report, recorded as tampering). Whatever it prints, `eval checkpoint`
stays under 300 MB resident and writes under 50 MB, grades the checkpoint (failed, not
tampered) and records what it cut. Prints both figures (`pytest -s`)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.output_flood import flood_problem, flood_workspace, grade_measured


def test_output_amplification_keeps_the_harness_bounded(tmp_path: Path) -> None:
    problem = flood_problem(tmp_path, 23)
    figures = grade_measured(problem, flood_workspace(tmp_path, "flood", 10), tmp_path / "out")
    print(f"\noutput flood (10 MB x 23 messages): harness peak RSS {figures['peak_rss_mb']:.1f} MB,"
          f" wrote {figures['wchar_mb']:.1f} MB (write()), --out {figures['out_mb']:.1f} MB;"
          f" cut {figures['cut']}")
    assert figures["status"] == "completed" and figures["passed"] == 0, figures
    assert figures["peak_rss_mb"] < 300, figures
    assert figures["wchar_mb"] < 50 and figures["out_mb"] < 50, figures
    assert '"messages": 0' not in str(figures["cut"]), figures  # the cut is recorded
