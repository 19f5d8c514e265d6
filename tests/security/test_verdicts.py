"""A submission cannot forge its grade: it rewrites pytest's JSON report, fakes pytest's output,
tries to ptrace pytest or reach its fds, plants a module for pytest to import, swaps the report
for a FIFO and kills pytest; the verdict stays its true one (failed), and what it tampered with is
recorded. The forger's tests start it without the jail (as tests that run a program other than
the entry point do), so each probe reaches pytest's sandbox. On bubblewrap, podman and docker
(tests/helpers/runtimes.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import Limits
from tests.helpers import FIXTURES
from tests.helpers.probes import records
from tests.helpers.runtimes import RUNTIME_PARAMS, runtime_for

pytestmark = pytest.mark.sandbox
FORGER = FIXTURES / "forger"


@pytest.fixture(scope="module", params=RUNTIME_PARAMS)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return runtime_for(request)


def _grade(checkpoint: str, tmp: Path, runtime: Runtime) -> CheckpointEvaluation:
    problem = load_problem(FORGER)
    snapshot = tmp / "snapshot"
    shutil.copytree(FORGER / "solutions" / "checkpoint_1", snapshot)
    options = GradeOptions(runtime=runtime, limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints[checkpoint], snapshot,
                            options).evaluation


@pytest.fixture(scope="module")
def forged(tmp_path_factory: pytest.TempPathFactory, runtime: Runtime) -> CheckpointEvaluation:
    return _grade("checkpoint_1", tmp_path_factory.mktemp("forged"), runtime)


def _outcomes(evaluation: CheckpointEvaluation) -> dict[str, str]:
    return {case.id: case.outcome for case in evaluation.tests}


def test_a_rewritten_report_does_not_pass(forged: CheckpointEvaluation) -> None:
    assert _outcomes(forged)["test_sum"] == "failed"
    assert not any(forged.verdicts.values())
    assert forged.counts["Core"].passed < forged.counts["Core"].total


def test_the_rewrite_is_recorded_as_tampering(forged: CheckpointEvaluation) -> None:
    # The forger stops pytest while it rewrites the file, so it wins the race every time.
    assert forged.status is GradeStatus.TAMPERED
    assert "rewritten" in (forged.tampering_reason or "")
    assert forged.to_scbench()["infrastructure_failure"] is True


def test_fake_summaries_on_stdout_count_for_nothing(forged: CheckpointEvaluation) -> None:
    assert forged.pytest_collected == 3
    assert forged.pytest_exit_code == 1
    assert _outcomes(forged)["test_echo"] == "passed"


@pytest.mark.parametrize("attack", ["ptrace", "mem", "environ", "fds"])
def test_pytest_cannot_be_traced_or_opened(forged: CheckpointEvaluation, attack: str) -> None:
    probe = next(case for case in forged.tests if case.id == "test_probe")
    assert probe.outcome == "failed", "the submission got at pytest"
    message = probe.message or ""
    assert f"{attack}=E" in message, message


def test_killing_pytest_is_not_a_pass(tmp_path: Path, runtime: Runtime) -> None:
    evaluation = _grade("checkpoint_2", tmp_path, runtime)
    assert evaluation.status is GradeStatus.TAMPERED
    assert "without reporting" in (evaluation.tampering_reason or "")
    assert not any(evaluation.verdicts.values())


def test_a_module_planted_where_pytest_imports_never_runs_in_pytest(
        tmp_path: Path, runtime: Runtime) -> None:
    # The submission writes .evaluation_tests/deepdiff.py; a test then imports deepdiff lazily.
    evaluation = _grade("checkpoint_4", tmp_path, runtime)
    assert _outcomes(evaluation) == {"test_plant": "failed", "test_sum": "failed"}
    assert not any(evaluation.verdicts.values())


@pytest.mark.parametrize("runtime_name", RUNTIME_PARAMS)
def test_a_fifo_in_place_of_the_report_does_not_hang_the_grader(
        tmp_path: Path, runtime_name: str, request: pytest.FixtureRequest) -> None:
    if runtime_name == "docker":
        request.getfixturevalue("docker_api")
    argv = [sys.executable, "-m", "benchwright", "eval", "checkpoint", "--problems-dir",
            str(FORGER.parent), "--problem", FORGER.name, "--checkpoint", "checkpoint_5",
            "--workspace", str(FORGER / "solutions" / "checkpoint_1"), "--out",
            str(tmp_path / "out"), "--json", "--runtime", runtime_name]
    # A grader that opened the FIFO to read it would wait forever for a writer.
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ), check=False)
    grading = json.loads(proc.stdout)
    assert grading["status"] == "tampered"
    assert "not valid JSON" in grading["tampering_reason"]


def test_a_run_records_the_forgery_as_tampering(tmp_path: Path) -> None:
    """Through `run coding`: the forging submission's checkpoint fails, its record and the
    run's report say tampering, and why."""
    problems = tmp_path / "problems"
    shutil.copytree(FORGER, problems / "forger")
    config = problems / "forger" / "config.yaml"
    config.write_text(config.read_text().split("  checkpoint_2")[0])
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "benchwright", "run", "coding",
                           "--problems-dir", str(problems), "--no-metrics", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    [record] = records(out)
    assert record["grade_status"] == "tampered" and record["passed"] is False
    assert not any(record["verdicts"].values())
    report = (out / "report.md").read_text()
    assert "ended at checkpoint_1 (tampering)" in report and "rewritten" in report
