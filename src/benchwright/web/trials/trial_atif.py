"""A web trial as an ATIF trajectory (`trajectory.atif.json` in the trial folder).

Built from the trial's own files, so the same conversion serves a trial that just ended and an
old run's (`export atif`): browser-use's history.json (or a fake runner's one-step history) and
metrics.json. Each browser-use step is an `agent` step: its actions are tool calls
(`click_element_by_index`, `go_to_url`, `done`, ...), what each reported (text or error) is the
observation, with the page the step led to (url, title); the model's thinking is the reasoning,
its next goal the message, and the step's model calls its metrics when the runner recorded them
(`TrialOutcome.step_usage`). `final_metrics` holds the trial's tokens and cost (an unknown cost
stays absent, never 0). The task's intent is the `user` step. Files are written through
`benchwright.files.atif` (keys redacted, validated).
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.errors import BenchwrightError
from benchwright.files.atif import (
    ATIF_FILE,
    AtifError,
    Export,
    atif_text,
    available,
    present,
    read_atif,
    schema_version,
    timestamp,
    validated,
)
from benchwright.files.atomic import write_text_atomic
from benchwright.files.nofollow import read_regular
from benchwright.files.redaction import Redactor
from benchwright.files.untrusted import parse_untrusted_json
from benchwright.version import __version__
from benchwright.web.browser.answer_watch import STAND_IN
from benchwright.web.browser.trial_models import StepUsage
from benchwright.web.evaluation.scoring import HISTORY, METRICS, TRIAL_PREFIX
from benchwright.web.trials.layout import WebRunLayout

MAX_HISTORY = 64 * 2**20
"""The largest history.json converted."""

log = logging.getLogger(__name__)

Json = dict[str, Any]


@dataclass(frozen=True)
class TrialIdentity:
    """Who ran a trial, for the trajectory's `agent` and `user` step."""

    agent: str
    """The web agent's name."""
    model: str | None = None
    """Its model, when it has one."""
    intent: str | None = None
    """The task's intent (the `user` step), when known."""
    answer: str | None = None
    """The agent's final answer as it gave it (a free-text `done` is a stand-in in history.json)."""


def trial_doc(folder: Path, session_id: str, who: TrialIdentity,
              usage: list[StepUsage] | None = None) -> Json:
    """The ATIF document of the trial in `folder` (hostile files: bounded, no link)."""
    history = _read_json(folder, HISTORY, MAX_HISTORY)
    metrics = _read_json(folder, METRICS, 2**20)
    steps: list[Json] = []
    if who.intent:
        steps.append({"step_id": 1, "source": "user", "message": who.intent})
    by_step = {u.step: u for u in usage or []}
    items = _items(history)
    for number, item in enumerate(items, start=1):
        following = items[number] if number < len(items) else None
        steps.append(_step(len(steps) + 1, number, item, following, by_step.get(number)))
    _free_text_done(steps, who.answer)
    version = _agent_version(who.agent)
    doc: Json = {"schema_version": schema_version(), "session_id": session_id,
                 "agent": present({"name": who.agent, "version": version or "unknown",
                                   "model_name": who.model}),
                 "steps": steps, "final_metrics": _final(metrics, len(steps)),
                 "extra": {"source_format": "browser-use history.json", "track": "web"}}
    if version is None:
        doc["notes"] = "agent.version 'unknown': not recorded for this agent"
    return doc


def _read_json(folder: Path, name: str, limit: int) -> Any:
    data = read_regular(folder, name, limit + 1)
    if data is None or len(data) > limit:
        return None
    try:
        return parse_untrusted_json(data, folder / name, what=name)
    except BenchwrightError:
        return None


def _items(history: Any) -> list[dict[str, Any]]:
    """browser-use's `history` items, or a fake runner's `steps`."""
    if not isinstance(history, dict):
        return []
    items = history.get("history") if isinstance(history.get("history"), list) \
        else history.get("steps")
    return [item for item in items or [] if isinstance(item, dict)]


def _step(step_id: int, number: int, item: dict[str, Any], following: dict[str, Any] | None,
          usage: StepUsage | None) -> Json:
    if "done" in item and "model_output" not in item:  # the fake runner's one step
        item = {"model_output": {"action": [{"done": {"text": item["done"]}}]},
                "result": [{"extracted_content": item["done"], "is_done": True}]}
    output, state = _dict(item.get("model_output")), _dict(item.get("state"))
    calls = _calls(output.get("action"), step_id)
    meta = _dict(item.get("metadata"))
    step: Json = {
        "step_id": step_id, "source": "agent", "message": _text(output.get("next_goal")),
        "timestamp": timestamp(meta.get("step_start_time")),
        "reasoning_content": _text(output.get("thinking")) or None,
        "tool_calls": calls or None,
        "observation": _observation(item.get("result"), calls, _dict(
            (following or {}).get("state"))),
        "extra": present({"url": _text(state.get("url")) or None,
                          "title": _text(state.get("title")) or None,
                          "evaluation_previous_goal":
                              _text(output.get("evaluation_previous_goal")) or None,
                          "memory": _text(output.get("memory")) or None,
                          "duration_s": _duration(meta)}) or None}
    if not (usage is not None and usage.calls == 0 and step["reasoning_content"]):
        step.update(_metrics(usage))  # thinking with no call seen: the count is not known
    return step


def _free_text_done(steps: list[Json], answer: str | None) -> None:
    """A `done` answered in free text is a harness stand-in in history.json: the trajectory shows
    the model's own answer instead (or says it is a stand-in when the answer is not known)."""
    for step in steps:
        for call in step.get("tool_calls") or []:
            data = _dict(call["arguments"].get("data"))
            if call["function_name"] != "done" or data.get("error_details") != STAND_IN:
                continue
            call["extra"] = {"free_text": True}
            if answer is None:
                continue
            call["arguments"] = {"text": answer}
            for result in (step.get("observation") or {}).get("results", []):
                if result["source_call_id"] == call["tool_call_id"]:
                    result["content"] = answer


def _calls(actions: Any, step_id: int) -> list[Json]:
    calls = []
    for index, action in enumerate(actions if isinstance(actions, list) else [], start=1):
        if not isinstance(action, dict) or len(action) != 1:
            continue
        [(name, args)] = action.items()
        calls.append({"tool_call_id": f"step{step_id}-action{index}", "function_name": str(name),
                      "arguments": args if isinstance(args, dict) else {"value": args}})
    return calls


def _observation(results: Any, calls: list[Json], page: dict[str, Any]) -> Json | None:
    """What each action reported, on the page it led to (the next step's page)."""
    items = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
    where = present({"url": _text(page.get("url")) or None,
                     "title": _text(page.get("title")) or None})
    out = []
    for index, result in enumerate(items):
        error = _text(result.get("error"))
        extra = {**where, **({"is_error": True} if error else {}),
                 **({"is_done": True} if result.get("is_done") else {})}
        out.append({"source_call_id": calls[index]["tool_call_id"] if index < len(calls)
                    else None,
                    "content": error or _text(result.get("extracted_content")),
                    "extra": extra or None})
    return {"results": out} if out else None


def _metrics(usage: StepUsage | None) -> Json:
    if usage is None:
        return {}
    if usage.calls == 0:
        return {"llm_call_count": 0}  # a step with no model call (an initial action)
    values = present({"prompt_tokens": usage.input_tokens,
                      "completion_tokens": usage.output_tokens,
                      "cached_tokens": usage.cached_input_tokens,
                      "cost_usd": usage.cost_usd})  # None: unknown, never 0
    return {"llm_call_count": usage.calls, "metrics": values or None}


def _final(metrics: Any, n_steps: int) -> Json:
    m = _dict(metrics)
    known = "input_tokens" in m  # an old or missing metrics.json: nothing known
    return present({
        "total_prompt_tokens": _int(m.get("input_tokens")) if known else None,
        "total_completion_tokens": _int(m.get("output_tokens")) if known else None,
        "total_cached_tokens": _int(m.get("cached_input_tokens")) if known else None,
        "total_cost_usd": _number(m.get("cost_usd")),  # absent: unknown, never 0
        "total_steps": n_steps,
        "extra": present({k: m.get(k) for k in (
            "trial_status", "response_status", "duration_s", "model_time_s", "errors",
            "agent_error")}) or None})


def _agent_version(agent: str) -> str | None:
    """browser-use's installed version; benchwright's for its own scripted agent."""
    if agent == "scripted":
        return __version__
    if agent != "browser-use":
        return None
    try:
        return importlib.metadata.version("browser-use")
    except importlib.metadata.PackageNotFoundError:
        return None


def _duration(meta: dict[str, Any]) -> float | None:
    start, end = _number(meta.get("step_start_time")), _number(meta.get("step_end_time"))
    return round(end - start, 3) if start is not None and end is not None else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and value == value else None  # NaN is not a number here


def write_trial_atif(folder: Path, session_id: str, who: TrialIdentity,
                     usage: list[StepUsage] | None, redactor: Redactor | None) -> Path | None:
    """Write `folder/trajectory.atif.json` for a trial that just ended; None (logged) when the
    `atif` extra is missing or the document is not valid ATIF (the run goes on)."""
    if not available():
        log.info("no ATIF trajectory written: the atif extra is not installed")
        return None
    try:
        text = atif_text(trial_doc(folder, session_id, who, usage), redactor)
    except ValueError as exc:
        log.warning("no ATIF trajectory written for %s: %s", folder,
                    str(exc).splitlines()[0])
        return None
    write_text_atomic(folder / ATIF_FILE, text)
    return folder / ATIF_FILE


def export_web_run(run_dir: Path, out: Path, redactor: Redactor, agent: str,
                   model: str | None, intents: dict[int, str] | None = None) -> Export:
    """Every trial of the web run `run_dir` as ATIF, under `out` as
    `TASK_ID/trial_N/trajectory.atif.json`: the trial's own ATIF file when it has one (whatever
    wrote it; validated), else its history converted."""
    validated({"schema_version": schema_version(), "agent": {"name": "-", "version": "-"},
               "steps": []})  # the extra is there, before anything is read
    result = Export()
    if (run_dir / "tasks").is_symlink():
        result.skipped.append("tasks: a link, not followed")
        return result
    for folder in WebRunLayout(run_dir).trial_dirs():
        session = f"{folder.parent.name}/{folder.name}"
        if folder.is_symlink() or folder.parent.is_symlink() \
                or not folder.name.startswith(TRIAL_PREFIX):
            result.skipped.append(f"{session}: a link, not a trial folder")
            continue
        intent = (intents or {}).get(int(folder.parent.name)) \
            if folder.parent.name.isdigit() else None
        _export_trial(folder, session, out, redactor, TrialIdentity(agent, model, intent),
                      result)
    return result


def _export_trial(folder: Path, session: str, out: Path, redactor: Redactor,
                  who: TrialIdentity, result: Export) -> None:
    try:
        text = atif_text(_existing(folder) or trial_doc(folder, session, who), redactor)
    except (BenchwrightError, ValueError) as exc:
        reason = exc.message if isinstance(exc, BenchwrightError) else str(exc).splitlines()[0]
        result.skipped.append(f"{session}: {reason}")
        return
    (out / session).mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / session / ATIF_FILE, text)
    result.written.append(f"{session}/{ATIF_FILE}")


def _existing(folder: Path) -> Json | None:
    """The trial's own ATIF file as JSON values, None when it has none; AtifError when the one
    it has is not valid."""
    if read_regular(folder, ATIF_FILE, 0) is None:
        return None
    try:
        trajectory = read_atif(folder, ATIF_FILE)
    except AtifError as exc:
        raise AtifError(f"{ATIF_FILE}: {exc.message}") from None
    return dict(trajectory.model_dump(mode="json", exclude_none=True))
