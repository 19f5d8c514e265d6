"""A web run's model traffic through the recording proxy (`--llm-record`/`--llm-replay`): one
proxy per trial, the agent's model pointed at it, the trial one conversation
(`web/TASK/trial_N`). The sites' URLs and hosts (new ports each run) and the trial's folder
are matched as placeholders."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from benchwright.errors import ReplayDivergence, UserInputError
from benchwright.files.atomic import write_json_atomic
from benchwright.llm.models import TrafficMode
from benchwright.llm.proxy import LlmProxy
from benchwright.llm.replay_keys import set_placeholder_keys
from benchwright.web.evaluation.response_adapter import ResponseStatus
from benchwright.web.evaluation.scoring import AGENT_RESPONSE, INFRA_ERROR, METRICS
from benchwright.web.trials.models import TrialRecord, TrialRequest, TrialStatus, WebRunConfig
from benchwright.web.trials.trial import INFRA_ERROR_FORMAT

OPENAI_URL = "https://api.openai.com/v1"


def prepare_traffic(config: WebRunConfig) -> None:
    """Refuse what a cassette cannot hold; a replay's agent gets a placeholder key."""
    if config.llm is None:
        return
    if config.extractor is not None:
        raise UserInputError("--extract-model cannot be combined with --llm-record/--llm-replay",
                             hint="leave --extract-model out (the adapter then reads answers "
                             "without a model)")
    if config.llm.mode is TrafficMode.REPLAY:
        set_placeholder_keys(names=(config.agent.api_key_env,))


@contextmanager
def trial_traffic(config: WebRunConfig, request: TrialRequest
                  ) -> Iterator[tuple[TrialRequest, list[ReplayDivergence]]]:
    """The trial's request with its model behind the proxy, and the list holding the replay's
    divergence once the trial is over (empty: none). No cassette: the request as it is."""
    if config.llm is None or request.agent.name == "scripted":
        yield request, []
        return
    upstream = request.agent.base_url or OPENAI_URL
    recording = config.llm.mode is TrafficMode.RECORD
    key = f"web/{request.task.task_id}/{request.trial_dir.name}"
    paths = {"<trial>": str(request.trial_dir),
             **{f"<site:{name}>": url.rstrip("/") for name, url in request.site_urls.items()},
             **{f"<host:{name}>": urlsplit(url).netloc for name, url in request.site_urls.items()}}
    with LlmProxy(config.llm, upstream if recording else None, request.agent.name,
                  request.agent.model) as proxy, proxy.session(key, paths) as diverged:
        agent = request.agent.model_copy(update={"base_url": proxy.url_for(upstream)})
        yield request.model_copy(update={"agent": agent}), diverged


def diverged_trial(trial_dir: Path, record: TrialRecord,
                   divergence: ReplayDivergence) -> TrialRecord:
    """A trial whose replay diverged, as the infrastructure error it is: its answer and
    metrics (made from the refusal the proxy sent) removed, infra_error.json naming the
    divergence; journaled so, it is left out of the scores and run again on resume."""
    for name in (AGENT_RESPONSE, METRICS):
        (trial_dir / name).unlink(missing_ok=True)
    write_json_atomic(trial_dir / INFRA_ERROR, {
        "format": INFRA_ERROR_FORMAT, "errors": [divergence.one_line()],
        "duration_s": record.duration_s})
    return record.model_copy(update={"status": TrialStatus.INFRA_ERROR,
                                     "response_status": ResponseStatus.UNKNOWN_ERROR})
