"""`run coding --start-from reference` end to end through the CLI on the bundled problems: the
oracle solves every checkpoint; a `command` agent that breaks code it inherited from itself is
attributed as computed by hand; resume and `eval RUN_DIR` keep the mode; a problem without a
reference solution, and reference solutions holding links, as an attacker would write them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.starts import no_reference
from benchwright.coding.problems.examples import examples_dir
from benchwright.coding.problems.loader import load_problem
from tests.helpers import FIXTURES, run_cli
from tests.helpers.shared_runs import sloppy_run

pytestmark = pytest.mark.sandbox
QUICK = FIXTURES / "runs" / "quick"


def _run(*args: str) -> dict[str, Any]:
    proc = run_cli("run", "coding", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.fixture(scope="module")
def sloppy_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sloppy agent from chain and from reference starts (made once per test session:
    tests/view shows them too), this module's own copies."""
    return sloppy_run(tmp_path_factory), sloppy_run(tmp_path_factory, "--start-from", "reference")


def test_the_oracle_from_reference_starts_solves_every_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = _run("--start-from", "reference", "--out", str(out))
    assert (result["n_checkpoints"], result["n_checkpoints_solved"]) == (6, 6)
    assert result["start_from"] == "reference" and result["complete"] is True
    layout = RunLayout(out)
    manifest = json.loads(layout.manifest.read_text())
    assert manifest["config"]["start_from"] == "reference" and manifest["no_reference"] == {}
    folder = layout.checkpoint_dir("kv_server", 1, "checkpoint_3")
    solutions = examples_dir() / "kv_server" / "solutions"
    # it started from the reference of checkpoint 2, and its diff is measured from there
    assert (folder / "start" / "kv_server.py").read_bytes() == \
        (solutions / "checkpoint_2" / "kv_server.py").read_bytes()
    diff = json.loads((folder / "diff.json").read_text())
    assert diff["modified"] == ["kv_server.py"] and diff["added"] == []
    assert (folder / "quality_analysis" / "start_metrics.json").is_file()
    assert not (layout.checkpoint_dir("kv_server", 1, "checkpoint_1") / "start").exists()
    ledger = layout.checkpoint_dir("ledger_cli", 1, "checkpoint_2")
    assert not (ledger / "start" / "samples").exists()  # the asset is placed, not copied in
    assert "start from: `reference`" in (out / "report.md").read_text()
    config = yaml.safe_load((out / "config.yaml").read_text())  # SCBench's, derived
    assert config["environment"]["start_from"] == "reference"


def test_failures_from_inherited_code_are_attributed_as_computed_by_hand(
        sloppy_runs: tuple[Path, Path]) -> None:
    chain, reference = sloppy_runs
    # by hand (tests/fixtures/counterfactual/sloppy_agent.sh): kv_server's chain is solved,
    # failed, never reached; its reference start solved, solved, failed; ledger_cli is solved
    # throughout both. Pairs (chain, reference): checkpoint 2: kv (F, S), ledger (S, S);
    # checkpoint 3: ledger (S, S) only: the chain stopped at kv's checkpoint 2, so nothing of
    # checkpoint 3 is put down to inherited code (issue 27's acceptance).
    done = run_cli("report", str(chain), "--counterfactual", str(reference), "--json")
    assert done.returncode == 0, done.stderr
    section = json.loads(done.stdout)["counterfactual"]
    rows = {r["checkpoints"]: r for r in [*section["per_checkpoint"], section["overall"]]}
    figures = {k: (r["counts"]["pairs"], r["chain"]["value"], r["reference"]["value"],
                   r["difference"]["value"],
                   None if r["attributable"] is None else r["attributable"]["value"])
               for k, r in rows.items()}
    assert figures == {"1": (2, 1.0, 1.0, 0.0, None),
                       "2": (2, 0.5, 1.0, 0.5, 1.0),   # the one chain failure: inherited
                       "3": (1, 1.0, 1.0, 0.0, None),  # kv's is not reached: not counted
                       "2+": figures["2+"]}
    assert figures["2+"] == pytest.approx((3, 2 / 3, 1.0, 1 / 3, 1.0))
    assert section["not_reached"] == ["kv_server/trial_1/checkpoint_3: not reached by the "
                                      "chain run"]
    assert {r["verdict"] for r in rows.values()} == {"too few clusters"}  # two problems
    text = run_cli("report", str(reference), "--counterfactual", str(chain)).stdout
    assert "| **2+ (overall)** | 2 | 2 / 0 / 1 / 0 | 66.7% [" in text
    assert "- not reached, not counted: kv_server/trial_1/checkpoint_3" in text


def test_resume_keeps_the_reference_start(sloppy_runs: tuple[Path, Path],
                                          tmp_path: Path) -> None:
    _chain, reference = sloppy_runs
    out = tmp_path / "resumed"
    shutil.copytree(reference, out)
    layout = RunLayout(out)
    records = journal.read_records(layout.journal("kv_server", 1))
    assert [r.solved for r in records] == [True, True, False]  # attempted past a failure
    journal.rewrite(layout.journal("kv_server", 1), records[:1])  # as if killed after one
    conflict = run_cli("run", "coding", "--resume", str(out), "--start-from", "chain")
    assert conflict.returncode == 2 and "--start-from" in conflict.stderr
    result = _run("--resume", str(out))
    again = journal.read_records(layout.journal("kv_server", 1))
    assert [(r.checkpoint, r.solved) for r in again] == [(r.checkpoint, r.solved)
                                                          for r in records]
    assert again[0].finished_at == records[0].finished_at  # the kept one was not redone
    assert result["start_from"] == "reference" and result["n_checkpoints_solved"] == 5


def _quick_copy(root: Path) -> Path:
    problems = root / "problems"
    shutil.copytree(QUICK, problems / "quick")
    return problems


def test_a_missing_reference_is_recorded_and_its_checkpoint_not_attempted(
        tmp_path: Path) -> None:
    problems = _quick_copy(tmp_path)
    solutions = problems / "quick" / "solutions"
    shutil.rmtree(solutions / "checkpoint_3")
    # an attacker's reference: a link to the hidden tests (inside the problem, so it loads)
    (solutions / "checkpoint_1" / "peek").symlink_to("../../tests")
    out = tmp_path / "run"
    result = _run("--problems-dir", str(problems), "--start-from", "reference", "--out", str(out))
    why = "no reference solution of checkpoint_3 to start from: solutions/checkpoint_3/ is missing"
    assert result["no_reference"] == [f"quick/checkpoint_4: {why}"]
    assert result["complete"] is True and result["n_checkpoints"] == 3
    manifest = json.loads(RunLayout(out).manifest.read_text())
    assert manifest["no_reference"] == {"quick": {"checkpoint_4": why}}
    cells = json.loads(run_cli("report", str(out), "--json").stdout)["problems"]
    assert cells[0]["cells"] == ["solved", "solved", "failed", "no reference"]
    start = RunLayout(out).checkpoint_dir("quick", 1, "checkpoint_2") / "start"
    assert (start / "peek").is_symlink() and (start / "peek").readlink() == Path("../../tests")
    report = (out / "report.md").read_text()
    assert "## Not attempted: no reference solution" in report and why in report
    regraded = run_cli("eval", str(out), "--json")  # re-grading keeps the mode and the gap
    assert regraded.returncode == 0, regraded.stderr
    assert json.loads(regraded.stdout)["changes"] == []
    result = json.loads(RunLayout(out).result_json.read_text())
    assert (result["start_from"], result["no_reference"], result["complete"]) == (
        "reference", [f"quick/checkpoint_4: {why}"], True)


def test_a_linked_reference_is_not_followed(tmp_path: Path) -> None:
    problems = _quick_copy(tmp_path)
    solutions = problems / "quick" / "solutions"
    shutil.rmtree(solutions / "checkpoint_2")
    (solutions / "checkpoint_2").symlink_to("checkpoint_1")
    assert no_reference(load_problem(problems / "quick")) == {
        "checkpoint_3": "no reference solution of checkpoint_2 to start from: "
                        "solutions/checkpoint_2 is a link (links are not followed)"}
    solutions.rename(problems / "quick" / "real_solutions")
    solutions.symlink_to("real_solutions")
    skipped = no_reference(load_problem(problems / "quick"))
    assert sorted(skipped) == ["checkpoint_2", "checkpoint_3", "checkpoint_4"]
    assert skipped["checkpoint_2"].endswith("solutions is a link (links are not followed)")
