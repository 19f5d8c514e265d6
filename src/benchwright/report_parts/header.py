"""What a report starts with: the run's identity (who ran what, when, with which versions)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from benchwright.version import __version__


class RunHeader(BaseModel):
    """The run's identity."""

    track: str
    """coding or web."""
    run_dir: Path
    """The run directory."""
    suite: str
    """The problems folder (coding) or the suite (web)."""
    problems: list[str]
    """The problems (or task ids) in the run."""
    unit: str = "task"
    """What one of `problems` is called in the header's line ("problem": coding)."""
    agent: str
    """The agent."""
    model: str | None
    """The model, when the agent has one."""
    prompt: str | None
    """The prompt: the coding template, or the web prompt (structured, plain or a file)."""
    policy: str | None
    """The pass policy that ends an attempt (coding)."""
    trials: int
    """Trials per problem (or task)."""
    start_from: str | None = None
    """What checkpoints 2+ started from (coding): `chain` (the agent's own code) or `reference`
    (the previous checkpoint's reference solution)."""
    created_at: str
    """When the run started (UTC, ISO 8601)."""
    finished_at: str | None
    """When its last checkpoint (or trial) finished."""
    benchwright_version: str
    """The version that started the run."""
    grader_versions: list[str]
    """The grader's versions as recorded in the results (benchwright's for coding, the
    evaluator's for web); several when a run was resumed or re-graded across upgrades."""
    runtime: str | None = None
    """Where sandboxed steps ran, with the container image's reference and id when there was
    one (`podman, image localhost/x:y (sha256:...)`); None: bubblewrap (or not recorded)."""
    sources: list[str] = []
    """Where the problems came from (coding): one line per git origin and commit, or the
    problems outside any checkout; empty when the run recorded none."""
    model_traffic: str | None = None
    """Where the agent's model calls went when a cassette was involved (`replayed from DIR`,
    `recorded into DIR`); None: straight to the endpoint."""
    report_version: str = __version__
    """The version that wrote this report."""


def header_lines(header: RunHeader) -> list[str]:
    """The header as Markdown bullet points."""
    shown = ", ".join(header.problems[:20]) + (
        f", ... ({len(header.problems)} in all)" if len(header.problems) > 20 else "")
    return [
        f"- track: {header.track}; suite: `{header.suite}`; {len(header.problems)} "
        f"{header.unit}"
        f"{'' if len(header.problems) == 1 else 's'}: {shown or '-'}",
        f"- agent: `{header.agent}`; model: `{header.model or '-'}`"
        + (f"; prompt: `{header.prompt}`" if header.prompt else "")
        + (f"; pass policy: `{header.policy}`" if header.policy else "")
        + (f"; start from: `{header.start_from}`" if header.start_from else "")
        + f"; trials: {header.trials}",
        f"- started {header.created_at}; last finished {header.finished_at or '-'}",
        f"- benchwright {header.benchwright_version} (run), {header.report_version} (report); "
        f"grader {', '.join(header.grader_versions) or '-'}",
        *([f"- sandbox: {header.runtime}"] if header.runtime else []),
        *[f"- problems from: {line}" for line in header.sources],
        *([f"- model calls: {header.model_traffic}"] if header.model_traffic else []),
    ]
