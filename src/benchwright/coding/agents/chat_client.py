"""An OpenAI-compatible chat client for in-process agents (`mini`).

The provider comes from the model name's prefix (`anthropic/claude-sonnet-4-5`, `gemini/...`,
`openrouter/...`, else OpenAI), each through its OpenAI-compatible endpoint; the API key comes
from the environment only (`BENCHWRIGHT_LLM_API_KEY`, else the provider's variable). Calls that
hit a 429, a 5xx, a timeout, a dropped connection or a broken reply are retried with exponential
backoff (honouring `retry-after`); when they keep failing, `ProviderUnavailable` is raised: an
infrastructure error, not the agent's.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchwright.coding.agents.settings import AgentSettings
from benchwright.errors import (
    PrerequisiteError,
    ProviderUnavailable,
    UserInputError,
    missing_extra,
)

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletion

KEY_OVERRIDE = "BENCHWRIGHT_LLM_API_KEY"
MAX_WAIT_S = 60.0


@dataclass(frozen=True)
class Provider:
    """An OpenAI-compatible endpoint and the variable holding its key."""

    base_url: str | None
    key_env: str


PROVIDERS = {
    "openai": Provider(None, "OPENAI_API_KEY"),
    "anthropic": Provider("https://api.anthropic.com/v1/", "ANTHROPIC_API_KEY"),
    "gemini": Provider("https://generativelanguage.googleapis.com/v1beta/openai/",
                       "GEMINI_API_KEY"),
    "openrouter": Provider("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
}


@dataclass(frozen=True)
class Target:
    """Where a model's calls go."""

    model: str
    """The model name the provider expects (prefix removed)."""
    base_url: str | None
    key_env: str


def resolve_target(model: str, base_url: str | None) -> Target:
    """The endpoint and key variable for `model` (a `--base-url` overrides the endpoint)."""
    prefix, _, rest = model.partition("/")
    provider = PROVIDERS.get(prefix) if rest else None
    if provider is None:
        return Target(model, base_url, PROVIDERS["openai"].key_env)
    return Target(rest, base_url or provider.base_url, provider.key_env)


def api_key(target: Target, environ: Mapping[str, str]) -> str:
    """The key from the environment, or an error naming the variable to set."""
    key = environ.get(KEY_OVERRIDE) or environ.get(target.key_env)
    if not key:
        raise PrerequisiteError(f"no API key for model {target.model!r}",
                                hint=f"export {target.key_env}=... (or {KEY_OVERRIDE})")
    return key


class ChatClient:
    """Chat Completions calls with the harness's retry policy."""

    def __init__(self, target: Target, settings: AgentSettings,
                 environ: Mapping[str, str] = os.environ,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.target, self.settings, self.sleep = target, settings, sleep
        self.client = _openai_client(target, api_key(target, environ), settings)

    def complete(self, messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]]) -> ChatCompletion:
        """One model reply; raises ProviderUnavailable once the retries are spent."""
        attempts = self.settings.llm_retries + 1
        for attempt in range(attempts):
            try:
                return self.client.chat.completions.create(
                    model=self.target.model, messages=messages,  # type: ignore[arg-type]
                    tools=tools, **self._thinking())  # type: ignore[arg-type]
            except Exception as exc:
                if not is_transient(exc):
                    raise
                if attempt + 1 == attempts:
                    raise ProviderUnavailable(
                        f"the model provider kept failing: {describe(exc)} "
                        f"(after {attempts} attempts)") from None
                self.sleep(self._wait(attempt, exc))
        raise AssertionError("unreachable")

    def _thinking(self) -> dict[str, Any]:
        effort = reasoning_effort(self.settings.thinking_budget)
        return {} if effort is None else {"reasoning_effort": effort}

    def _wait(self, attempt: int, exc: Exception) -> float:
        backoff = self.settings.retry_backoff_s * 2.0 ** attempt
        return min(MAX_WAIT_S, max(backoff, _retry_after(exc)))


def _openai_client(target: Target, key: str, settings: AgentSettings) -> OpenAI:
    try:
        import openai
    except ImportError:
        raise missing_extra("the mini agent needs the openai package", "mini") from None
    if target.base_url is not None and not target.base_url.startswith(("http://", "https://")):
        raise UserInputError(f"not an http(s) URL: {target.base_url!r}",
                             hint="pass --base-url http://HOST:PORT/v1")
    import httpx

    # idle connections kept without expiry: httpcore's pool closes an expired one without a
    # lock, under a request just assigned to it (benchwright/judge/providers.py, _http_client)
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20,
                          keepalive_expiry=None)
    return openai.OpenAI(api_key=key, base_url=target.base_url, max_retries=0,
                         timeout=settings.request_timeout_s,
                         http_client=openai.DefaultHttpxClient(limits=limits))


def reasoning_effort(budget: int | None) -> str | None:
    """A thinking budget as the `reasoning_effort` level OpenAI-compatible endpoints take."""
    if budget is None:
        return None
    if budget == 0:
        return "minimal"
    return "low" if budget <= 4096 else "medium" if budget <= 16384 else "high"


def is_transient(exc: Exception) -> bool:
    """A failure of the provider or the network, worth retrying."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | openai.APIResponseValidationError
                      | json.JSONDecodeError)


def describe(exc: Exception) -> str:
    """One line naming the failure (an HTTP status when there is one)."""
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    text = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{kind}{f' (HTTP {status})' if status else ''}: {text}"


def _retry_after(exc: Exception) -> float:
    response = getattr(exc, "response", None)
    value: str | None = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value or 0))
    except ValueError:
        return 0.0
