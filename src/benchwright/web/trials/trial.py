"""One trial: a fresh folder, the runner's attempt, then agent_response.json, metrics.json and
the steps as ATIF (trajectory.atif.json).

A runner that raises is the harness's failure, not the agent's: the trial is an infrastructure
error (status infra_error, its error in infra_error.json, no agent_response.json), left out of
scores and redone by `--resume`; never a crashed run. The trial is journaled by the caller only
after its files are written.
"""

from __future__ import annotations

import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

from benchwright.files.atomic import write_json_atomic
from benchwright.runs.clock import utc_now
from benchwright.web.evaluation.final_response import INVALID_RESPONSE, ResponseSource
from benchwright.web.evaluation.response_adapter import (
    AdaptedResponse,
    AgentResponse,
    AnswerInput,
    Extractor,
    OutcomeKind,
    ParseMethod,
    ResponseStatus,
    adapt,
)
from benchwright.web.evaluation.scoring import AGENT_RESPONSE, INFRA_ERROR, METRICS, TRIAL_PREFIX
from benchwright.web.evaluation.tasks import WebTask
from benchwright.web.trials.models import (
    AgentSpec,
    TrialMetrics,
    TrialOutcome,
    TrialRecord,
    TrialRequest,
    TrialStatus,
)
from benchwright.web.trials.scheduling import TrialJob
from benchwright.web.trials.trial_atif import TrialIdentity, write_trial_atif
from benchwright.web.trials.trial_runner import TrialRunner

INFRA_ERROR_FORMAT = "benchwright.web-infra-error/1"
_KIND = {TrialStatus.COMPLETED: OutcomeKind.ANSWERED,
         TrialStatus.STEP_LIMIT: OutcomeKind.STEP_LIMIT}


def fresh_dir(path: Path) -> Path:
    """An empty folder at `path` (whatever a killed attempt left there is discarded)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def attempt(runner: TrialRunner, request: TrialRequest) -> TrialOutcome:
    """The runner's outcome; an exception (the runner, the browser, the HAR writer, a module
    missing on the node: the harness) becomes an infrastructure error."""
    started = time.monotonic()
    try:
        return runner.run_trial(request)
    except Exception as exc:  # a broken trial must not end the other trials of the run
        return TrialOutcome(status=TrialStatus.INFRA_ERROR,
                            errors=[f"harness: {type(exc).__name__}: {exc}"],
                            duration_s=time.monotonic() - started)


def answer_input(outcome: TrialOutcome) -> AnswerInput:
    """What the response adapter needs from an outcome."""
    return AnswerInput(kind=_KIND.get(outcome.status, OutcomeKind.FAILED),
                       final_text=outcome.final_text, agent_success=outcome.agent_success,
                       errors=outcome.errors)


def response_of(task: WebTask, outcome: TrialOutcome,
                extractor: Extractor | None) -> tuple[AdaptedResponse, ResponseSource]:
    """The agent's validated final response as it is, else the adapter's reading."""
    if outcome.structured_response is not None:
        try:
            response = AgentResponse.model_validate(outcome.structured_response)
            return (AdaptedResponse(response=response, method=ParseMethod.RESPONSE),
                    ResponseSource.SCHEMA)
        except ValueError:
            pass  # a runner's malformed response: the adapter reads the text instead
    return adapt(task, answer_input(outcome), extractor), ResponseSource.ADAPTER


def write_trial_files(folder: Path, task: WebTask, outcome: TrialOutcome,
                      extractor: Extractor | None = None) -> AdaptedResponse:
    """agent_response.json and metrics.json of a finished attempt."""
    adapted, source = response_of(task, outcome, extractor)
    write_json_atomic(folder / AGENT_RESPONSE, adapted.response.model_dump(mode="json"))
    metrics = TrialMetrics(
        steps=outcome.steps, tokens=outcome.input_tokens + outcome.output_tokens,
        input_tokens=outcome.input_tokens, output_tokens=outcome.output_tokens,
        cached_input_tokens=outcome.cached_input_tokens, cost_usd=outcome.cost_usd,
        duration_s=outcome.duration_s,
        model_time_s=outcome.model_time_s, harness_s=outcome.harness_s, trial_status=outcome.status,
        errors=outcome.errors + adapted.notes, response_status=adapted.response.status,
        answer_parse=adapted.method, answer_ambiguous=adapted.ambiguous,
        response_source=source, agent_error=agent_error(outcome),
        refused_requests=outcome.refused_requests)
    write_json_atomic(folder / METRICS, metrics.model_dump(mode="json"))
    return adapted


def agent_error(outcome: TrialOutcome) -> str | None:
    """The named reason of an agent error: its invalid final response, if that was it."""
    if outcome.status is not TrialStatus.AGENT_ERROR:
        return None
    return next((e for e in outcome.errors if e.startswith(INVALID_RESPONSE)), None)


def _atif(request: TrialRequest, job: TrialJob, outcome: TrialOutcome) -> None:
    write_trial_atif(request.trial_dir, f"{job.task.task_id}/{TRIAL_PREFIX}{job.trial}",
                     TrialIdentity(request.agent.name, request.agent.model, request.task.intent,
                                   outcome.final_text),
                     outcome.step_usage, None)


def run_trial_files(runner: TrialRunner, request: TrialRequest, job: TrialJob,
                    extractor: Extractor | None, reset_before: frozenset[str]) -> TrialRecord:
    """Run one trial into its (fresh) folder and return its journal record."""
    started_at = precise_now()
    fresh_dir(request.trial_dir)
    outcome = attempt(runner, request)
    if outcome.status is TrialStatus.INFRA_ERROR:  # no attempt of the agent's to score
        write_json_atomic(request.trial_dir / INFRA_ERROR, {
            "format": INFRA_ERROR_FORMAT, "errors": outcome.errors[:20],
            "duration_s": outcome.duration_s})
        status = ResponseStatus.UNKNOWN_ERROR
    else:
        status = write_trial_files(request.trial_dir, request.task, outcome,
                                   extractor).response.status
    # the trial's steps in ATIF; the caller's sweep redacts it with the trial's other files.
    # A harness failure before any step has no trajectory: an ATIF file would show an agent run.
    if outcome.status is not TrialStatus.INFRA_ERROR or outcome.steps:
        _atif(request, job, outcome)
    return TrialRecord(
        task_id=job.task.task_id, trial=job.trial, group=job.task.group, status=outcome.status,
        response_status=status, steps=outcome.steps,
        duration_s=outcome.duration_s, reset_before=sorted(reset_before), finished_at=utc_now(),
        started_at=started_at, ended_at=precise_now())


def precise_now() -> str:
    """Now, in UTC, ISO 8601 to the microsecond (trials of a site may overlap by less than a
    second, and their order is checked from these)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def agent_for(spec: AgentSpec, script: Path | None) -> AgentSpec:
    """The run's agent with this task's script."""
    return spec.model_copy(update={"script": script})
