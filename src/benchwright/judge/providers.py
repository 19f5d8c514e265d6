"""The judge's two wire protocols, through the providers' own SDKs (`benchwright[judge]`).

- `openai`: Chat Completions with `response_format` `json_schema` (strict), for OpenAI and any
  compatible endpoint (OpenRouter, vLLM, Ollama); the cost is the reply's `usage.cost` where the
  endpoint reports one (OpenRouter does), else the price table's.
- `anthropic`: the Messages API with one forced tool whose input schema is the reply's; the
  prefix is marked for prompt caching; the cost comes from the price table; the temperature is
  sent only when given (the model's own otherwise).

Each call is one request, no retry (the caller retries); SDK errors become ours: `Transient`
(429, 5xx, timeouts, dropped connections), `BrokenReply` (a body that is not the protocol's
JSON), `Refused` (any other 4xx; `fatal` for 401/403/404: no request can succeed).
"""

from __future__ import annotations

import importlib
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, get_args

from pydantic import BaseModel

from benchwright.errors import PrerequisiteError, UserInputError
from benchwright.extras import import_extra
from benchwright.judge.models import JudgeSettings, TokenUsage
from benchwright.llm.pricing import price_of
from benchwright.llm.urls import require_reachable

SYSTEM = ("You are a careful code reviewer. You report, through the structured answer you are "
          "given, every place in the code where an item of the rubric applies, and nothing "
          "else.")
TOOL = "report_flags"
_FATAL = (401, 403, 404)


class Transient(Exception):
    """A failure worth retrying; `retry_after` is the provider's wait in seconds, if it said."""

    def __init__(self, message: str, retry_after: float = 0.0,
                 unreachable: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable
        """No connection could be made (not a timeout): kept so after the retries, no other
        request of the judging can succeed either."""


class BrokenReply(Exception):
    """A reply whose body is not the protocol's JSON (treated as an invalid reply)."""


class Refused(Exception):
    """The provider refused the request (a 4xx other than 408/409/429)."""

    def __init__(self, message: str, fatal: bool) -> None:
        super().__init__(message)
        self.fatal = fatal


@dataclass(frozen=True)
class Exchange:
    """One reply: what it answered, the raw response, tokens and the provider's cost."""

    payload: str | dict[str, Any] | None
    """The answer: JSON text (openai) or the tool's input (anthropic); None when absent."""
    raw: dict[str, Any]
    """The whole response as the provider sent it (for raw_rubric.json)."""
    usage: TokenUsage
    """Tokens."""
    cost_usd: float | None
    """The provider's own figure, when it reports one."""


class JudgeClient(Protocol):
    """One protocol's client."""

    def require_reachable(self) -> None:
        """Raise InfrastructureError when no connection can be made to the endpoint."""
        ...

    def ask(self, prefix: str, criteria: str, schema: dict[str, Any]) -> Exchange:
        """One request; raises Transient, BrokenReply or Refused."""
        ...


def make_client(settings: JudgeSettings, environ: Mapping[str, str] = os.environ) -> JudgeClient:
    """The client for the settings' protocol and endpoint, with the key from the environment."""
    if settings.base_url is not None and not settings.base_url.startswith(("http://",
                                                                           "https://")):
        raise UserInputError(f"not an http(s) URL: {settings.base_url!r}",
                             hint="pass --base-url http://HOST:PORT/v1")
    key = api_key(settings, environ)
    if settings.protocol == "anthropic":
        return AnthropicClient(settings, key)
    return OpenAIClient(settings, key)


def api_key(settings: JudgeSettings, environ: Mapping[str, str]) -> str:
    """The key; a missing one is an error, except for a `--base-url` endpoint when no variable
    was named (a local server may need none: it gets a placeholder, and a 401 would say
    otherwise). A variable named with --api-key-env must be set."""
    key = environ.get(settings.key_env)
    if key:
        return key
    if settings.base_url is not None and settings.api_key_env is None:
        return "no-key"
    raise PrerequisiteError(f"no API key for the judge: {settings.key_env} is not set",
                            hint=f"export {settings.key_env}=... (or name another variable "
                            "with --api-key-env)")


def price_cost(model: str, usage: TokenUsage) -> float | None:
    """The price table's cost of these tokens (cached prompt tokens at the full price: an
    upper bound); None when the model has no price."""
    price = price_of(model)
    return None if price is None else price.cost(usage.input_tokens, usage.output_tokens)


class _SDKClient:
    """One SDK's client for the settings' endpoint, without the SDK's own retries."""

    sdk_name, client_class = "", ""
    reply_model = ("", "")
    """The module and name of the SDK's model of a reply."""

    def __init__(self, settings: JudgeSettings, key: str) -> None:
        self.sdk = import_extra(self.sdk_name, "judge", f"the LLM judge (--protocol "
                                f"{settings.protocol})")
        self.settings = settings
        self.client = getattr(self.sdk, self.client_class)(
            api_key=key, base_url=settings.base_url, max_retries=0,
            timeout=settings.request_timeout_s, http_client=self._http_client())
        # the SDK imports an endpoint's module on first use: done here, once, rather than by
        # the first requests while the others wait on the import lock
        self.endpoint = self._endpoint()
        # and it builds a reply's models on first use (pydantic's defer_build): a model being
        # built has no schema of its own for a moment, and another request's thread reading it
        # then fails ("BaseModel cannot be instantiated directly"); built here, in one thread
        module, name = self.reply_model
        _build_now(getattr(importlib.import_module(module), name))

    def _endpoint(self) -> Any:
        raise NotImplementedError

    def _http_client(self) -> Any:
        """The SDK's own HTTP client, keeping idle connections without expiry. httpcore's pool
        closes a connection whose keep-alive expired without a lock, after deciding so under
        it: a request assigned that connection a moment before (its thread not yet scheduled,
        on a loaded machine) sent, then had the socket closed under it, and was asked again
        though the server had answered (tests/judge/test_pooled_connections.py). A connection
        the server closed is still dropped before reuse (it reads as closed)."""
        import httpx

        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100,
                              keepalive_expiry=None)
        return self.sdk.DefaultHttpxClient(limits=limits)

    def require_reachable(self) -> None:
        """Refuse a judging whose endpoint takes no connection (one line, not minutes of
        retried requests)."""
        require_reachable(str(self.client.base_url), "the judge endpoint",
                          hint="check the judge's base URL (--base-url, -J base_url=, "
                          "$BENCHWRIGHT_JUDGE_BASE_URL) and that its server is running")


class OpenAIClient(_SDKClient):
    """Chat Completions with a strict JSON schema."""

    sdk_name, client_class = "openai", "OpenAI"
    reply_model = ("openai.types.chat", "ChatCompletion")

    def _endpoint(self) -> Any:
        return self.client.chat.completions

    def ask(self, prefix: str, criteria: str, schema: dict[str, Any]) -> Exchange:
        s = self.settings
        try:
            response = self.endpoint.create(
                model=s.model, temperature=s.effective_temperature,
                messages=[{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": f"{prefix}\n\n{criteria}"}],
                response_format={"type": "json_schema", "json_schema": {
                    "name": "rubric_flags", "strict": True, "schema": schema}})
        except Exception as exc:
            raise _translated(self.sdk, exc) from None
        raw: dict[str, Any] = response.model_dump(mode="json")
        message = response.choices[0].message if response.choices else None
        usage = raw.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return Exchange(payload=message.content if message is not None else None, raw=raw,
                        usage=TokenUsage(input_tokens=usage.get("prompt_tokens") or 0,
                                         output_tokens=usage.get("completion_tokens") or 0,
                                         cached_input_tokens=cached),
                        cost_usd=_number(usage.get("cost")))


class AnthropicClient(_SDKClient):
    """Messages with one forced tool; the shared prefix marked for the prompt cache."""

    sdk_name, client_class = "anthropic", "Anthropic"
    reply_model = ("anthropic.types", "Message")

    def _endpoint(self) -> Any:
        return self.client.messages

    def ask(self, prefix: str, criteria: str, schema: dict[str, Any]) -> Exchange:
        s = self.settings
        try:
            message = self.endpoint.create(
                model=s.model, max_tokens=s.max_output_tokens, system=SYSTEM,
                tools=[{"name": TOOL, "description": "Report the rubric flags found.",
                        "input_schema": schema}],
                tool_choice={"type": "tool", "name": TOOL},
                messages=[{"role": "user", "content": [
                    {"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": criteria}]}],
                **_temperature(s))
        except Exception as exc:
            raise _translated(self.sdk, exc) from None
        raw: dict[str, Any] = message.model_dump(mode="json")
        usage = raw.get("usage") or {}
        read = usage.get("cache_read_input_tokens") or 0
        written = usage.get("cache_creation_input_tokens") or 0
        tool = next((b for b in raw.get("content") or []
                     if b.get("type") == "tool_use" and b.get("name") == TOOL), None)
        return Exchange(payload=tool.get("input") if tool else None, raw=raw,
                        usage=TokenUsage(input_tokens=(usage.get("input_tokens") or 0)
                                         + read + written,
                                         output_tokens=usage.get("output_tokens") or 0,
                                         cached_input_tokens=read),
                        cost_usd=None)


def _build_now(root: type[BaseModel]) -> None:
    """Build a model and every model its fields hold (deferred by the SDK) now."""
    todo, seen = [root], set()
    while todo:
        model = todo.pop()
        if model not in seen:
            seen.add(model)
            model.model_rebuild()
            todo.extend(m for field in model.model_fields.values()
                        for m in _models_in(field.annotation))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _temperature(settings: JudgeSettings) -> dict[str, Any]:
    """The SDK no longer takes a temperature (newer models fix it): one given by the user still
    reaches the API, in the body."""
    temperature = settings.effective_temperature
    return {} if temperature is None else {"extra_body": {"temperature": temperature}}


def _translated(sdk: Any, exc: Exception) -> Exception:
    """An SDK error as Transient, BrokenReply or Refused (both SDKs name them alike)."""
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        text = f"HTTP {status}: {_first_line(exc)}"
        if status in (408, 409, 429) or status >= 500:
            return Transient(text, _retry_after(exc))
        return Refused(text, fatal=status in _FATAL)
    if isinstance(exc, sdk.APIConnectionError):  # timeouts included
        return Transient(f"{type(exc).__name__}: {_first_line(exc)}",
                         unreachable=_refused(exc))
    if isinstance(exc, sdk.APIResponseValidationError | json.JSONDecodeError):
        return BrokenReply(f"the reply's body is not the protocol's JSON ({type(exc).__name__})")
    return exc


def _refused(exc: BaseException) -> bool:
    """Whether a connection error is that no connection could be made (refused, no route, an
    unknown host), not a timeout or a connection dropped mid-request."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError | socket.gaierror):
            return True
        if type(cause).__name__ == "ConnectError" and "timed out" not in str(cause).lower():
            return True  # httpx's: the connection was never made
        cause = cause.__cause__ or cause.__context__
    return False


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def _retry_after(exc: Exception) -> float:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value or 0))
    except ValueError:
        return 0.0


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None
