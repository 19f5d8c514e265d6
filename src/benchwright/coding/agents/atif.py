"""ATIF out: a checkpoint's `trajectory.json` as an ATIF trajectory (`trajectory.atif.json`).

ATIF is the Agent Trajectory Interchange Format of Harbor's RFC 0001, read by other harnesses'
viewers and by SFT/RL pipelines. `to_atif` maps our normalised steps onto ATIF's: the model's
turns become `agent` steps (text, reasoning, tool calls, per-step token metrics) and the tools'
answers that follow become that step's `observation`; the trajectory's usage becomes
`final_metrics`. The document is written through the shared ATIF module (`benchwright.files.atif`:
validated with the `atif` package's models, keys redacted): `write_atif` skips with a logged note
when the extra is missing, so a run never fails for want of it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from benchwright.coding.agents.base import Usage
from benchwright.coding.agents.trajectory import (
    TRAJECTORY_FILE,
    CostSource,
    Role,
    Step,
    ToolCall,
    ToolResult,
    Trajectory,
)
from benchwright.errors import BenchwrightError, UserInputError, install_command
from benchwright.files.atif import (
    ATIF_FILE,
    Export,
    atif_text,
    available,
    content_text,
    present,
    schema_version,
    timestamp,
    validated,
)
from benchwright.files.atomic import write_text_atomic
from benchwright.files.nofollow import TreeWalk, read_regular, shown
from benchwright.files.redaction import Redactor
from benchwright.files.untrusted import MAX_BYTES, parse_untrusted_json

__all__ = ["ATIF_FILE", "Export", "export_run", "from_atif", "from_atif_model", "to_atif",
           "write_atif"]

log = logging.getLogger(__name__)

Json = dict[str, Any]


def to_atif(trajectory: Trajectory, session_id: str | None = None) -> Json:
    """`trajectory` as an ATIF document (plain JSON values; `validated` checks it)."""
    doc: Json = {
        "schema_version": schema_version(),
        "session_id": session_id,
        "agent": {"name": trajectory.agent, "version": trajectory.agent_version or "unknown",
                  "model_name": trajectory.model},
        "steps": (steps := _steps(trajectory.steps)),
        "final_metrics": _final_metrics(trajectory, len(steps)),
        "extra": present({"source_format": trajectory.format, "raw_log": trajectory.raw_log}),
    }
    if trajectory.agent_version is None:
        doc["notes"] = "agent.version 'unknown': the agent did not report its version"
    return doc


def _steps(steps: list[Step]) -> list[Json]:
    out: list[Json] = []
    for step in steps:
        if step.role is Role.ASSISTANT:
            out.append(_agent_step(step, len(out) + 1))
        elif step.role is Role.TOOL:
            _observe(out, step.tool_results or [ToolResult(output=step.text)])
        else:
            if step.tool_results:  # tool answers in a `user` message (Anthropic's way)
                _observe(out, step.tool_results)
            if step.text or not step.tool_results:
                out.append(_plain(step, len(out) + 1))
    return out


def _plain(step: Step, step_id: int) -> Json:
    return {"step_id": step_id, "source": step.role.value, "message": step.text,
            "timestamp": timestamp(step.timestamp)}


def _agent_step(step: Step, step_id: int) -> Json:
    calls = [_call(call, step_id, i) for i, call in enumerate(step.tool_calls, start=1)]
    out: Json = {"step_id": step_id, "source": "agent", "message": step.text,
                 "timestamp": timestamp(step.timestamp),
                 "reasoning_content": step.thinking or None,
                 "tool_calls": calls or None, "metrics": _metrics(step),
                 "extra": {"duration_s": step.duration_s} if step.duration_s is not None else None}
    if step.tool_results:
        _observe([out], step.tool_results)
    return out


def _call(call: ToolCall, step_id: int, index: int) -> Json:
    # ATIF wants an id and an object: a call without one gets a stable made-up id, arguments
    # that were not JSON (a raw string) are kept under `raw`
    arguments = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
    return {"tool_call_id": call.id or f"step{step_id}-call{index}",
            "function_name": call.name, "arguments": arguments}


def _metrics(step: Step) -> Json | None:
    values = {"prompt_tokens": step.input_tokens, "completion_tokens": step.output_tokens,
              "cached_tokens": step.cache_read_tokens}
    return values if any(v is not None for v in values.values()) else None


def _observe(out: list[Json], results: list[ToolResult]) -> None:
    """Tool results go to the agent step that asked for them (the latest one); results with no
    agent step before them become a system step's observation."""
    if not out or (out[-1]["source"] != "agent" and "observation" not in out[-1]):
        out.append({"step_id": len(out) + 1, "source": "system", "message": ""})
    target = out[-1]
    ids = {call["tool_call_id"] for call in target.get("tool_calls") or []}
    observation = target.setdefault("observation", {"results": []})
    observation["results"].extend(_result(result, ids) for result in results)


def _result(result: ToolResult, call_ids: set[str]) -> Json:
    known = result.call_id if result.call_id in call_ids else None
    extra: Json = {"is_error": True} if result.is_error else {}
    if result.call_id is not None and known is None:
        extra["call_id"] = result.call_id  # answers a call this step does not hold
    if result.name:
        extra["tool"] = result.name
    return {"source_call_id": known, "content": result.output, "extra": extra or None}


def _final_metrics(trajectory: Trajectory, n_steps: int) -> Json:
    usage = trajectory.usage
    return {"total_prompt_tokens": usage.input_tokens,
            "total_completion_tokens": usage.output_tokens,
            "total_cached_tokens": usage.cached_input_tokens,
            "total_cost_usd": usage.cost_usd,  # None: unknown, never 0
            "total_steps": n_steps,
            "extra": present({"model_calls": usage.steps,
                               "cost_source": trajectory.cost_source.value,
                               "exit_status": trajectory.exit_status.value,
                               "exit_code": trajectory.exit_code, "error": trajectory.error})}


def atif_json(trajectory: Trajectory, session_id: str | None = None,
              redactor: Redactor | None = None) -> str:
    """The ATIF file's text for `trajectory`, validated (secret values replaced first)."""
    return atif_text(to_atif(trajectory, session_id), redactor)


def write_atif(agent_dir: Path, session_id: str | None = None) -> Path | None:
    """Write `agent_dir/trajectory.atif.json` from the `trajectory.json` the agent left there.

    Returns the path, or None when there is no trajectory (agents that call no model), when it
    is not a valid trajectory, or when the `atif` extra is missing (each logged)."""
    data = read_regular(agent_dir, TRAJECTORY_FILE, MAX_BYTES)  # never through a link
    if data is None:
        return None
    if not available():
        log.info("no ATIF trajectory written: the atif extra is not installed (%s)",
                 install_command("atif"))
        return None
    try:
        text = atif_json(Trajectory.model_validate_json(data), session_id)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        log.warning("no ATIF trajectory written for %s: %s", agent_dir / TRAJECTORY_FILE,
                    str(exc).splitlines()[0])
        return None
    path = agent_dir / ATIF_FILE
    write_text_atomic(path, text)
    return path


def export_run(run_dir: Path, out: Path, redactor: Redactor) -> Export:
    """Every checkpoint trajectory of the coding run `run_dir` as ATIF, under `out` at the same
    relative place (`PROBLEM/trial_N/CHECKPOINT/trajectory.atif.json`). The run folder is read as
    hostile: no link is followed, each file is bounded and checked before it is converted."""
    validated({"schema_version": schema_version(), "agent": {"name": "-", "version": "-"},
               "steps": []})  # the extra is there, before anything is read
    result = Export()
    walk = TreeWalk(run_dir)
    for entry in walk:
        if entry.kind == "file" and entry.rel.endswith(f"/agent/{TRAJECTORY_FILE}"):
            _export_one(run_dir, entry.rel, out, redactor, result)
    result.skipped.extend(walk.skipped)
    return result


def _export_one(run_dir: Path, rel: str, out: Path, redactor: Redactor, result: Export) -> None:
    session = rel.removesuffix(f"/agent/{TRAJECTORY_FILE}")
    try:
        trajectory = _read_trajectory(run_dir, rel)
        text = atif_json(trajectory, session, redactor)
    except (BenchwrightError, ValueError) as exc:
        reason = exc.message if isinstance(exc, BenchwrightError) else str(exc).splitlines()[0]
        result.skipped.append(f"{shown(rel)}: {reason}")
        return
    target = f"{session}/{ATIF_FILE}"
    (out / session).mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / target, text)
    result.written.append(target)


def _read_trajectory(run_dir: Path, rel: str) -> Trajectory:
    data = read_regular(run_dir, rel, MAX_BYTES + 1)
    if data is None:
        raise UserInputError("not a regular file (a link, or replaced while reading)")
    if len(data) > MAX_BYTES:
        raise UserInputError(f"larger than {MAX_BYTES // 2**20} MiB")
    value = parse_untrusted_json(data, run_dir / rel, what="trajectory.json")
    return Trajectory.model_validate(value)


# ATIF in: a trajectory any tool wrote in ATIF, read back as ours (the viewer's transcript)

def from_atif(value: Any) -> Trajectory | None:
    """An ATIF document (hostile: any JSON value) as a `Trajectory`; None when it is not valid
    ATIF or the `atif` extra is missing."""
    if not available() or not isinstance(value, dict):
        return None
    try:
        doc = validated(value)
    except ValueError:
        return None
    return from_atif_model(doc)


def from_atif_model(doc: Any) -> Trajectory:
    """A validated `atif.Trajectory` (as `atif_format.read_atif` gives) as a `Trajectory`."""
    steps: list[Step] = []
    for step in doc.steps:
        steps.extend(_our_steps(step))
    return Trajectory(agent=doc.agent.name, agent_version=doc.agent.version,
                      model=doc.agent.model_name, steps=steps,
                      usage=_usage(doc.final_metrics, steps), cost_source=_cost_source(doc))


def _our_steps(step: Any) -> list[Step]:
    role = {"system": Role.SYSTEM, "user": Role.USER}.get(step.source, Role.ASSISTANT)
    metrics = step.metrics
    ours = Step(role=role, text=content_text(step.message), thinking=step.reasoning_content or "",
                tool_calls=[ToolCall(id=c.tool_call_id, name=c.function_name,
                                     arguments=c.arguments) for c in step.tool_calls or []],
                input_tokens=metrics.prompt_tokens if metrics else None,
                output_tokens=metrics.completion_tokens if metrics else None,
                cache_read_tokens=metrics.cached_tokens if metrics else None,
                timestamp=step.timestamp)
    if step.observation is None:
        return [ours]
    results = [ToolResult(call_id=r.source_call_id, output=content_text(r.content),
                          is_error=bool((r.extra or {}).get("is_error")))
               for r in step.observation.results]
    return [ours, Step(role=Role.TOOL, tool_results=results)]


def _usage(final: Any, steps: list[Step]) -> Usage:
    turns = sum(1 for s in steps if s.role is Role.ASSISTANT)
    if final is None:
        return Usage(cost_usd=None, steps=turns)
    return Usage(input_tokens=final.total_prompt_tokens or 0,
                 output_tokens=final.total_completion_tokens or 0,
                 cached_input_tokens=final.total_cached_tokens or 0,
                 cost_usd=final.total_cost_usd, steps=turns)


def _cost_source(doc: Any) -> CostSource:
    final = doc.final_metrics
    return CostSource.AGENT if final and final.total_cost_usd is not None else CostSource.UNKNOWN
