"""`report --counterfactual`: chain against reference-start solve rates and the share of failures
attributable to inherited code, on run folders written by the test, against hand-computed
values (`coding.report.counterfactual.compare_starts`, and through the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.coding.report.counterfactual import StartRow, compare_starts
from benchwright.errors import UserInputError
from tests.helpers import run_cli
from tests.helpers.coding_runs import report_json, write_run

# Six problems, three checkpoints, one trial. Chain: the attempt ends at a failure. Reference
# start: every checkpoint attempted.
#           chain   reference    pairs at 2 (chain, ref)   pairs at 3
#   p0..p2  SF      SSS          F S  (x3: rescued)         none: the chain never reached it
#   p3      SF      SFF          F F  (hard either way)     none: the chain never reached it
#   p4      SSS     SSS          S S                        S S
#   p5      SSS     SSF          S S                        S F (chain only)
CHAIN = {"p0": ["SF"], "p1": ["SF"], "p2": ["SF"], "p3": ["SF"], "p4": ["SSS"], "p5": ["SSS"]}
REFERENCE = {"p0": ["SSS"], "p1": ["SSS"], "p2": ["SSS"], "p3": ["SFF"], "p4": ["SSS"],
             "p5": ["SSF"]}


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("six")
    return (write_run(root / "chain", CHAIN),
            write_run(root / "reference", REFERENCE, start_from="reference"))


def _rows(chain: Path, reference: Path) -> dict[str, StartRow]:
    report = compare_starts(chain, reference)
    rows = {r.checkpoints: r for r in report.per_checkpoint}
    assert report.overall is not None
    rows["2+"] = report.overall
    return rows


def _outcomes(row: StartRow) -> tuple[int, int, int, int, int]:
    c = row.counts
    return c.pairs, c.both_solved, c.chain_only, c.reference_only, c.neither


def test_rates_differences_and_attribution_equal_the_hand_computation(
        six: tuple[Path, Path]) -> None:
    rows = _rows(*six)
    assert list(rows) == ["1", "2", "3", "2+"]
    # checkpoint 1: the same (empty) start: every pair solved both ways, nothing inherited
    assert _outcomes(rows["1"]) == (6, 6, 0, 0, 0) and rows["1"].attributable is None
    assert rows["1"].verdict == "no significant change"
    # checkpoint 2: chain 2/6, reference 5/6; the chain failed 4, the reference solved 3 of them
    assert _outcomes(rows["2"]) == (6, 2, 0, 3, 1)
    assert (rows["2"].chain.value, rows["2"].reference.value) == pytest.approx((2 / 6, 5 / 6))
    assert rows["2"].difference.value == pytest.approx(3 / 6)
    assert rows["2"].attributable is not None
    assert rows["2"].attributable.value == pytest.approx(3 / 4)
    assert rows["2"].attributable.n_clusters == 4  # the problems where the chain failed
    # checkpoint 3: only p4 and p5 reached it in the chain: chain 2/2, reference 1/2; the chain
    # failed nothing there, so nothing is attributed to it (p0..p3 are listed, not counted)
    assert _outcomes(rows["3"]) == (2, 1, 1, 0, 0)
    assert rows["3"].difference.value == pytest.approx(-1 / 2)
    assert rows["3"].attributable is None and rows["3"].n_problems == 2
    assert compare_starts(*six).not_reached == [
        f"p{i}/trial_1/checkpoint_3: not reached by the chain run" for i in range(4)]
    # overall (2+): 8 pairs; chain 4, reference 6; the chain failed 4, 3 rescued
    assert _outcomes(rows["2+"]) == (8, 3, 1, 3, 1)
    assert (rows["2+"].chain.value, rows["2+"].reference.value) == pytest.approx((4 / 8,
                                                                                 6 / 8))
    assert rows["2+"].difference.value == pytest.approx(2 / 8)
    assert rows["2+"].attributable is not None
    assert rows["2+"].attributable.value == pytest.approx(3 / 4)
    # six problems: a verdict where the CI excludes zero (checkpoint 2: [16.7%, 83.3%]), none
    # overall, where p5's reverse pair pulls the interval under zero
    assert rows["2"].verdict == "inherited code hurts"
    assert rows["2"].difference.low == pytest.approx(1 / 6)
    assert rows["2+"].n_problems == 6 and rows["2+"].verdict == "no significant change"
    assert rows["2+"].difference.low < 0


def test_either_order_gives_the_same_figures(six: tuple[Path, Path]) -> None:
    chain, reference = six
    ours, theirs = compare_starts(chain, reference), compare_starts(reference, chain)
    assert ours == theirs and ours.chain_run == chain and ours.reference_run == reference


def test_fewer_than_six_problems_get_no_verdict_however_unanimous(tmp_path: Path) -> None:
    chain = write_run(tmp_path / "c", {"a": ["SF"], "b": ["SF"]})
    reference = write_run(tmp_path / "r", {"a": ["SSS"], "b": ["SSS"]}, start_from="reference")
    rows = _rows(chain, reference)
    assert rows["2+"].difference.value == 1.0 and rows["2+"].difference.low == 1.0
    assert {r.verdict for r in rows.values()} == {"too few clusters"}
    text = run_cli("report", str(chain), "--counterfactual", str(reference)).stdout
    section = text[text.index("## Chain against reference starts"):text.index("## Attempts")]
    assert "too few problems to tell (n=2)" in section and "inherited code hurts" not in section
    assert ("| **2+ (overall)** | 2 | 0 / 0 / 2 / 0 | 0.0% [0.0%, 0.0%]† | "
            "100.0% [100.0%, 100.0%]† | 100.0% [100.0%, 100.0%]† | "
            "too few problems to tell (n=2) | 100.0% [100.0%, 100.0%]† (2/2) |") in section
    assert "- not reached, not counted: a/trial_1/checkpoint_3: not reached by the chain run" \
        in section


def test_two_runs_of_the_same_start_are_refused_with_exit_2(tmp_path: Path) -> None:
    one = write_run(tmp_path / "one", {"a": ["SS"]})
    two = write_run(tmp_path / "two", {"a": ["SF"]})
    with pytest.raises(UserInputError, match="both runs start checkpoints from `chain`"):
        compare_starts(one, two)
    done = run_cli("report", str(one), "--counterfactual", str(two))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--start-from reference" in done.stderr  # the hint says how to make the other run
    refs = [write_run(tmp_path / n, {"a": ["SS"]}, start_from="reference") for n in "xy"]
    done = run_cli("report", str(refs[0]), "--counterfactual", str(refs[1]), "--json")
    assert done.returncode == 2 and "both runs start checkpoints from `reference`" in done.stderr


def test_trials_pair_by_number_and_what_cannot_pair_is_named(tmp_path: Path) -> None:
    # chain: two trials each; reference: one trial each, and b's checkpoint 3 has no reference
    # solution of checkpoint 2 (not attempted)
    chain = write_run(tmp_path / "c", {"a": ["SF", "SSS"], "b": ["SSS", "SSS"], "only_c": ["S"]})
    reference = write_run(tmp_path / "r", {"a": ["SSF"], "b": ["SS-"], "only_r": ["S"]},
                          start_from="reference")
    report = compare_starts(chain, reference)
    assert (report.n_paired, report.only_chain, report.only_reference) == (
        2, ["only_c"], ["only_r"])
    assert report.left_out == ["a/trial_2: scored in the chain run only",
                               "b/trial_2: scored in the chain run only",
                               "b/checkpoint_3: no reference solution of checkpoint_2"]
    rows = {r.checkpoints: r for r in report.per_checkpoint}
    # a trial 1 against a trial 1 only (its chain never reached 3); b at 1 and 2 only
    assert _outcomes(rows["2"]) == (2, 1, 0, 1, 0)
    assert "3" not in rows
    assert report.not_reached == ["a/trial_1/checkpoint_3: not reached by the chain run"]
    assert report.overall is not None and _outcomes(report.overall) == (2, 1, 0, 1, 0)


def test_json_output_and_settings_that_differ(tmp_path: Path) -> None:
    chain = write_run(tmp_path / "c", {"a": ["SF"]}, model="model-a")
    reference = write_run(tmp_path / "r", {"a": ["SSS"]}, start_from="reference",
                          model="model-b")
    report = report_json(reference, "--counterfactual", str(chain))
    section = report["counterfactual"]
    assert isinstance(section, dict)
    assert section["format"] == "benchwright.counterfactual/2"
    assert section["differences"] == ["model: model-a (chain) vs model-b (reference)"]
    overall = section["overall"]
    assert overall["counts"] == {"pairs": 1, "both_solved": 0, "chain_only": 0,
                                 "reference_only": 1, "neither": 0}
    assert section["not_reached"] == ["a/trial_1/checkpoint_3: not reached by the chain run"]
    assert report["header"]["start_from"] == "reference"  # type: ignore[index]
    text = run_cli("report", str(reference), "--counterfactual", str(chain)).stdout
    assert "runs differ besides the start: model: model-a (chain) vs model-b" in text


def test_a_web_run_is_refused(tmp_path: Path) -> None:
    chain = write_run(tmp_path / "c", {"a": ["SF"]})
    web = tmp_path / "web"
    web.mkdir()
    (web / "manifest.json").write_text(json.dumps({
        "format": "benchwright.web-run/1", "track": "web", "created_at": "x",
        "benchwright_version": "0", "environment": {}}))
    done = run_cli("report", str(chain), "--counterfactual", str(web))
    assert done.returncode == 2 and "is a web run, not a coding run" in done.stderr


def test_reference_start_attempts_rows_and_failures_in_the_run_report(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", {"a": ["SFS"], "b": ["SS-"]}, start_from="reference")
    report = report_json(run)
    assert [row["cells"] for row in report["problems"]] == [  # type: ignore[index]
        ["solved", "failed", "solved"], ["solved", "solved", "no reference"]]
    failures = report["failures"]
    assert isinstance(failures, list)
    assert [(f["problem"], f["checkpoint"], f["ended"]) for f in failures] == [
        ("a", "checkpoint_2", False)]
    text = run_cli("report", str(run)).stdout
    assert "### a trial 1: failed at checkpoint_2 (tests)" in text
    assert "| a | 1 | ✔ ✘ ✔ |" in text and "| b | 1 | ✔ ✔ ∅ |" in text
    assert "start from: `reference`" in text
