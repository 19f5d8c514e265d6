"""`problems validate`: grade each checkpoint's reference solution several times under varied
conditions and report what makes its grader untrustworthy (see `checks`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.grading.policies import PassPolicy
from benchwright.coding.problems.config import CheckpointConfig, ProblemConfig
from benchwright.coding.problems.loader import CONFIG_NAME, load_problem
from benchwright.coding.problems.source import missing_files, problem_source
from benchwright.coding.validation.checks import run_findings, static_findings
from benchwright.coding.validation.conditions import condition_for, cpu_load, runtime_for
from benchwright.coding.validation.models import (
    CheckpointReport,
    Finding,
    FindingKind,
    ProblemReport,
    RunVerdict,
    ValidationReport,
)
from benchwright.errors import ProblemConfigError

Advance = Callable[[str], None]


def problem_folders(root: Path, names: Sequence[str]) -> list[Path]:
    """The problem folders under `root` (or `root` itself when it holds config.yaml), limited
    to `names` when given; an unknown name is an error listing the ones there are."""
    if not root.is_dir():
        raise ProblemConfigError("problems folder not found", path=root,
                                 hint="pass a folder of problems, or one problem's folder")
    if (root / CONFIG_NAME).is_file():
        found = {root.name: root}
    else:
        found = {p.name: p for p in sorted(root.iterdir())
                 if p.is_dir() and not p.is_symlink() and (p / CONFIG_NAME).is_file()}
    if not found:
        raise ProblemConfigError("no problem here", path=root,
                                 hint="a problem folder holds config.yaml")
    unknown = [n for n in names if n not in found]
    if unknown:
        raise ProblemConfigError(f"no problem named {unknown[0]!r}", path=root,
                                 hint=f"choose from: {', '.join(found)}")
    return [found[n] for n in names] if names else list(found.values())


def count_checkpoints(folders: Sequence[Path]) -> int:
    """How many checkpoints the folders hold (loads each config)."""
    return sum(len(load_problem(f).checkpoints) for f in folders)


def validate_problems(folders: Sequence[Path], repeat: int, options: GradeOptions,
                      advance: Advance = lambda _s: None) -> ValidationReport:
    """Validate every checkpoint of every folder; `advance` is called once per graded run."""
    report = ValidationReport(repeat=repeat)
    for folder in folders:
        problem = load_problem(folder)
        entry = ProblemReport(problem=problem.name, path=str(folder),
                              source=problem_source(folder), findings=_data_findings(problem))
        if entry.findings:  # its tests would fail for want of the data: nothing to learn
            for _ in range(len(problem.checkpoints) * repeat):
                advance(f"{problem.name}: not graded (data files missing)")
        else:
            entry.checkpoints = [validate_checkpoint(problem, c, repeat, options, advance)
                                 for c in problem.ordered_checkpoints()]
        report.problems.append(entry)
    return report


def _data_findings(problem: ProblemConfig) -> list[Finding]:
    """One finding naming every data file the folder lacks, if it lacks any."""
    files = missing_files(problem).files
    if not files:
        return []
    return [Finding(kind=FindingKind.MISSING_DATA,
                    detail=f"{len(files)} data file(s) missing, checkpoints not graded: "
                    f"{', '.join(files)}; fetch them (`git lfs pull` in the checkout for Git "
                    "LFS pointers, `git checkout -- .` or a complete copy for the others)")]


def validate_checkpoint(problem: ProblemConfig, checkpoint: CheckpointConfig, repeat: int,
                        options: GradeOptions, advance: Advance) -> CheckpointReport:
    """Grade the checkpoint's reference `repeat` times and collect the findings."""
    report = CheckpointReport(checkpoint=checkpoint.name,
                              findings=static_findings(problem, checkpoint))
    reference = problem.solution_dir(checkpoint.name)
    if not reference.is_dir():
        report.findings.append(Finding(kind=FindingKind.NO_REFERENCE,
                                       detail=f"{reference.relative_to(problem.path)} is missing"))
        for _ in range(repeat):
            advance(f"{problem.name}/{checkpoint.name}")
        return report
    runs = []
    for run in range(repeat):
        advance(f"{problem.name}/{checkpoint.name} run {run + 1}")
        label, evaluation = _graded_run(problem, checkpoint, reference, run, options)
        runs.append((label, evaluation))
        report.runs.append(_verdict(label, evaluation))
    report.findings.extend(run_findings(problem, checkpoint, runs))
    return report


def _graded_run(problem: ProblemConfig, checkpoint: CheckpointConfig, reference: Path,
                run: int, options: GradeOptions) -> tuple[str, CheckpointEvaluation]:
    condition = condition_for(run)
    varied = replace(options, extra_env={**options.extra_env, **condition.env},
                     reverse_files=condition.reverse_files,
                     runtime=runtime_for(condition, options.runtime))
    with cpu_load(condition.cpu_load):
        output = grade_checkpoint(problem, checkpoint, reference, varied)
    return condition.label, output.evaluation


def _verdict(label: str, evaluation: CheckpointEvaluation) -> RunVerdict:
    return RunVerdict(
        condition=label, status=str(evaluation.status),
        core_passed=evaluation.verdicts.get(PassPolicy.CORE_CASES, False),
        all_passed=evaluation.verdicts.get(PassPolicy.ALL_CASES, False),
        passed=sum(1 for t in evaluation.tests if t.passed),
        total=sum(1 for t in evaluation.tests if t.counted),
        duration_s=evaluation.duration_s)
