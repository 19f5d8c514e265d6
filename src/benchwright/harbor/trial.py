"""One trial of a Harbor task: its steps in order, each an agent phase and a verifier phase in
containers of their own (`harbor.containers`), the rewards read and gated as Harbor does
(`harbor.rewards`), the outcome a `TrialRecord`.

What benchwright adds to Harbor's default (docs/harbor.md): no process the agent started is
alive when the verifier runs (its container has ended); the tests enter only the verifier's
container, after the agent's has ended; the reward is read from a host folder mounted into the
verifier's container alone. A verifier that writes no reward or runs out of time is Harbor's
failure (the step's error, the trial stops: `verifier_error`); a container the engine could not
make, copy into or keep is an infrastructure error (`infrastructure`), said so in the record.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from benchwright.coding.agents.base import Usage
from benchwright.errors import GradingInfrastructureError, UserInputError
from benchwright.files.nofollow import read_regular
from benchwright.harbor import containers as ct
from benchwright.harbor.rewards import (
    Rewards,
    VerifierFailed,
    min_reward_failure,
    read_rewards,
    trial_rewards,
)
from benchwright.harbor.tasks import HarborTask, StepSpec
from benchwright.llm.models import LlmTraffic
from benchwright.sandbox.images.engines import Engine

TrialStatus = Literal["completed", "verifier_error", "infrastructure"]
StepStatus = Literal["verified", "verifier_error", "infrastructure"]
MAX_INSTRUCTION_BYTES = 4 << 20
VERIFY = ("chmod +x /tests/test.sh 2>/dev/null; mkdir -p /logs/verifier; "
          "bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1")


class StepRecord(BaseModel):
    """One step of a trial."""

    name: str
    """The step's name (`main` for a single-step task)."""
    status: StepStatus
    """verified (rewards read), verifier_error (Harbor's failure: no reward, timeout),
    infrastructure (the engine failed us)."""
    rewards: dict[str, float] | None
    """What the verifier wrote; None unless verified."""
    error: str | None = None
    """Why the step has no rewards."""
    agent_exit_code: int | None = None
    """The agent command's exit status (None: timed out or never ran)."""
    agent_timed_out: bool = False
    """The agent's timeout ended it (Harbor verifies such a step all the same)."""
    gate: str | None = None
    """The step's min_reward failure that ended the trial, if any."""
    agent_usage: Usage | None = None
    """What a model-calling agent (mini) spent in the step: tokens, calls and cost (None: an
    agent that calls no model; a cost of None: unknown, the model has no price)."""
    agent_error: str | None = None
    """Why a model-calling agent's turn ended early (its cost or step limit, the provider)."""


class TrialRecord(BaseModel):
    """One finished trial: the run's journal holds exactly one per task and trial index."""

    task: str
    """The task's name."""
    trial: int
    """The trial's index, from 0."""
    status: TrialStatus
    """completed (every step verified, or stopped by a min_reward gate), verifier_error,
    infrastructure."""
    rewards: dict[str, float] | None
    """The trial's reward as Harbor computes it (mean or final over the steps); None: none."""
    steps: list[StepRecord]
    """The steps that ran, in order."""
    image: str
    """The id of the task image the trial started from."""
    base_images: dict[str, str] = {}
    """Each image the task's Dockerfile starts FROM -> its id (content digest) in the engine's
    store when the trial's image was built (empty in runs made before it was recorded)."""


@dataclass
class Agent:
    """What runs in a step's agent phase: the oracle (solution/solve.sh) or a shell command."""

    name: str
    """`oracle`, `command` or `mini`."""
    command: str | None = None
    """The command agent's shell command (its instruction in $BENCHWRIGHT_INSTRUCTION)."""
    model: str | None = None
    """The mini agent's model."""
    base_url: str | None = None
    """The mini agent's OpenAI-compatible endpoint."""
    max_cost: float = 3.0
    """The mini agent's spend allowed per step, US dollars (0: none)."""
    price_in: float | None = None
    """US dollars per million prompt tokens (None: the price table's)."""
    price_out: float | None = None
    """US dollars per million generated tokens (None: the price table's)."""
    llm: LlmTraffic | None = None
    """The mini agent's calls recorded into or replayed from a cassette (None: neither)."""


@dataclass
class TrialContext:
    """Everything a trial needs."""

    engine: Engine
    task: HarborTask
    image: str
    agent: Agent
    folder: Path
    run_id: str
    base_images: dict[str, str] = field(default_factory=dict)
    made: list[str] = field(default_factory=list)


def run_trial(ctx: TrialContext, index: int) -> TrialRecord:
    """Every step of the trial, then the state images removed."""
    steps: list[StepRecord] = []
    state = ctx.image
    try:
        for step in ctx.task.steps:
            record, state = _step(ctx, step, state)
            steps.append(record)
            if record.status != "verified":
                break
            record.gate = min_reward_failure(record.rewards, step.min_reward)
            if record.gate is not None:
                break
    finally:
        ct.remove_images(ctx.engine, ctx.made)
    status: TrialStatus = next((s.status for s in steps if s.status != "verified"),
                               "completed")
    return TrialRecord(task=ctx.task.name, trial=index, status=status, steps=steps,
                       rewards=trial_rewards([s.rewards for s in steps], ctx.task.strategy),
                       image=ctx.image, base_images=ctx.base_images)


def _step(ctx: TrialContext, step: StepSpec, state: str) -> tuple[StepRecord, str]:
    folder = ctx.folder / "steps" / step.name
    folder.mkdir(parents=True, exist_ok=True)
    try:
        agent, after = _agent_phase(ctx, step, state, folder)
        rewards = _verify(ctx, step, after, folder)
    except GradingInfrastructureError as exc:
        return StepRecord(name=step.name, status="infrastructure", rewards=None,
                          error=exc.message), state
    except VerifierFailed as exc:
        return StepRecord(name=step.name, status="verifier_error", rewards=None,
                          error=str(exc), agent_exit_code=agent.exit_code,
                          agent_timed_out=agent.timed_out, agent_usage=agent.usage,
                          agent_error=agent.error), after
    return StepRecord(name=step.name, status="verified", rewards=rewards,
                      agent_exit_code=agent.exit_code, agent_timed_out=agent.timed_out,
                      agent_usage=agent.usage, agent_error=agent.error), after


def _agent_phase(ctx: TrialContext, step: StepSpec, state: str, folder: Path
                 ) -> tuple[ct.PhaseResult, str]:
    """The agent's phase in a new container from `state`; its files kept as the next state."""
    command = ("bash /solution/solve.sh" if ctx.agent.name == "oracle"
               else "exec sleep infinity" if ctx.agent.name == "mini"
               else ctx.agent.command or "true")
    env = {**ctx.task.env, "BENCHWRIGHT_INSTRUCTION": "/logs/agent/instruction.md"}
    name = ct.create(ctx.engine, state, ["bash", "-c", command], user=step.agent_user,
                     workdir=ctx.task.workdir, env=env)
    try:
        _agent_inputs(ctx, step, name)
        if ctx.agent.name == "mini":
            result = _mini(ctx, step, name, folder)
        else:
            result = ct.start(ctx.engine, name, step.agent_timeout_s, folder / "agent.log")
        after = ct.commit(ctx.engine, name, ctx.run_id)
        ctx.made.append(after)
    finally:
        ct.remove(ctx.engine, name)
    return result, after


def _mini(ctx: TrialContext, step: StepSpec, name: str, folder: Path) -> ct.PhaseResult:
    """The mini agent's loop, its commands run in the idle container, which is then killed
    with everything in it."""
    from benchwright.coding.agents.atif import write_atif
    from benchwright.coding.agents.settings import AgentSettings
    from benchwright.harbor.mini_phase import mini_traffic, run_mini

    spec = ctx.agent
    settings = AgentSettings(base_url=spec.base_url, cost_limit_usd=spec.max_cost,
                             input_price_per_mtok=spec.price_in,
                             output_price_per_mtok=spec.price_out)
    ct.start_idle(ctx.engine, name)
    try:
        with mini_traffic(spec.llm, spec.model or "", settings,
                          f"harbor/{ctx.folder.name}/{step.name}") as (settings, diverged):
            result = run_mini(ctx.engine, name, ctx.task.workdir,
                              _instruction(ctx.task, step).decode(errors="replace"),
                              folder / "agent", step.name, spec.model or "", settings,
                              continuation=step is not ctx.task.steps[0])
    finally:
        ct.stop(ctx.engine, name)
    if diverged:  # the cassette has no answer: the harness's failure, not the agent's
        raise GradingInfrastructureError(diverged[0].message)
    if result.status == "infra_error":  # the provider failed after retries, not the agent
        raise GradingInfrastructureError(result.error or "the model provider failed")
    # beside it, as the coding track writes one per checkpoint (skipped without the extra)
    write_atif(folder / "agent", f"{ctx.folder.name}/steps/{step.name}")
    return ct.PhaseResult(exit_code=0 if result.status == "completed" else 1, timed_out=False,
                          usage=result.usage, error=result.error)


def _agent_inputs(ctx: TrialContext, step: StepSpec, name: str) -> None:
    """The instruction at /logs/agent, the step's workdir files, the oracle's solution."""
    with tempfile.TemporaryDirectory(prefix="bw-harbor-") as scratch:
        staged = Path(scratch) / "logs"
        (staged / "agent").mkdir(parents=True)
        (staged / "agent" / "instruction.md").write_bytes(_instruction(ctx.task, step))
        ct.copy_in(ctx.engine, name, staged, "/", contents=False)
    files = ctx.task.workdir_files(step)
    if files is not None:
        ct.copy_in(ctx.engine, name, files, ctx.task.workdir or "/")
    solution = ctx.task.solution(step)
    if ctx.agent.name == "oracle" and solution is not None:
        ct.copy_in(ctx.engine, name, solution, "/solution")


def _instruction(task: HarborTask, step: StepSpec) -> bytes:
    """The step's instruction.md, read through no link (a task folder is hostile)."""
    rel = task.instruction(step).relative_to(task.path).as_posix()
    data = read_regular(task.path, rel, MAX_INSTRUCTION_BYTES + 1)
    if data is None or len(data) > MAX_INSTRUCTION_BYTES:
        raise UserInputError("instruction.md is missing, a link, special or over 4 MiB",
                             path=task.instruction(step), hint="give the step a plain "
                             "instruction.md")
    return data


def _verify(ctx: TrialContext, step: StepSpec, after: str, folder: Path) -> Rewards:
    """The verifier in its own container; the rewards from the host folder it alone had."""
    logs = folder / "verifier"
    logs.mkdir()
    logs.chmod(0o777)  # the verifier's user, whoever the task names, writes here
    image = ctx.image if step.separate else after
    name = ct.create(ctx.engine, image, ["bash", "-c", VERIFY], user=step.verifier_user,
                     mounts=[(logs, "/logs/verifier")], env=dict(ctx.task.env))
    try:
        if step.separate:
            _artifacts(ctx, after, name)
        for tests in ctx.task.test_folders(step):
            ct.copy_in(ctx.engine, name, tests, "/tests")
        result = ct.start(ctx.engine, name, step.verifier_timeout_s, folder / "verifier.log")
    finally:
        ct.remove(ctx.engine, name)
    if result.timed_out:
        raise VerifierFailed(f"the verifier ran past its {step.verifier_timeout_s:g} s")
    return read_rewards(logs)


def _artifacts(ctx: TrialContext, after: str, verifier: str) -> None:
    """A separate verifier's artifacts, copied from the agent's files (never its processes)."""
    holder = ct.create(ctx.engine, after, ["true"])
    try:
        for path in ctx.task.artifacts:
            if path.startswith("/"):
                ct.copy_between(ctx.engine, holder, verifier, path)
    finally:
        ct.remove(ctx.engine, holder)
