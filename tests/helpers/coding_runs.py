"""Small coding run folders written directly (no agent, no grading): for report tests.

`write_run(dir, {problem: [trial outcomes]}, n_checkpoints)` where a trial's outcomes are, per
checkpoint reached, "S" (solved), "P" (passed the policy, not solved) or "F" (failed the
policy: a chain ends there; a reference start, `start_from="reference"`, goes on), or "-" (not
attempted: a reference start's checkpoint without a reference solution before it). Each
checkpoint costs COST dollars, IN/OUT/CACHED tokens, AGENT_S and GRADE_S seconds, so totals are
easy to compute by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchwright.coding.agents.base import AgentResult, AgentStatus, Usage
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, Manifest, RunConfig, StartFrom
from benchwright.coding.grading.evaluation import (
    CheckpointEvaluation,
    EnvInfo,
    GraderInfo,
    GradeStatus,
    TestCase,
)
from benchwright.coding.grading.policies import GroupCount, PassPolicy
from benchwright.coding.problems.config import Group
from benchwright.sandbox.bwrap import Limits

COST, IN, OUT, CACHED, AGENT_S, GRADE_S = 0.25, 1000, 200, 300, 10.0, 2.0
CREATED = "2026-01-02T03:04:05+00:00"
_AGENT_ERRORS = {AgentStatus.ERROR: "agent crashed: exit 3",
                 AgentStatus.TIMEOUT: "agent timed out after 600 s\nkilled",
                 AgentStatus.INFRA_ERROR: "provider: 503 Service Unavailable"}
GRADER_VERSION = "9.9.9"


def _record(problem: str, trial: int, index: int, mark: str, agent: AgentResult,
            grade_status: GradeStatus = GradeStatus.COMPLETED) -> CheckpointRecord:
    core = GroupCount(passed=2 if mark in "SP" else 1, total=2)
    functionality = GroupCount(passed=3 if mark == "S" else 1, total=3)
    return CheckpointRecord(
        problem=problem, trial=trial, checkpoint=f"checkpoint_{index}", index=index,
        prompt_sha256="0" * 64, agent=agent, grade_status=grade_status,
        counts={Group.CORE: core, Group.FUNCTIONALITY: functionality},
        verdicts={PassPolicy.CORE_CASES: mark in "SP"}, passed=mark in "SP",
        solved=mark == "S", iso_solved=mark == "S", core_solved=mark in "SP",
        snapshot_files=1, grade_duration_s=GRADE_S,
        finished_at=f"2026-01-02T04:{index:02d}:{trial:02d}+00:00")


def _grading(record: CheckpointRecord, n_failing: int) -> CheckpointEvaluation:
    env = EnvInfo(key="k", python_version="3.12", packages=[], reused=True)
    tests = [TestCase(id=f"test_case_{i}", file="tests/test_x.py", checkpoint=record.checkpoint,
                      group=Group.CORE if i == 0 else Group.FUNCTIONALITY, outcome="failed",
                      message=f"AssertionError: expected {i}, got {i + 1}\nmore detail")
             for i in range(n_failing)]
    tests.append(TestCase(id="test_ok", file="tests/test_x.py", checkpoint=record.checkpoint,
                          group=Group.CORE, outcome="passed"))
    return CheckpointEvaluation(
        problem=record.problem, problem_version=1, checkpoint=record.checkpoint,
        checkpoint_version=1, status=record.grade_status, pytest_exit_code=1,
        infrastructure_reason="tests failed to collect: conftest.py: ImportError\nmore"
        if record.grade_status is GradeStatus.INFRASTRUCTURE_FAILURE else None,
        pytest_collected=len(tests), counts=record.counts, verdicts=record.verdicts,
        tests=tests, duration_s=1.0, total_duration_s=GRADE_S,
        grader=GraderInfo(benchwright_version=GRADER_VERSION, runtime="bwrap", limits=Limits(),
                          entrypoint="python x.py", pytest_args=[], test_env=env,
                          solution_env=env))


def write_run(run_dir: Path, attempts: dict[str, list[str]], n_checkpoints: int = 3, *,
              n_failing: int = 12, agent_status: AgentStatus = AgentStatus.COMPLETED,
              start_from: str = "chain", model: str = "fake-model",
              grade_status: GradeStatus = GradeStatus.COMPLETED) -> Path:
    """A finished coding run with these outcomes (see the module's docstring); `agent_status`
    and `grade_status` are those of the failed ("F") checkpoints."""
    layout = RunLayout(run_dir)
    names = [f"checkpoint_{i}" for i in range(1, n_checkpoints + 1)]
    trials = max(len(t) for t in attempts.values())
    config = RunConfig(problems_dir=Path("/problems"), problems=list(attempts), agent="mini",
                       model=model, prompt="plan-first", trials=trials,
                       start_from=StartFrom(start_from))
    skipped = {p: {f"checkpoint_{i}": f"no reference solution of checkpoint_{i - 1}"
                   for i, mark in enumerate(outcomes[0], 1) if mark == "-"}
               for p, outcomes in attempts.items()}
    manifest = Manifest(created_at=CREATED, benchwright_version="1.2.3", config=config,
                        problem_checksums={p: "0" for p in attempts},
                        problem_checkpoints={p: names for p in attempts}, environment={},
                        no_reference={p: s for p, s in skipped.items() if s})
    run_dir.mkdir(parents=True)
    layout.manifest.write_text(manifest.model_dump_json())
    for problem, outcomes in attempts.items():
        for trial, marks in enumerate(outcomes, 1):
            _write_attempt(layout, problem, trial, marks, n_failing, agent_status, grade_status)
    return run_dir


def _write_attempt(layout: RunLayout, problem: str, trial: int, marks: str, n_failing: int,
                   agent_status: AgentStatus, grade_status: GradeStatus) -> None:
    lines = []
    for index, mark in enumerate(marks, 1):
        if mark == "-":
            continue
        status = agent_status if mark == "F" else AgentStatus.COMPLETED
        agent = AgentResult(status=status, duration_s=AGENT_S,
                            usage=Usage(input_tokens=IN, output_tokens=OUT,
                                        cached_input_tokens=CACHED, cost_usd=COST, steps=1),
                            error=_AGENT_ERRORS.get(status))
        record = _record(problem, trial, index, mark, agent,
                         grade_status if mark == "F" else GradeStatus.COMPLETED)
        folder = layout.checkpoint_dir(problem, trial, record.checkpoint)
        folder.mkdir(parents=True)
        (folder / "grading.json").write_text(
            _grading(record, n_failing if mark == "F" else 0).model_dump_json())
        lines.append(record.model_dump_json())
    layout.journal(problem, trial).write_text("".join(line + "\n" for line in lines))


def report_json(run_dir: Path, *extra: str) -> dict[str, object]:
    """`benchwright report RUN --json` through the CLI, parsed."""
    from tests.helpers import run_cli

    done = run_cli("report", str(run_dir), "--json", *extra)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, object] = json.loads(done.stdout)
    return parsed
