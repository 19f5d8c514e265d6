"""An agent's outcome -> `agent_response.json` in the WebArena Verified format.

- `task_type` comes from the task (its expected response), never from the agent.
- `status`: a step limit or a crash without an answer is UNKNOWN_ERROR; an answer that is itself
  an agent response, or names a status (`NOT_FOUND_ERROR`), keeps it; an agent that reports
  success is SUCCESS; otherwise phrases such as "does not exist" or "permission denied" map to
  the error codes, and a reported failure nothing matches is UNKNOWN_ERROR.
- `retrieved_data` (RETRIEVE tasks reporting SUCCESS only; null otherwise) is parsed from the
  final answer: JSON first (a fenced block, the whole text, or an embedded array/object), then
  markdown lists, lines, "A, B and C"; quotes and markdown are stripped and every value is coerced
  to the task's `results_schema` (numbers, booleans, strings, objects). Answers the heuristics
  cannot read with confidence are marked ambiguous, and an optional `Extractor` (an
  OpenAI-compatible model, see `LLMExtractor`) may then read them instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Final, Protocol

from pydantic import BaseModel, Field

from benchwright.web.evaluation.tasks import TaskType, WebTask

ItemSchema = dict[str, Any]
_STATUS_TOKEN: Final = re.compile(
    r"\b(ACTION_NOT_ALLOWED_ERROR|PERMISSION_DENIED_ERROR|NOT_FOUND_ERROR|"
    r"DATA_VALIDATION_ERROR|UNKNOWN_ERROR)\b", re.IGNORECASE)
_NUMBER: Final = re.compile(r"(?<![\w.])[-+]?\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
_BULLET: Final = re.compile(r"^\s*(?:[-*\u2022+]|\d+[.)])\s+(.*)$")
_LABEL: Final = re.compile(
    r"^\s*(?:(?:final\s+)?answer|result|response|retrieved[_ ]data|output)\s*(?:is)?\s*[:=-]\s*"
    r"|^\s*the\s+(?:final\s+)?answer\s+is\s*:?\s*", re.IGNORECASE)
_QUOTES: Final = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"
_TRUE: Final = frozenset({"yes", "true", "y", "correct", "yes."})
_FALSE: Final = frozenset({"no", "false", "n", "incorrect", "no."})


class ResponseStatus(StrEnum):
    """The statuses of the official agent response."""

    SUCCESS = "SUCCESS"
    ACTION_NOT_ALLOWED_ERROR = "ACTION_NOT_ALLOWED_ERROR"
    PERMISSION_DENIED_ERROR = "PERMISSION_DENIED_ERROR"
    NOT_FOUND_ERROR = "NOT_FOUND_ERROR"
    DATA_VALIDATION_ERROR = "DATA_VALIDATION_ERROR"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


# Checked in order: the first phrase found decides.
_ERROR_PHRASES: Final[tuple[tuple[ResponseStatus, tuple[str, ...]], ...]] = (
    (ResponseStatus.PERMISSION_DENIED_ERROR, (
        "permission denied", "no permission", "not have permission", "don't have permission",
        "lack permission", "lacks permission", "not authorized", "unauthorized", "forbidden",
        "access denied", "not have access", "don't have access", "not permitted to")),
    (ResponseStatus.ACTION_NOT_ALLOWED_ERROR, (
        "not allowed", "not supported", "unsupported", "does not support", "doesn't support",
        "cannot be done", "can't be done", "not possible to", "platform does not allow")),
    (ResponseStatus.DATA_VALIDATION_ERROR, (
        "invalid", "validation", "missing required", "required field", "is required",
        "malformed", "not a valid")),
    (ResponseStatus.NOT_FOUND_ERROR, (
        "not found", "no such", "does not exist", "doesn't exist", "do not exist",
        "don't exist", "could not find", "couldn't find", "cannot find", "can't find",
        "unable to find", "unable to locate", "could not locate", "no results", "no matching",
        "there is no", "there are no", "not available", "impossible", "nonexistent",
        "non-existent")),
)


class OutcomeKind(StrEnum):
    """How the agent's run ended, as far as the adapter cares."""

    ANSWERED = "answered"
    STEP_LIMIT = "step_limit"
    FAILED = "failed"


class ParseMethod(StrEnum):
    """How retrieved_data was read from the answer."""

    RESPONSE = "response"
    JSON = "json"
    LIST = "list"
    LINES = "lines"
    CONJUNCTION = "conjunction"
    KEY_VALUES = "key_values"
    NUMBERS = "numbers"
    SINGLE = "single"
    LLM = "llm"
    NONE = "none"


class AgentResponse(BaseModel):
    """`agent_response.json`, the official WebArena Verified format."""

    task_type: TaskType
    """RETRIEVE, MUTATE or NAVIGATE: the task's, from its expected response."""
    status: ResponseStatus
    """SUCCESS or the error code the outcome maps to."""
    retrieved_data: list[Any] | None = None
    """The answer's items for a RETRIEVE task reporting SUCCESS; null otherwise."""
    error_details: str | None = None
    """Why the status is an error (not scored)."""


class AdaptedResponse(BaseModel):
    """The response and how it was obtained."""

    response: AgentResponse
    """What goes into agent_response.json."""
    method: ParseMethod
    """How retrieved_data was parsed."""
    ambiguous: bool = False
    """The heuristics were unsure (and no extractor settled it)."""
    notes: list[str] = Field(default_factory=list)
    """What the adapter decided on the way (e.g. an extractor that failed)."""


class AnswerInput(BaseModel):
    """What the adapter needs from a trial's outcome."""

    kind: OutcomeKind
    """answered, step_limit or failed (crashed, agent error)."""
    final_text: str | None = None
    """The agent's final answer."""
    agent_success: bool | None = None
    """The agent's own verdict on its work (browser-use's done.success), when it gave one."""
    errors: list[str] = Field(default_factory=list)
    """Errors reported during the run."""


class Extractor(Protocol):
    """Reads retrieved_data from an ambiguous answer (an LLM, normally)."""

    def extract(self, task: WebTask, answer: str, item_schema: ItemSchema) -> list[Any]:
        """The answer's items, as the schema wants them; raises on failure."""
        ...


class Parsed(BaseModel):
    """Items read from an answer."""

    items: list[Any] | None
    """The items; None when the answer says nothing usable."""
    method: ParseMethod
    """How they were read."""
    ambiguous: bool = False
    """True when another reading is as plausible."""


def adapt(task: WebTask, answer: AnswerInput,
          extractor: Extractor | None = None) -> AdaptedResponse:
    """The agent response for this task and outcome."""
    text = (answer.final_text or "").strip()
    embedded = _embedded_response(text)
    status, details = _status(answer, text, embedded)
    if task.task_type is not TaskType.RETRIEVE or status is not ResponseStatus.SUCCESS:
        return AdaptedResponse(method=ParseMethod.NONE, response=AgentResponse(
            task_type=task.task_type, status=status, error_details=details))
    parsed = (Parsed(items=_coerce_all(embedded.get("retrieved_data"), item_schema(task)),
                     method=ParseMethod.RESPONSE) if embedded is not None
              else parse_items(text, item_schema(task)))
    notes: list[str] = []
    if parsed.ambiguous and extractor is not None:
        parsed = _extracted(task, text, parsed, extractor, notes)
    return AdaptedResponse(method=parsed.method, ambiguous=parsed.ambiguous, notes=notes,
                           response=AgentResponse(task_type=task.task_type, status=status,
                                                  retrieved_data=parsed.items or []))


def _extracted(task: WebTask, text: str, parsed: Parsed, extractor: Extractor,
               notes: list[str]) -> Parsed:
    schema = item_schema(task)
    try:
        items = _coerce_all(extractor.extract(task, text, schema), schema)
    except Exception as exc:  # any failure of the extractor leaves the heuristic reading
        notes.append(f"extractor failed ({type(exc).__name__}: {exc}); heuristic kept")
        return parsed
    return Parsed(items=items, method=ParseMethod.LLM)


def item_schema(task: WebTask) -> ItemSchema:
    """The JSON schema of one retrieved_data item ({} when the task gives none)."""
    spec = next((e for e in task.eval if e.get("evaluator") == "AgentResponseEvaluator"), {})
    schema = spec.get("results_schema") or {}
    items = schema.get("items") if schema.get("type") == "array" else None
    return dict(items) if isinstance(items, dict) else {}


# --- status -------------------------------------------------------------------------------


def _status(answer: AnswerInput, text: str,
            embedded: dict[str, Any] | None) -> tuple[ResponseStatus, str | None]:
    if answer.kind is OutcomeKind.STEP_LIMIT:
        return ResponseStatus.UNKNOWN_ERROR, "the agent reached its step limit"
    if answer.kind is OutcomeKind.FAILED and not text:
        return ResponseStatus.UNKNOWN_ERROR, "; ".join(answer.errors) or "the agent failed"
    stated = _stated_status(text, embedded)
    if stated is not None:
        return stated, None if stated is ResponseStatus.SUCCESS else text
    if answer.agent_success:
        return ResponseStatus.SUCCESS, None
    phrase = status_from_phrases(text)
    if phrase is not None:
        return phrase, text
    if answer.agent_success is False or answer.kind is OutcomeKind.FAILED:
        return ResponseStatus.UNKNOWN_ERROR, text or "; ".join(answer.errors) or None
    return ResponseStatus.SUCCESS, None


def _stated_status(text: str, embedded: dict[str, Any] | None) -> ResponseStatus | None:
    """A status the answer names itself: an embedded response's, or an error code token."""
    if embedded is not None:
        try:
            return ResponseStatus(str(embedded.get("status", "")).strip().upper())
        except ValueError:
            pass
    token = _STATUS_TOKEN.search(text)
    return ResponseStatus(token.group(1).upper()) if token else None


def status_from_phrases(text: str) -> ResponseStatus | None:
    """The error code a failure report's wording points to, if any."""
    lowered = text.lower().replace("\u2019", "'")
    for status, phrases in _ERROR_PHRASES:
        if any(phrase in lowered for phrase in phrases):
            return status
    return None


# --- retrieved_data -----------------------------------------------------------------------


def parse_items(text: str, schema: ItemSchema) -> Parsed:
    """Items of the answer, coerced to the schema; JSON first, then the text's structure."""
    if not text:
        return Parsed(items=None, method=ParseMethod.NONE)
    found = _json_value(text)
    if found is not None:
        values = found if isinstance(found, list) else [found]
        return Parsed(items=_coerce_all(values, schema), method=ParseMethod.JSON)
    cleaned = _strip_label(_strip_markdown(text))
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return _parse_objects(cleaned, schema)
    if kind in ("number", "integer"):
        return _parse_numbers(cleaned, schema)
    if kind == "boolean":
        return _parse_booleans(cleaned)
    return _parse_strings(cleaned, schema)


def _embedded_response(text: str) -> dict[str, Any] | None:
    """The answer when it is itself an agent response (has `status` and a data or type key)."""
    found = _json_value(text)
    if isinstance(found, dict) and "status" in found and (
            "retrieved_data" in found or "task_type" in found):
        return found
    return None


def _json_value(text: str) -> Any:
    """JSON from a fenced block, the whole text, or the first embedded array/object."""
    fence = re.search(r"```(?:json)?\s*\n?(.*?)\n?```", text, re.DOTALL)
    for candidate in ((fence.group(1),) if fence else ()) + (_strip_label(text),):
        try:
            return json.loads(candidate.strip())
        except json.JSONDecodeError:
            continue
    return _embedded_json(text)


def _embedded_json(text: str) -> Any:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if (isinstance(value, dict) and value) or _json_list_worth_taking(value):
            return value
    return None


def _json_list_worth_taking(value: Any) -> bool:
    """A list such as ["a", "b"]; not a citation mark like [1]."""
    return isinstance(value, list) and bool(value) and not (
        len(value) == 1 and isinstance(value[0], int | float))


def _strip_markdown(text: str) -> str:
    text = re.sub(r"```\w*", "", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    return re.sub(r"^\s{0,3}#{1,6}\s+", "", text, flags=re.MULTILINE).strip()


def _strip_label(text: str) -> str:
    return _LABEL.sub("", text, count=1).strip()


def clean_item(item: str) -> str:
    """One item without surrounding quotes, markdown or a final full stop."""
    item = _strip_markdown(item).strip()
    for _ in range(2):
        item = item.strip().strip(_QUOTES).strip()
        if item.endswith(".") and not re.search(r"\b[A-Z][a-z]?\.$|\d\.$", item):
            item = item[:-1]
    return item.strip()


def split_items(text: str) -> tuple[list[str], ParseMethod, bool]:
    """Items of a plain-text answer: bullets, then lines, then "A, B and C"; and ambiguity."""
    lines = [line for line in text.splitlines() if line.strip()]
    bullets = [m.group(1) for m in (_BULLET.match(line) for line in lines) if m]
    if bullets:
        return bullets, ParseMethod.LIST, False
    if len(lines) > 1:
        intro = lines[0].rstrip().endswith(":")
        return lines[1:] if intro else lines, ParseMethod.LINES, False
    line = lines[0] if lines else ""
    if ":" in line and _CONJUNCTION.search(line.split(":", 1)[1]):
        line = line.split(":", 1)[1]
    parts = _split_conjunction(line)
    if len(parts) > 1:
        return parts, ParseMethod.CONJUNCTION, False
    return [line], ParseMethod.SINGLE, _looks_like_prose(line)


_CONJUNCTION: Final = re.compile(r",\s*(?:and|or)\s+|,[^,]*\s(?:and|or)\s+|;", re.IGNORECASE)


def _split_conjunction(line: str) -> list[str]:
    """"A, B and C" / "A, B, and C" / "A; B; C" -> parts; a line without that shape stays whole."""
    masked = _mask_brackets(line)
    if ";" in masked:
        return _split_at(line, masked, r";\s*")
    if not _CONJUNCTION.search(masked):
        return [line]
    return _split_at(line, masked, r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+(?=[^,]*$)")


def _split_at(line: str, masked: str, pattern: str) -> list[str]:
    parts, start = [], 0
    for match in re.finditer(pattern, masked, re.IGNORECASE):
        parts.append(line[start:match.start()])
        start = match.end()
    parts.append(line[start:])
    return [p.strip() for p in parts if p.strip()]


def _mask_brackets(line: str) -> str:
    """The line with separators inside (), [] and quotes replaced, so they do not split."""
    out, depth, quoted = [], 0, False
    for ch in line:
        depth += ch in "([" and not quoted
        depth -= ch in ")]" and depth > 0 and not quoted
        quoted ^= ch == '"'
        protected = depth > 0 or quoted
        out.append("_" if protected and ch in ",;" else ch)
    masked = "".join(out)
    return re.sub(r"(?<=\d),(?=\d{3})", "_", masked)


def _looks_like_prose(line: str) -> bool:
    """A sentence rather than a bare value ("The best seller is X.")."""
    words = line.split()
    return (len(words) > 8 or bool(re.search(r"[.!?]\s+\w", line))
            or (len(words) > 3 and bool(_COPULA.search(line))))


_COPULA: Final = re.compile(r"\b(?:is|are|was|were|has|have|had)\b", re.IGNORECASE)


def _parse_strings(text: str, schema: ItemSchema) -> Parsed:
    parts, method, ambiguous = split_items(text)
    items = [coerce(clean_item(p), schema) for p in parts]
    return Parsed(items=[i for i in items if i not in ("", None)], method=method,
                  ambiguous=ambiguous)


def _parse_numbers(text: str, schema: ItemSchema) -> Parsed:
    parts, method, _ = split_items(text)
    if method is not ParseMethod.SINGLE:
        items = [_first_number(clean_item(p)) for p in parts]
        if all(i is not None for i in items):
            return Parsed(items=items, method=method)
    numbers = [to_number(m.group(0)) for m in _NUMBER.finditer(text)]
    if not numbers and _ZERO_WORDS.search(text):
        numbers = [0]
    return Parsed(items=numbers, method=ParseMethod.NUMBERS if numbers else ParseMethod.NONE,
                  ambiguous=len(numbers) != 1)


_ZERO_WORDS: Final = re.compile(r"\b(?:none|zero|no\s+\w+)\b", re.IGNORECASE)


def _parse_booleans(text: str) -> Parsed:
    parts, method, _ = split_items(text)
    values = [to_bool(clean_item(p)) for p in parts]
    if all(v is not None for v in values):
        return Parsed(items=values, method=method)
    first = to_bool(re.split(r"[\s,.;:!]", text.strip(), maxsplit=1)[0])
    return Parsed(items=[first] if first is not None else [text], method=ParseMethod.SINGLE,
                  ambiguous=first is None)


def _parse_objects(text: str, schema: ItemSchema) -> Parsed:
    properties = schema.get("properties") or {}
    lines = [m.group(1) if (m := _BULLET.match(line)) else line
             for line in text.splitlines() if line.strip()]
    per_line = [_key_values(line, properties) for line in lines]
    if per_line and all(per_line) and len(per_line[0]) < len(properties) and len(lines) > 1:
        merged = _key_values("\n".join(lines), properties)
        if merged:
            return Parsed(items=[merged], method=ParseMethod.KEY_VALUES)
    if per_line and all(per_line):
        return Parsed(items=per_line, method=ParseMethod.KEY_VALUES)
    return Parsed(items=[text], method=ParseMethod.SINGLE, ambiguous=True)


def _key_values(text: str, properties: dict[str, Any]) -> dict[str, Any]:
    """`month: May, count: 8` -> {"month": "May", "count": 8} for keys the schema knows."""
    names = {_key(name): name for name in properties}
    pairs = re.findall(r"([A-Za-z_][\w \-]*?)\s*[:=]\s*(.+?)(?=,\s*[A-Za-z_][\w \-]*\s*[:=]|\n|$)",
                       text)
    found = {names[_key(k)]: clean_item(v) for k, v in pairs if _key(k) in names}
    return {k: coerce(v, properties[k]) for k, v in found.items()}


def _key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


# --- coercion -----------------------------------------------------------------------------


def _coerce_all(values: Any, schema: ItemSchema) -> list[Any] | None:
    if values is None:
        return None
    values = values if isinstance(values, list) else [values]
    return [coerce(v, schema) for v in values]


def coerce(value: Any, schema: ItemSchema) -> Any:
    """A value as the schema's type wants it; left as it is when it cannot be converted."""
    converters: dict[str, Callable[[Any, ItemSchema], Any]] = {
        "number": _as_number, "integer": _as_number, "boolean": _as_bool, "string": _as_string,
        "object": _as_object}
    kind = schema.get("type") or ("object" if "properties" in schema else None)
    if value is None or kind not in converters:
        return value
    return converters[str(kind)](value, schema)


def _as_number(value: Any, _schema: ItemSchema) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return value
    if isinstance(value, int | float):
        return value
    number = _first_number(clean_item(value))
    return number if number is not None else value


def _as_bool(value: Any, _schema: ItemSchema) -> Any:
    if isinstance(value, bool):
        return value
    converted = to_bool(str(value))
    return converted if converted is not None else value


def _as_string(value: Any, _schema: ItemSchema) -> Any:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return clean_item(value) if isinstance(value, str) else value


def _as_object(value: Any, schema: ItemSchema) -> Any:
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties") or {}
    by_key = {_key(name): name for name in properties}
    return {by_key.get(_key(k), k): coerce(v, properties.get(by_key.get(_key(k), k), {}))
            for k, v in value.items()}


def _first_number(text: str) -> int | float | None:
    match = _NUMBER.search(text)
    return to_number(match.group(0)) if match else None


def to_number(token: str) -> int | float:
    """`$1,234.50` -> 1234.5; `7` -> 7."""
    digits = token.replace("$", "").replace(",", "").replace(" ", "")
    number = float(digits)
    return int(number) if number.is_integer() and "." not in digits else number


def to_bool(word: str) -> bool | None:
    """yes/true -> True, no/false -> False, else None."""
    lowered = word.strip().strip(_QUOTES).lower().rstrip(".!")
    if lowered in _TRUE:
        return True
    return False if lowered in _FALSE else None
