"""A coding run's model traffic through the recording proxy (`--llm-record`/`--llm-replay`):
one proxy per attempt, the agent pointed at it, one conversation per checkpoint's agent session
(`coding/PROBLEM/trial_N/CHECKPOINT/attempt_K`, K counting re-runs after infrastructure errors);
and `metrics judge`'s, one conversation `judge`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchwright.coding.agents.chat_client import resolve_target
from benchwright.coding.attempts.models import RunConfig
from benchwright.errors import ReplayDivergence
from benchwright.judge.models import JudgeSettings
from benchwright.llm.models import LlmTraffic, TrafficMode
from benchwright.llm.proxy import LlmProxy
from benchwright.llm.replay_keys import set_placeholder_keys

# Where each CLI agent's calls go when no --base-url is given (mini: its model's provider).
PROVIDER_URLS = {"claude_code": "https://api.anthropic.com", "codex": "https://api.openai.com/v1",
                 "gemini": "https://generativelanguage.googleapis.com",
                 "anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
JUDGE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


def replaying(config: RunConfig) -> bool:
    """Whether the run's model calls are answered from a cassette."""
    return config.llm is not None and config.llm.mode is TrafficMode.REPLAY


def endpoint_of(config: RunConfig) -> str | None:
    """The endpoint the run's agent would call: `--base-url`, else its provider's."""
    if config.agent_settings.base_url:
        return config.agent_settings.base_url
    if config.agent == "mini" and config.model:
        return resolve_target(config.model, None).base_url or PROVIDER_URLS["openai"]
    prefix = (config.model or "").partition("/")[0]
    return PROVIDER_URLS.get(config.agent) or PROVIDER_URLS.get(prefix)


@contextmanager
def attempt_proxy(config: RunConfig) -> Iterator[tuple[LlmProxy | None, RunConfig]]:
    """The attempt's proxy (None without --llm-record/--llm-replay) and the configuration
    whose agent calls it."""
    if config.llm is None:
        yield None, config
        return
    upstream = endpoint_of(config)
    if config.llm.mode is TrafficMode.REPLAY:
        set_placeholder_keys()
    with LlmProxy(config.llm, upstream if config.llm.mode is TrafficMode.RECORD else None,
                  config.agent, config.model) as proxy:
        settings = config.agent_settings.model_copy(update={"base_url": proxy.url_for(upstream)})
        yield proxy, config.model_copy(update={"agent_settings": settings})


@contextmanager
def agent_session(proxy: LlmProxy | None, key: str, paths: dict[str, Path]
                  ) -> Iterator[list[ReplayDivergence]]:
    """One checkpoint's agent session as conversation `key` (`LlmProxy.session`); nothing
    without a proxy."""
    if proxy is None:
        yield []
        return
    with proxy.session(key, paths) as diverged:
        yield diverged


@contextmanager
def judge_proxy(settings: JudgeSettings, traffic: LlmTraffic | None, run_dir: Path
                ) -> Iterator[str | None]:
    """The endpoint the judge's client calls instead of its own (None: its own), all of a
    judging one conversation, `judge`; a replay that diverged raises once judging ends."""
    if traffic is None:
        yield None
        return
    upstream = settings.base_url or JUDGE_URLS[settings.protocol]
    recording = traffic.mode is TrafficMode.RECORD
    if not recording:
        set_placeholder_keys()
    with LlmProxy(traffic, upstream if recording else None, "judge", settings.model) as proxy:
        proxy.begin("judge", {"<run>": str(run_dir)})
        try:
            yield proxy.url_for(upstream)
        except BaseException:
            proxy.end()
            raise
        diverged = proxy.end()
    if diverged is not None:
        raise diverged
