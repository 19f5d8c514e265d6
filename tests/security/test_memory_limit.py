"""The sandbox limits resident memory, not address space: a submission that fills 4 GiB passes as
under SCBench's runner (no memory limit), and a 20 GB bomb is killed, reported as such, and
leaves nothing behind, on bubblewrap, podman and docker. Needs a writable memory cgroup hierarchy.

The machine has no swap and is shared: the bomb runs under an explicit 2 GiB limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.protocols import Runtime
from benchwright.sandbox import bwrap, memory_cgroup
from benchwright.sandbox.bwrap import BwrapRuntime, Limits, Mount
from tests.helpers import FIXTURES
from tests.helpers.runtimes import RUNTIME_PARAMS, runtime_for

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not memory_cgroup.available(), reason="no writable memory cgroup here"),
]
PYTHON = "/usr/bin/python3"
BOMB_LIMIT = Limits(wall_clock_s=300, memory_mb=2048)


def leftover_cgroups() -> list[Path]:
    return memory_cgroup.leftovers(os.getpid())


@pytest.fixture(params=RUNTIME_PARAMS)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return runtime_for(request)


def grade(checkpoint: str, limits: Limits, runtime: Runtime | None = None) -> CheckpointEvaluation:
    problem = load_problem(FIXTURES / "memory")
    snapshot = problem.solution_dir("checkpoint_1")
    options = GradeOptions(runtime=runtime or BwrapRuntime(), limits=limits)
    return grade_checkpoint(problem, problem.checkpoints[checkpoint], snapshot,
                            options).evaluation


def test_filling_four_gib_passes_under_the_default_limit() -> None:
    evaluation = grade("checkpoint_1", Limits(wall_clock_s=300))
    assert evaluation.status is GradeStatus.COMPLETED, evaluation.infrastructure_reason
    assert [(c.id, c.outcome) for c in evaluation.tests] == [("test_fills_four_gib", "passed")], \
        evaluation.tests
    assert evaluation.memory_exceeded is False
    assert evaluation.verdicts["all-cases"] is True


def test_a_20_gb_bomb_is_killed_and_reported(runtime: Runtime) -> None:
    evaluation = grade("checkpoint_2", BOMB_LIMIT, runtime)
    assert evaluation.status is GradeStatus.COMPLETED
    outcomes = {c.id: c.outcome for c in evaluation.tests}
    assert outcomes == {"test_small_work_still_runs": "passed", "test_bomb": "failed"}
    assert evaluation.memory_exceeded is True
    assert evaluation.grader.limits.memory_mb == 2048
    assert leftover_cgroups() == []


def test_pytest_killed_by_the_limit_is_a_memory_limit_status(runtime: Runtime) -> None:
    evaluation = grade("checkpoint_3", BOMB_LIMIT, runtime)
    assert evaluation.status is GradeStatus.MEMORY_LIMIT
    assert "memory limit" in (evaluation.infrastructure_reason or "")
    assert evaluation.verdicts["any"] is False
    assert leftover_cgroups() == []


def test_the_sandbox_reports_the_limit_and_removes_its_cgroup(tmp_path: Path) -> None:
    bomb = "blocks = []\nwhile True:\n    blocks.append(bytearray(2**28))\n"
    result = BwrapRuntime().run(
        [PYTHON, "-c", bomb], cwd=tmp_path, env={"PATH": "/usr/bin"},
        mounts=[Mount(path=tmp_path, writable=True)],
        limits=Limits(wall_clock_s=120, memory_mb=512))
    assert result.memory_exceeded is True
    assert result.exit_code != 0 and not result.timed_out
    assert leftover_cgroups() == []


def test_an_ordinary_command_is_not_reported(tmp_path: Path) -> None:
    result = BwrapRuntime().run(
        [PYTHON, "-c", "print(len(bytearray(2**27)))"], cwd=tmp_path,
        env={"PATH": "/usr/bin"}, mounts=[Mount(path=tmp_path, writable=True)],
        limits=Limits(wall_clock_s=120, memory_mb=512))
    assert (result.exit_code, result.memory_exceeded) == (0, False)


def test_without_a_cgroup_the_limit_falls_back_to_address_space(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap.memory_cgroup, "make", lambda _limit_mb: None)
    bwrap._warn_no_cgroup.cache_clear()
    run = [PYTHON, "-c", "print(len(bytearray(2**30)))"]
    with pytest.warns(RuntimeWarning, match="address-space"):
        result = BwrapRuntime().run(run, cwd=tmp_path, env={"PATH": "/usr/bin"},
                                    mounts=[Mount(path=tmp_path, writable=True)],
                                    limits=Limits(wall_clock_s=120, memory_mb=256))
    assert result.exit_code != 0 and result.memory_exceeded is False


def test_the_cgroup_of_a_killed_harness_is_removed_by_the_next(tmp_path: Path) -> None:
    found = memory_cgroup._parent()
    assert found is not None
    here = memory_cgroup._pid_namespace()
    stale = [found[0] / "benchwright-999999999-deadbeef",
             found[0] / f"benchwright-999999998-{here}-deadbeef"]
    # a harness in another pid namespace (a Ray lab node, a container): its pid is not ours
    elsewhere = found[0] / "benchwright-999999997-1-deadbeef"
    for folder in [*stale, elsewhere]:
        folder.mkdir()
    try:
        memory_cgroup._remove_stale.cache_clear()
        group = memory_cgroup.make(64)
        assert group is not None
        group.remove()
        assert not any(folder.exists() for folder in stale)
        assert elsewhere.is_dir()
    finally:
        memory_cgroup.MemoryCgroup(elsewhere, found[1]).remove()
