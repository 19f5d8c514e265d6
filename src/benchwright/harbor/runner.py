"""A Harbor run folder: `manifest.json` (the configuration, the tasks), `trials.jsonl` (one
`TrialRecord` per task and trial, appended with fsync when the trial has ended), `trials/` (each
trial's logs and verifier folders), `result.json` and `report.md`.

Resume runs exactly the trials the journal lacks: a trial a kill -9 interrupted is started
again from its task's image (its folder, containers and state images are swept first), so each
task and trial index is journaled once.
"""

from __future__ import annotations

import platform
import re
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_text_atomic
from benchwright.files.nofollow import remove_tree
from benchwright.harbor import containers as ct
from benchwright.harbor.base_images import resolve_bases
from benchwright.harbor.figures import METRIC, estimate_text, mean_reward, reward_counts
from benchwright.harbor.tasks import HarborTask, find_tasks
from benchwright.harbor.trial import Agent, TrialContext, TrialRecord, run_trial
from benchwright.llm.models import LlmTraffic
from benchwright.protocols import Executor
from benchwright.runs.clock import utc_now
from benchwright.runs.journal import append_record, read_jsonl
from benchwright.runs.layout import RunFiles
from benchwright.runs.manifest import read_manifest
from benchwright.stats.estimates import Estimate
from benchwright.version import __version__

JOURNAL = "trials.jsonl"
TRIALS = "trials"


class HarborRunConfig(BaseModel):
    """What `benchwright run harbor` was asked to do."""

    tasks: Path
    """A Harbor task folder, or a folder of them (absolute)."""
    agent: Literal["oracle", "command", "mini"] = "oracle"
    """oracle (each step's solution/solve.sh), command (`agent_command`) or mini."""
    agent_command: str | None = None
    """The command agent's shell command."""
    model: str | None = None
    """The mini agent's model."""
    base_url: str | None = None
    """The mini agent's OpenAI-compatible endpoint (its key from OPENAI_API_KEY)."""
    runtime: Literal["podman", "docker"] = "podman"
    """The container engine."""
    trials: int = Field(default=1, ge=1, le=1000)
    """Trials per task."""
    max_cost: float = Field(default=3.0, ge=0, allow_inf_nan=False)
    """The mini agent's spend allowed per step, US dollars (0: none), as `run coding
    --max-cost` per checkpoint; enforced only where the model's price is known."""
    price_in: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """US dollars per million prompt tokens, for a model benchwright has no price for."""
    price_out: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """US dollars per million generated tokens, likewise."""
    llm: LlmTraffic | None = None
    """The mini agent's model calls recorded into, or answered from, a cassette (one
    conversation per task, trial and step: docs/cassettes.md); None: straight to the model."""


class HarborManifest(BaseModel):
    """manifest.json of a Harbor run."""

    format: Literal["benchwright.harbor-run/1"] = "benchwright.harbor-run/1"
    """The manifest's format."""
    track: Literal["harbor"] = "harbor"
    """The owning track."""
    created_at: str
    """When the run started (UTC)."""
    benchwright_version: str
    """The version that started it."""
    environment: dict[str, str] = Field(default_factory=dict)
    """The machine."""
    run_id: str
    """Labels this run's state images (the sweep removes a killed trial's)."""
    config: HarborRunConfig
    """The run's configuration."""
    tasks: list[str]
    """The tasks' names, in run order."""
    base_images: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Per task, each image its Dockerfile starts FROM -> its id in the engine's store when the
    run was created (each trial record holds the ids it ran on)."""


class TaskSummary(BaseModel):
    """One task's trials."""

    task: str
    """The task's name."""
    trials: int
    """Trials journaled."""
    statuses: dict[str, int]
    """Trials per status (completed, verifier_error, infrastructure)."""
    mean_rewards: dict[str, float]
    """Per key, the mean over the trials that have rewards (a key a trial lacks: not counted)."""
    model_calls: int = 0
    """The mini agent's model calls over every step of every trial (0: no model was called)."""
    cost_usd: float | None = None
    """What those calls cost, US dollars; None: unknown (a model with no price) or no call."""


class HarborRunResult(BaseModel):
    """result.json of a Harbor run."""

    format: Literal["benchwright.harbor-result/1"] = "benchwright.harbor-result/1"
    """The result's format."""
    n_trials: int
    """Trials journaled."""
    n_completed: int
    """Trials whose steps all ran to a reward or a min_reward gate."""
    tasks: list[TaskSummary]
    """Per task."""
    run_dir: Path | None = None
    """The run folder (absolute)."""
    mean_reward: Estimate | None = None
    """The trials' mean `reward` with a 95% bootstrap interval resampling tasks (a trial whose
    verifier failed counts 0, an infrastructure one is left out: harbor/figures.py); None: no
    trial counted."""


def create_run(run_dir: Path, config: HarborRunConfig) -> HarborManifest:
    """A new run folder: the tasks read and checked first."""
    tasks = find_tasks(config.tasks)
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        raise UserInputError("two tasks have the same [task] name", path=config.tasks,
                             hint="give each task its own name")
    if config.agent == "command" and not config.agent_command:
        raise UserInputError("--agent command needs --agent-command",
                             hint="give the shell command the agent runs in each step")
    if config.agent == "mini" and not config.model:
        raise UserInputError("--agent mini needs --model",
                             hint="and --base-url for an OpenAI-compatible endpoint")
    if run_dir.exists() and any(not p.name.startswith(".") for p in run_dir.iterdir()):
        raise UserInputError("the run folder is not empty", path=run_dir,
                             hint="give a new --out, or continue it with --resume")
    engine = ct.engine_for(config.runtime)
    bases = {t.name: resolve_bases(engine, t.path / "environment" / "Dockerfile") for t in tasks}
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = HarborManifest(
        created_at=utc_now(), benchwright_version=__version__, run_id=secrets.token_hex(8),
        config=config, tasks=[t.name for t in tasks], base_images=bases,
        environment={"platform": platform.platform(), "python": sys.version.split()[0]})
    write_text_atomic(RunFiles(run_dir).manifest, manifest.model_dump_json(indent=2))
    return manifest


def load_manifest(run_dir: Path) -> HarborManifest:
    """The run's manifest."""
    return read_manifest(run_dir, HarborManifest, noun="harbor run",
                         command="benchwright run harbor", invalid="not a harbor run")


def journaled(run_dir: Path) -> list[TrialRecord]:
    """The finished trials."""
    return read_jsonl(run_dir / JOURNAL, TrialRecord)


def sweep(run_dir: Path) -> None:
    """A killed predecessor's leftovers: unjournaled trial folders, its state images."""
    manifest = load_manifest(run_dir)
    done = {_trial_folder(r.task, r.trial) for r in journaled(run_dir)}
    trials = run_dir / TRIALS
    if trials.is_dir() and not trials.is_symlink():
        for folder in trials.iterdir():
            if folder.name not in done:
                remove_tree(folder) if folder.is_dir() and not folder.is_symlink() \
                    else folder.unlink()
    ct.sweep_state_images(ct.engine_for(manifest.config.runtime), manifest.run_id)


@dataclass(frozen=True)
class TrialJob:
    """One trial to run, as the executor hands it to a worker (picklable)."""

    context: TrialContext
    """The task, its image, the agent and the trial's folder."""
    index: int
    """The trial's index."""


def execute(run_dir: Path, config: HarborRunConfig, executor: Executor) -> HarborRunResult:
    """Every trial the journal lacks (the tasks' images built first, in task order), run by
    `executor` at most its workers at once, each journaled here as it ends; then `finish`."""
    manifest = load_manifest(run_dir)
    engine = ct.engine_for(config.runtime)
    done = {(r.task, r.trial) for r in journaled(run_dir)}
    agent = Agent(config.agent, config.agent_command, config.model, config.base_url,
                  config.max_cost, config.price_in, config.price_out, config.llm)
    jobs = []
    for task in _tasks(config, manifest):
        todo = [i for i in range(config.trials) if (task.name, i) not in done]
        if not todo:
            continue
        dockerfile = task.path / "environment" / "Dockerfile"
        bases = resolve_bases(engine, dockerfile)  # what this build starts from, now
        image = ct.build_task_image(engine, dockerfile.parent)
        for index in todo:
            folder = run_dir / TRIALS / _trial_folder(task.name, index)
            jobs.append(TrialJob(TrialContext(engine, task, image, agent, folder,
                                              manifest.run_id, bases), index))
    for record in executor.run(run_trial_job, jobs):
        append_record(run_dir / JOURNAL, record)  # only here: one writer of the journal
    return finish(run_dir)


def run_trial_job(job: TrialJob) -> TrialRecord:
    """One trial in its own folder (in a worker of the executor)."""
    job.context.folder.mkdir(parents=True)
    return run_trial(job.context, job.index)


def finish(run_dir: Path) -> HarborRunResult:
    """result.json and report.md from the journal."""
    records = journaled(run_dir)
    names = list(dict.fromkeys(r.task for r in records))
    result = HarborRunResult(
        run_dir=run_dir.resolve(), n_trials=len(records),
        n_completed=sum(r.status == "completed" for r in records),
        mean_reward=mean_reward(reward_counts(records)),
        tasks=[_summary(name, [r for r in records if r.task == name]) for name in names])
    files = RunFiles(run_dir)
    write_text_atomic(files.result_json, result.model_dump_json(indent=2))
    write_text_atomic(files.report_md, render(result))
    return result


def render(result: HarborRunResult) -> str:
    """report.md: per task, trials by status and the mean of each reward key."""
    lines = ["# Harbor run", "", f"- trials: {result.n_trials} ({result.n_completed} completed)",
             f"- {METRIC} (95% CI, tasks resampled): {estimate_text(result.mean_reward)}", "",
             "| task | trials | statuses | mean rewards | model cost |", "|---|---|---|---|---|"]
    for task in result.tasks:
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(task.statuses.items()))
        rewards = ", ".join(f"{k} {v:.3f}" for k, v in sorted(task.mean_rewards.items()))
        lines.append(f"| {task.task} | {task.trials} | {statuses} | {rewards or 'unknown'} | "
                     f"{_cost(task)} |")
    return "\n".join(lines) + "\n"


def _summary(name: str, records: list[TrialRecord]) -> TaskSummary:
    statuses: dict[str, int] = {}
    for record in records:
        statuses[record.status] = statuses.get(record.status, 0) + 1
    keyed: dict[str, list[float]] = {}
    for record in records:
        for key, value in (record.rewards or {}).items():
            keyed.setdefault(key, []).append(value)
    usages = [s.agent_usage for r in records for s in r.steps if s.agent_usage is not None]
    costs = [u.cost_usd for u in usages]
    return TaskSummary(task=name, trials=len(records), statuses=statuses,
                       mean_rewards={k: sum(v) / len(v) for k, v in keyed.items()},
                       model_calls=sum(u.steps for u in usages),
                       cost_usd=None if not costs or None in costs
                       else round(sum(c or 0.0 for c in costs), 8))


def _cost(task: TaskSummary) -> str:
    if not task.model_calls:
        return "no model calls"
    cost = "unknown" if task.cost_usd is None else f"${task.cost_usd:.4f}"
    return f"{cost} ({task.model_calls} calls)"


def _tasks(config: HarborRunConfig, manifest: HarborManifest) -> list[HarborTask]:
    tasks = find_tasks(config.tasks)
    if [t.name for t in tasks] != manifest.tasks:
        raise UserInputError("the tasks folder changed since the run started", path=config.tasks,
                             hint="restore it, or start a new run")
    return tasks


def _trial_folder(task: str, index: int) -> str:
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', task)}__{index}"
