"""The optional LLM step of the response adapter: an OpenAI-compatible chat model reads
retrieved_data out of an answer the heuristics found ambiguous. Off unless configured.

Plain HTTP through the standard library (no client package): `POST {base}/v1/chat/completions`
(`{base}/chat/completions` when the base URL already ends in /v1), the key read from the named
environment variable and sent as a bearer token. The reply must hold a JSON object
`{"retrieved_data": [...]}` (a fenced block is fine).
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from typing import Any, Final

from pydantic import BaseModel

from benchwright.web.evaluation.tasks import WebTask

TIMEOUT_S: Final = 60.0
_SYSTEM: Final = (
    "You convert a web agent's final answer into structured data. Reply with one JSON object "
    '{"retrieved_data": [...]} and nothing else. Each item must match the given JSON schema; '
    "numbers are JSON numbers, booleans are true/false. Use only what the answer says.")


class ExtractorConfig(BaseModel):
    """Where the extraction model is."""

    model: str
    """The model's name."""
    base_url: str
    """The OpenAI-compatible endpoint, with or without /v1."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key (may be unset for local servers)."""
    timeout_s: float = TIMEOUT_S
    """Seconds before a call is abandoned."""


class ExtractionError(Exception):
    """The model could not be reached or its reply held no usable JSON."""


class LLMExtractor:
    """`Extractor` backed by an OpenAI-compatible chat completions endpoint."""

    def __init__(self, config: ExtractorConfig) -> None:
        self.config = config

    def extract(self, task: WebTask, answer: str, item_schema: dict[str, Any]) -> list[Any]:
        """The answer's items as the model reads them."""
        reply = self._chat(_messages(task, answer, item_schema))
        return parse_reply(reply)

    def _chat(self, messages: list[dict[str, str]]) -> str:
        body = json.dumps({"model": self.config.model, "messages": messages,
                           "temperature": 0}).encode()
        request = urllib.request.Request(self._url(), data=body, headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
                data = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ExtractionError(f"extraction model unreachable or bad reply: {exc}") from None
        try:
            return str(data["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise ExtractionError("the extraction model's reply has no message") from None

    def _url(self) -> str:
        base = self.config.base_url.rstrip("/")
        return f"{base}/chat/completions" if base.endswith("/v1") else \
            f"{base}/v1/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.config.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers


def _messages(task: WebTask, answer: str, item_schema: dict[str, Any]) -> list[dict[str, str]]:
    user = (f"Task: {task.intent}\nItem schema: {json.dumps(item_schema)}\n"
            f"Agent's answer:\n{answer}")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def parse_reply(reply: str) -> list[Any]:
    """retrieved_data from the model's reply text."""
    fence = re.search(r"```(?:json)?\s*\n?(.*?)\n?```", reply, re.DOTALL)
    text = fence.group(1) if fence else reply
    try:
        data = json.loads(text.strip())
    except json.JSONDecodeError:
        raise ExtractionError(f"the extraction model did not reply with JSON: {reply[:80]!r}"
                              ) from None
    items = data.get("retrieved_data") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ExtractionError("the extraction model's JSON has no retrieved_data list")
    return items
