"""Start, resume and finish a run: manifest, jobs on an executor, derived result files."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwright import __version__
from benchwright.coding.loader import load_problem
from benchwright.errors import UserInputError
from benchwright.executors.local import emit
from benchwright.fileio import write_json_atomic, write_text_atomic
from benchwright.protocols import Executor
from benchwright.redaction import Redactor
from benchwright.runs.chain import ChainJob, run_chain
from benchwright.runs.clock import utc_now
from benchwright.runs.layout import RunLayout
from benchwright.runs.models import ChainSummary, CheckpointRecord, Manifest, RunConfig, RunResult
from benchwright.untrusted_files import decode_untrusted, read_untrusted_bytes


def create_run(config: RunConfig, run_dir: Path) -> Manifest:
    """Write the manifest of a new run; refuse a folder that already holds one."""
    layout = RunLayout(run_dir)
    if layout.manifest.exists():
        raise UserInputError("this folder already holds a run", path=run_dir,
                             hint=f"continue it with --resume {run_dir}, or pick another --out")
    manifest = Manifest(created_at=utc_now(), benchwright_version=__version__, config=config,
                        problem_checksums=_checksums(config),
                        problem_checkpoints=_checkpoint_names(config),
                        environment=_environment())
    write_json_atomic(layout.manifest, manifest.model_dump(mode="json"))
    Redactor.from_environ().file(layout.manifest)
    return manifest


def load_manifest(run_dir: Path) -> Manifest:
    """The manifest of an existing run, or an error that says what is wrong."""
    path = RunLayout(run_dir).manifest
    if not path.exists():
        raise UserInputError("not a run directory (no manifest.json)", path=run_dir,
                             hint="pass the folder `benchwright run coding` printed")
    data = read_untrusted_bytes(path, what="manifest.json")
    decode_untrusted(data, path, what="manifest.json")
    try:
        manifest = Manifest.model_validate_json(data)
    except ValidationError as exc:
        raise UserInputError(f"manifest.json is not readable: {_first_error(exc)}",
                             path=path, hint="it was written by another tool or version") from None
    _check_trial_folders(RunLayout(run_dir), manifest.config)
    return manifest


def _check_trial_folders(layout: RunLayout, config: RunConfig) -> None:
    """A trial's folder, journal or infrastructure-error record that is there but of the wrong
    kind (replaced by hand: a file for a folder, a folder or a pipe for a file) is refused up
    front, before anything reads or deletes it."""
    for problem in config.problems:
        for trial in range(1, config.trials + 1):
            folder = layout.chain_dir(problem, trial)
            _require_kind(folder, folder=True)
            _require_kind(layout.journal(problem, trial), folder=False)
            _require_kind(layout.infra_error(problem, trial), folder=False)


def _require_kind(path: Path, *, folder: bool) -> None:
    if not os.path.lexists(path) or (path.is_dir() if folder else path.is_file()):
        return
    raise UserInputError(f"should be a {'folder' if folder else 'regular file'} but is not",
                         path=path, hint="the run folder was changed by hand; restore it or "
                         "start a new run")


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def refresh_checksums(run_dir: Path, manifest: Manifest) -> Manifest:
    """On resume: record the problems as they are now (edited specs invalidate checkpoints)."""
    updated = manifest.model_copy(update={
        "problem_checksums": _checksums(manifest.config),
        "problem_checkpoints": _checkpoint_names(manifest.config)})
    write_json_atomic(RunLayout(run_dir).manifest, updated.model_dump(mode="json"))
    return updated


def jobs_for(run_dir: Path, config: RunConfig) -> list[ChainJob]:
    """One job per problem x trial."""
    return [ChainJob(run_dir=run_dir, config=config, problem=p, trial=t)
            for p in config.problems for t in range(1, config.trials + 1)]


def run_chain_job(job: ChainJob) -> ChainSummary:
    """The executor's unit of work (module level, so a process pool can pickle it)."""
    return run_chain(job, on_record=emit)


def execute(run_dir: Path, config: RunConfig, executor: Executor,
            on_summary: Callable[[ChainSummary], None] = lambda _s: None) -> RunResult:
    """Run every job not yet finished, then write checkpoint_results.jsonl and result.json."""
    summaries = []
    try:
        for summary in executor.run(run_chain_job, jobs_for(run_dir, config)):
            summaries.append(summary)
            on_summary(summary)
    finally:
        shutil.rmtree(RunLayout(run_dir).root / ".work", ignore_errors=True)
    return finish(run_dir, config, summaries)


def finish(run_dir: Path, config: RunConfig, summaries: list[ChainSummary]) -> RunResult:
    """Derive the root result files from the attempts' journals (atomically)."""
    order = {(p, t): i for i, (p, t) in enumerate((j.problem, j.trial)
                                                  for j in jobs_for(run_dir, config))}
    summaries = sorted(summaries, key=lambda s: order.get((s.problem, s.trial), 0))
    records = [r for s in summaries for r in s.records]
    write_text_atomic(RunLayout(run_dir).results_jsonl,
                      "".join(r.model_dump_json() + "\n" for r in records))
    result = summarise(run_dir, config, summaries)
    write_json_atomic(RunLayout(run_dir).result_json, result.model_dump(mode="json"))
    return result


def summarise(run_dir: Path, config: RunConfig, summaries: list[ChainSummary]) -> RunResult:
    """The run's totals."""
    records: list[CheckpointRecord] = [r for s in summaries for r in s.records]
    infra = [s.infra_error for s in summaries if s.infra_error is not None]
    by_problem: dict[str, list[ChainSummary]] = {}
    for summary in summaries:  # attempts cut short by the provider are not the agent's result
        if summary.infra_error is None:
            by_problem.setdefault(summary.problem, []).append(summary)
    solved = {p for p, chains in by_problem.items() if all(c.solved for c in chains)}
    partial = {p for p, chains in by_problem.items()
               if p not in solved and any(r.solved for c in chains for r in c.records)}
    return RunResult(
        run_dir=run_dir, n_problems=len(config.problems), n_trials=config.trials,
        n_checkpoints=len(records), n_checkpoints_solved=sum(r.solved for r in records),
        n_checkpoints_passed=sum(r.passed for r in records), n_problems_solved=len(solved),
        n_problems_partial=len(partial), n_checkpoints_infra_error=len(infra),
        complete=len(summaries) == len(config.problems) * config.trials
        and not any(s.error for s in summaries) and not infra,
        errors=[f"{s.problem}/trial_{s.trial}: {s.error}" for s in summaries if s.error],
        infra_errors=[f"{i.problem}/trial_{i.trial}/{i.checkpoint}: {i.agent.error}"
                      for i in infra],
    )


def _checksums(config: RunConfig) -> dict[str, str]:
    return {name: problem_checksum(config.problems_dir / name) for name in config.problems}


def _checkpoint_names(config: RunConfig) -> dict[str, list[str]]:
    return {name: [c.name for c in load_problem(config.problems_dir / name).ordered_checkpoints()]
            for name in config.problems}


def problem_checksum(folder: Path) -> str:
    """SHA-256 over a problem folder's file names and contents."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _environment() -> dict[str, Any]:
    return {"platform": platform.platform(), "python": sys.version.split()[0],
            "bwrap": _version([shutil.which("bwrap") or "bwrap", "--version"]),
            "benchwright": __version__}


def _version(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return "not installed"
