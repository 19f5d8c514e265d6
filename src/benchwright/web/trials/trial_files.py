"""Reading one web trial's files for display: the agent's steps (history.json; without one, an
ATIF trajectory whatever wrote it), its response, the evaluator's verdict, the trial's metrics
and the HAR as a list of exchanges.

All of it was written by, or records what was seen by, an agent in a browser: files are read
without following a link, cut at a bound, and a missing or malformed file reads as absent.
Text stays text; nothing here is interpreted beyond JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from benchwright.errors import BenchwrightError
from benchwright.files.atif import ATIF_FILE, AtifError, content_text, read_atif
from benchwright.files.nofollow import read_regular
from benchwright.web.evaluation.mismatch import Mismatch, compact, expectations
from benchwright.web.evaluation.outcomes import Cause, cause_of
from benchwright.web.evaluation.scoring import (
    AGENT_RESPONSE,
    EVAL_RESULT,
    HISTORY,
    METRICS,
    NETWORK_HAR,
    TaskEvalRecord,
)
from benchwright.web.trials.models import TrialMetrics

MAX_TEXT = 256 * 1024
"""Characters kept of an agent response or one step's text."""
MAX_BODY = 64 * 1024
"""Characters kept of one request's or response's body."""
MAX_HISTORY = 64 * 2**20
"""Largest history.json read."""
MAX_HAR = 512 * 2**20
"""Largest network.har read (the evaluator takes up to 2 GB; a viewer shows less)."""
MAX_ENTRIES = 5000
"""HAR entries listed per trial."""
THOUGHTS = ("thinking", "evaluation_previous_goal", "memory", "next_goal")


class Action(BaseModel):
    """One action of a step, as people read it."""

    name: str
    """The action (`click_element_by_index`, `go_to_url`, `input_text`, `done`, ...)."""
    target: str = ""
    """What it acted on: the element (its index, tag and text or name) or the URL."""
    detail: str = ""
    """What it typed, sent or answered, and any other argument, as compact JSON."""


class Step(BaseModel):
    """One step of the agent."""

    number: int
    """From 1."""
    url: str = ""
    """The page the step started on."""
    title: str = ""
    """That page's title."""
    thoughts: dict[str, str] = Field(default_factory=dict)
    """The model's thinking, evaluation, memory and next goal, where it gave them."""
    actions: list[str] = Field(default_factory=list)
    """Each action, as compact JSON."""
    calls: list[Action] = Field(default_factory=list)
    """Each action by name, target and detail (the same actions as `actions`)."""
    results: list[str] = Field(default_factory=list)
    """What each action reported."""
    errors: list[str] = Field(default_factory=list)
    """What failed."""
    duration_s: float | None = None
    """The step's wall-clock seconds, when recorded."""


class HarEntry(BaseModel):
    """One request and its response."""

    index: int
    """Position in the HAR, from 0."""
    method: str
    """GET, POST, ..."""
    url: str
    """The request URL."""
    status: int
    """The response status (0: none)."""
    mime: str = ""
    """The response's MIME type."""
    size: int = 0
    """The response body's size in bytes, when known."""
    time_ms: float = 0.0
    """Total time of the exchange."""
    started: str = ""
    """When it started (ISO 8601)."""
    request_headers: list[tuple[str, str]] = Field(default_factory=list)
    """Request headers, in order."""
    post_body: str = ""
    """The request body (cut)."""
    response_headers: list[tuple[str, str]] = Field(default_factory=list)
    """Response headers, in order."""
    response_body: str = ""
    """The response body as text (cut; empty for binary or base64 content)."""


class TrialFiles(BaseModel):
    """What a trial folder holds, read for display."""

    steps: list[Step] = Field(default_factory=list)
    """The agent's steps."""
    final_answer: str | None = None
    """The agent's last words (its done action's text or data)."""
    response_text: str | None = None
    """agent_response.json as written."""
    response: Any = None
    """agent_response.json parsed (None when it is not JSON)."""
    verdict: TaskEvalRecord | None = None
    """eval_result.json."""
    mismatches: list[Mismatch] = Field(default_factory=list)
    """What each evaluator expected and got, passing ones too (`passed`)."""
    cause: Cause | None = None
    """Why it scored what it did (`web/evaluation/outcomes.py`), once scored."""
    metrics: TrialMetrics | None = None
    """metrics.json."""
    har_note: str | None = None
    """Why the HAR is not listed (missing, too large, malformed), when it is not."""
    steps_source: str | None = None
    """The file the steps were read from (history.json, or an ATIF trajectory)."""
    steps_note: str | None = None
    """Why the steps are not shown (an ATIF trajectory that cannot be read), when they are not."""
    trajectory_totals: dict[str, float | None] | None = None
    """Tokens and cost from an ATIF trajectory's final metrics (a None cost: unknown)."""


def _bytes(folder: Path, name: str, limit: int) -> bytes | None:
    data = read_regular(folder, name, limit=limit + 1)
    return None if data is None or len(data) > limit else data


def _json(folder: Path, name: str, limit: int = MAX_HISTORY) -> Any:
    data = _bytes(folder, name, limit)
    try:
        return None if data is None else json.loads(data)
    except (ValueError, RecursionError):
        return None


def _cut(value: Any, limit: int = MAX_TEXT) -> str:
    text = value if isinstance(value, str) else compact(value, limit)
    return text if len(text) <= limit else text[:limit] + "… (cut)"


def read_trial(folder: Path) -> TrialFiles:
    """Every file of a trial folder but the HAR's entries (see `har_entries`)."""
    raw_response = _bytes(folder, AGENT_RESPONSE, MAX_TEXT * 4)
    response_text = raw_response.decode("utf-8", errors="replace") if raw_response else None
    verdict = _validated(TaskEvalRecord, _json(folder, EVAL_RESULT))
    steps, final = _history(_json(folder, HISTORY))
    metrics = _validated(TrialMetrics, _json(folder, METRICS))
    found = _Found(source=HISTORY if steps else None)
    if not steps:
        steps, final, found = _atif_steps(folder)
    return TrialFiles(
        steps=steps, final_answer=final, response_text=response_text,
        steps_source=found.source, steps_note=found.note, trajectory_totals=found.totals,
        response=_parsed(response_text), verdict=verdict,
        mismatches=expectations(verdict.evaluators_results) if verdict else [],
        metrics=metrics, har_note=_har_note(folder), cause=None if verdict is None else cause_of(
            verdict.score, verdict.error_origin, metrics.trial_status if metrics else None,
            verdict.agent_status))


class _Found(BaseModel):
    """Where a trial's steps came from, or why there are none."""

    source: str | None = None
    note: str | None = None
    totals: dict[str, float | None] | None = None


ATIF_NAMES = (ATIF_FILE, "trajectory.json")
"""Where a trial folder may hold an ATIF trajectory (ours; Harbor's name for it)."""


def _atif_steps(folder: Path) -> tuple[list[Step], str | None, _Found]:
    """The steps of the first ATIF trajectory the folder holds; a bad one is a note."""
    for name in ATIF_NAMES:
        if read_regular(folder, name, 0) is None:
            continue
        try:
            trajectory = read_atif(folder, name)
        except AtifError as exc:
            return [], None, _Found(note=f"{name}: {exc.message}")
        except BenchwrightError as exc:  # the atif extra is not installed
            return [], None, _Found(note=exc.message)
        steps = [_atif_step(n, step) for n, step in enumerate(trajectory.steps, 1)]
        final = next((r for s in reversed(steps) for r in reversed(s.results)), None)
        return steps, final, _Found(source=name, totals=_totals(trajectory.final_metrics))
    return [], None, _Found()


def _atif_step(number: int, step: Any) -> Step:
    extra = step.extra or {}
    results = step.observation.results if step.observation else []
    failed = [bool((r.extra or {}).get("is_error")) for r in results]
    thoughts = {"thinking": step.reasoning_content or "",
                ("message" if step.source == "agent" else step.source):
                    content_text(step.message)}
    calls = [{c.function_name: c.arguments} for c in step.tool_calls or []]
    return Step(
        number=number, url=_cut(str(extra.get("url") or "")),
        title=_cut(str(extra.get("title") or "")),
        thoughts={k: _cut(v) for k, v in thoughts.items() if v},
        actions=[_cut(c) for c in calls], calls=_actions(calls, None),
        results=[_cut(content_text(r.content)) for r, bad in zip(results, failed, strict=True)
                 if not bad and r.content],
        errors=[_cut(content_text(r.content)) for r, bad in zip(results, failed, strict=True)
                if bad],
        duration_s=_float(extra.get("duration_s")))


def _totals(final: Any) -> dict[str, float | None] | None:
    if final is None:
        return None
    return {"prompt_tokens": final.total_prompt_tokens,
            "completion_tokens": final.total_completion_tokens,
            "cost_usd": final.total_cost_usd}


def _float(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else None


def _validated(model: type[Any], raw: Any) -> Any:
    try:
        return None if raw is None else model.model_validate(raw)
    except ValidationError:
        return None


def _parsed(text: str | None) -> Any:
    try:
        return None if text is None else json.loads(text)
    except (ValueError, RecursionError):
        return None


def _history(raw: Any) -> tuple[list[Step], str | None]:
    """Steps from browser-use's history (`history`) or a fake runner's (`steps`)."""
    if not isinstance(raw, dict):
        return [], None
    items = raw.get("history") if isinstance(raw.get("history"), list) else raw.get("steps")
    steps = [_step(n, item) for n, item in enumerate(items or [], 1) if isinstance(item, dict)]
    final = next((r for s in reversed(steps) for r in reversed(s.results)), None)
    return steps, final


def _step(number: int, item: dict[str, Any]) -> Step:
    if "done" in item and "model_output" not in item:  # the fake runner's one step
        return Step(number=number, actions=[_cut({"done": item["done"]})],
                    calls=_actions([{"done": {"text": item["done"]}}], None),
                    results=[_cut(item["done"])])
    output, state = _dict(item.get("model_output")), _dict(item.get("state"))
    meta = _dict(item.get("metadata"))
    results = [r for r in item.get("result") or [] if isinstance(r, dict)]
    return Step(
        number=number, url=_cut(state.get("url") or ""), title=_cut(state.get("title") or ""),
        thoughts={k: _cut(output[k]) for k in THOUGHTS if output.get(k)},
        actions=[_cut(a) for a in output.get("action") or []],
        calls=_actions(output.get("action"), state.get("interacted_element")),
        results=[_cut(r["extracted_content"]) for r in results if r.get("extracted_content")],
        errors=[_cut(r["error"]) for r in results if r.get("error")],
        duration_s=_duration(meta))


TARGET_KEYS = ("url", "index", "selector", "query")
TEXT_KEYS = ("text", "value", "content", "keys")


def _actions(actions: Any, elements: Any) -> list[Action]:
    """browser-use's `{name: {args}}` actions with the element each one touched, when recorded."""
    touched = elements if isinstance(elements, list) else []
    out = []
    for i, action in enumerate(actions if isinstance(actions, list) else []):
        if not isinstance(action, dict) or len(action) != 1:
            continue
        [(name, args)] = action.items()
        args = args if isinstance(args, dict) else {"value": args}
        element = touched[i] if i < len(touched) and isinstance(touched[i], dict) else None
        target = next((f"{k} {args[k]}" for k in TARGET_KEYS if args.get(k) is not None), "")
        if element is not None:
            target = f"{target} {_element(element)}".strip()
        rest = {k: v for k, v in args.items() if k not in TARGET_KEYS}
        out.append(Action(name=_cut(str(name), 200), target=_cut(target, 2000),
                          detail=_detail(rest)))
    return out


def _detail(rest: dict[str, Any]) -> str:
    """The text typed or answered as itself; other arguments as compact JSON."""
    texts = [k for k in TEXT_KEYS if isinstance(rest.get(k), str)]
    others = {k: v for k, v in rest.items() if k not in texts[:1]}
    text = _cut(rest[texts[0]]) if texts else ""
    return " ".join(p for p in (text, _cut(others) if others else "") if p)


def _element(element: dict[str, Any]) -> str:
    """`<a> "Sign in"`: an element's tag and its text, name, label or id."""
    attrs = _dict(element.get("attributes"))
    tag = str(element.get("node_name") or element.get("tag_name") or "").lower()
    label = next((str(attrs[k]) for k in ("aria-label", "name", "title", "placeholder", "id")
                  if attrs.get(k)), "") or str(element.get("node_value") or "")
    return (f"<{tag}>" if tag else "") + (f' "{label[:200]}"' if label else "")


def _duration(meta: dict[str, Any]) -> float | None:
    start, end = meta.get("step_start_time"), meta.get("step_end_time")
    if isinstance(start, int | float) and isinstance(end, int | float):
        return round(float(end) - float(start), 3)
    return None


def _har_note(folder: Path) -> str | None:
    path = folder / NETWORK_HAR
    if path.is_symlink() or not path.is_file():
        return "no network.har in this trial"
    if path.stat().st_size > MAX_HAR:
        return f"network.har is larger than {MAX_HAR // 2**20} MB: not listed here"
    return None


def har_entries(folder: Path) -> list[HarEntry]:
    """The HAR's exchanges, in order (at most MAX_ENTRIES; empty when unreadable)."""
    har = _json(folder, NETWORK_HAR, MAX_HAR)
    log = har.get("log") if isinstance(har, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        return []
    return [_entry(i, e) for i, e in enumerate(entries[:MAX_ENTRIES]) if isinstance(e, dict)]


def _entry(index: int, entry: dict[str, Any]) -> HarEntry:
    request = _dict(entry.get("request"))
    response = _dict(entry.get("response"))
    content = _dict(response.get("content"))
    post = _dict(request.get("postData"))
    body = content.get("text") if content.get("encoding") != "base64" else None
    return HarEntry(
        index=index, method=_cut(request.get("method") or "", 32),
        url=_cut(request.get("url") or "", 8192), status=_int(response.get("status")),
        mime=_cut(content.get("mimeType") or "", 200), size=_int(content.get("size")),
        time_ms=float(entry["time"]) if isinstance(entry.get("time"), int | float) else 0.0,
        started=_cut(entry.get("startedDateTime") or "", 64),
        request_headers=_headers(request.get("headers")), post_body=_cut(post.get("text") or "",
                                                                          MAX_BODY),
        response_headers=_headers(response.get("headers")),
        response_body=_cut(body or "", MAX_BODY))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _headers(value: Any) -> list[tuple[str, str]]:
    items = value if isinstance(value, list) else []
    return [(_cut(h.get("name") or "", 256), _cut(h.get("value") or "", 8192))
            for h in items[:500] if isinstance(h, dict)]
