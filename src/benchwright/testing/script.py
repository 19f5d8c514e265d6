"""The scripted conversation a fake LLM server plays, read from YAML.

```yaml
turns:                          # one per model call, any protocol, served in order
  - text: "I'll write the file."
    tool_calls:
      - name: bash              # a tool the client under test declared
        arguments: {command: "echo hi > a.txt"}
    usage: {input_tokens: 120, output_tokens: 30}   # optional; estimated from sizes otherwise
  - fault: {kind: http_429, times: 2, retry_after: 0}   # a turn of its own: two 429s, then on
  - text: "Done."
    fault: {kind: http_500}     # or on a turn: the first call gets a 500, the retry gets "Done."
untooled: {text: "ok"}          # optional: calls declaring no tools get this; no turn is used
fault_all: http_429             # optional: every model call fails so, until clear_faults()
latency_s: 0.2                  # optional: every reply waits this long (a turn may set its own)
rules:                          # optional: replies chosen by what the request says
  - match: ["ledger.py", "swallowed_failure"]   # every string must be in the request's text
    replies:                    # served in order to the calls it matches; the last repeats
      - text: '{"flags": []}'
        usage: {input_tokens: 900, output_tokens: 40, cost_usd: 0.01}   # cost: OpenAI's usage.cost
```
Rules come first (the first that matches answers), then `untooled`, then the turns. After the
last turn, every call gets an HTTP 400 naming the exhausted script.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from benchwright.errors import UserInputError
from benchwright.files.untrusted import parse_untrusted_yaml, read_untrusted_text


class FaultKind(StrEnum):
    """What a fault does to one model call."""

    HTTP_429 = "http_429"
    """Too many requests, with a `retry-after` header and the provider's error body."""
    HTTP_500 = "http_500"
    """An internal server error with the provider's error body."""
    MALFORMED = "malformed"
    """A 200 whose body is not valid JSON (for streams: a broken event, then the end)."""
    STALL = "stall"
    """No reply for `seconds`; then the connection is closed without one."""


class Fault(BaseModel):
    """A failure injected instead of a reply."""

    kind: FaultKind
    """What happens."""
    times: int = Field(default=1, ge=1)
    """How many calls get it (on a turn; `fault_all` ignores it)."""
    retry_after: float = Field(default=1.0, ge=0)
    """Seconds in the `retry-after` header of a 429."""
    seconds: float = Field(default=30.0, ge=0)
    """How long a stall lasts."""

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        return {"kind": data} if isinstance(data, str) else data


class ToolCall(BaseModel):
    """A tool call the model makes."""

    name: str
    """The tool's name, as the client declared it."""
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """Its arguments: a mapping, or a raw JSON string sent as is where the protocol allows."""


class TurnUsage(BaseModel):
    """Token counts reported for a turn."""

    input_tokens: int = Field(ge=0)
    """Prompt tokens."""
    output_tokens: int = Field(ge=0)
    """Generated tokens."""
    cost_usd: float | None = Field(default=None, ge=0)
    """The call's cost as OpenRouter reports it (`usage.cost`, Chat Completions only)."""


class Turn(BaseModel):
    """One model reply, optionally preceded by faults."""

    text: str = ""
    """The assistant's text."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Tool calls, after the text."""
    usage: TurnUsage | None = None
    """Reported usage; if unset, estimated from the sizes (4 characters a token)."""
    fault: Fault | None = None
    """Injected on the first `fault.times` calls that reach this turn."""
    latency_s: float | None = Field(default=None, ge=0)
    """Seconds to wait before replying (default: the script's `latency_s`)."""

    @property
    def fault_only(self) -> bool:
        """A turn that only injects faults, then yields to the next turn."""
        return self.fault is not None and not self.text and not self.tool_calls


class Rule(BaseModel):
    """Replies for the calls whose request holds every `match` string."""

    match: list[str] = Field(default_factory=list)
    """Strings that must all appear in the request's text (an empty list matches any call)."""
    replies: list[Turn] = Field(min_length=1)
    """Served in order to the matching calls; the last one repeats."""


class Script(BaseModel):
    """A whole scripted conversation."""

    turns: list[Turn] = Field(default_factory=list)
    """The replies, in order."""
    untooled: Turn | None = None
    """Reply to calls that declare no tools (a CLI's side calls: titles, topic checks)."""
    fault_all: Fault | None = None
    """A fault for every model call until `clear_faults()`."""
    rules: list[Rule] = Field(default_factory=list)
    """Replies chosen by the request's content, before `untooled` and the turns."""
    latency_s: float = Field(default=0.0, ge=0)
    """Seconds every reply waits before it is sent."""

    @classmethod
    def from_yaml(cls, source: str | Path) -> Script:
        """A script from a YAML file's path, or from YAML text."""
        text, where = _yaml_text(source)
        try:
            return cls.model_validate(
                parse_untrusted_yaml(text, where, what="the fake-LLM script") or {})
        except ValidationError as exc:
            raise UserInputError(f"not a valid fake-LLM script: {_first_line(exc)}", path=where,
                                 hint="see `benchwright.testing.script` for the format") from None


def _yaml_text(source: str | Path) -> tuple[str, Path | None]:
    if isinstance(source, Path) or ("\n" not in source and source.endswith((".yaml", ".yml"))):
        path = Path(source)
        return read_untrusted_text(path, what="the script file", max_bytes=16 * 2**20), path
    return source, None


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc).splitlines()[0]
