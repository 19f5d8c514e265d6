"""The optional LLM pass over failures (`benchwright metrics causes RUN_DIR`): each failed
checkpoint's deterministic cause, failing tests and the agent's transcript (its last part) sent
to the judge's model with the judge's options, which answers one cause of the same closed set.
Answers are kept in the run's failure_causes.json, keyed by what was asked: asked again, a
checkpoint whose evidence did not change is not sent again; the report uses an answer only while
its evidence is unchanged. Recorded into and replayed from cassettes like the judge's requests.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from benchwright.coding.attempts.traffic import judge_proxy
from benchwright.coding.report.causes import run_failure_evidence, run_failures
from benchwright.files.atomic import write_json_atomic
from benchwright.files.nofollow import read_regular
from benchwright.judge.models import JudgeSettings
from benchwright.llm.models import LlmTraffic
from benchwright.report_parts.failure_causes import (
    CAUSES,
    CauseTable,
    FailedUnit,
    FailureCause,
    cause_table,
)

REFINED_FILE = "failure_causes.json"
"""In the run folder."""
MAX_TRANSCRIPT = 6000
"""Characters of the agent's transcript sent (its end: where it stopped)."""
SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "required": ["cause", "exception", "reason"],
    "properties": {"cause": {"type": "string", "enum": [str(c) for c in CAUSES]},
                   "exception": {"type": ["string", "null"]},
                   "reason": {"type": "string"}}}


Prompts = Callable[[Path, list[FailedUnit] | None], list[tuple[FailedUnit, str]]]
"""A track's failed units (those given, else all) and the text sent about each: the coding
track's below, the web track's in web/trials/refine.py."""


class RefinedCause(BaseModel):
    """The model's answer for one failed checkpoint."""

    unit: str
    """`problem/trial_N/checkpoint`."""
    evidence: str
    """sha256 of the request's text: the answer holds while the evidence is the same."""
    cause: FailureCause
    """The cause it chose."""
    exception: str | None = None
    """The exception type it named, if any."""
    reason: str
    """Its one-sentence reason."""


class RefinedCauses(BaseModel):
    """failure_causes.json: the LLM pass's answers."""

    format: Literal["benchwright.failure-causes/1"] = "benchwright.failure-causes/1"
    """The file's format and version."""
    model: str
    """The model that answered."""
    answers: list[RefinedCause] = Field(default_factory=list)
    """One per failed checkpoint asked about."""
    errors: list[str] = Field(default_factory=list)
    """Checkpoints the model could not answer for (their rule-based cause stays)."""


def refine_run(run_dir: Path, settings: JudgeSettings, traffic: LlmTraffic | None = None,
               prompts: Prompts | None = None) -> RefinedCauses:
    """Ask the model about every failed checkpoint (web attempt, with the web track's
    `prompts`) whose evidence it has not seen; save and return every answer (kept ones
    included)."""
    from benchwright.judge.providers import make_client

    kept = {a.evidence: a for a in (read_refined(run_dir) or _empty(settings)).answers}
    answers, errors = [], []
    with judge_proxy(settings, traffic, run_dir) as url:
        client = make_client(settings.model_copy(update={"base_url": url})
                             if url else settings)
        for unit, prompt in (prompts or _prompts)(run_dir, None):
            evidence = _digest(settings, prompt)
            try:
                answer = kept.get(evidence) or _ask(client, unit, prompt, evidence)
            except Exception as exc:  # one checkpoint's failure keeps its rule-based cause
                errors.append(f"{unit.unit}: {type(exc).__name__}: {exc}"[:300])
                continue
            answers.append(answer)
    refined = RefinedCauses(model=settings.model, answers=answers, errors=errors)
    write_json_atomic(run_dir / REFINED_FILE, refined.model_dump(mode="json"))
    return refined


def run_causes(run_dir: Path, baseline_dir: Path | None = None) -> CauseTable:
    """The run's failures by cause (the LLM pass's answers put in while they hold), against the
    baseline run's when given."""
    baseline = apply_refined(baseline_dir, run_failures(baseline_dir)) \
        if baseline_dir is not None else None
    return cause_table(apply_refined(run_dir, run_failures(run_dir)), baseline)


def apply_refined(run_dir: Path, units: list[FailedUnit],
                  prompts: Prompts | None = None) -> list[FailedUnit]:
    """The units with the saved answers whose evidence is unchanged put in (marked refined)."""
    saved = read_refined(run_dir)
    if saved is None:
        return units
    by_unit = {a.unit: a for a in saved.answers}
    texts = {u.unit: p for u, p in (prompts or _prompts)(run_dir, units)}
    out = []
    for unit in units:
        answer, prompt = by_unit.get(unit.unit), texts.get(unit.unit)
        if answer is None or prompt is None or not answer.evidence.endswith(_digest_tail(prompt)):
            out.append(unit)  # never asked, or its evidence changed since (a re-grade)
            continue
        out.append(unit.model_copy(update={"cause": answer.cause, "exception": answer.exception,
                                           "detail": answer.reason, "refined": True}))
    return out


def read_refined(run_dir: Path) -> RefinedCauses | None:
    """The run's failure_causes.json, or None (never asked, or unreadable)."""
    data = read_regular(run_dir, REFINED_FILE, limit=64 << 20)
    if data is None:
        return None
    try:
        return RefinedCauses.model_validate_json(data)
    except (ValueError, ValidationError):
        return None


def _empty(settings: JudgeSettings) -> RefinedCauses:
    return RefinedCauses(model=settings.model)


def _prompts(run_dir: Path, units: list[FailedUnit] | None = None
             ) -> list[tuple[FailedUnit, str]]:
    """Each failed checkpoint and the text sent about it."""
    found = []
    for unit, tests, transcript in run_failure_evidence(run_dir, units):
        found.append((unit, "\n".join([
            "A coding agent's checkpoint failed. Sort the failure into exactly one cause of "
            "this closed set: " + ", ".join(str(c) for c in CAUSES) + ".",
            f"Checkpoint: {unit.unit}",
            f"The rules found: {unit.cause} ({unit.detail or 'no detail'}).",
            "Failing tests:", tests or "(none recorded)",
            "The end of the agent's transcript:", transcript[-MAX_TRANSCRIPT:] or "(none)",
            "Answer with the cause, the exception type if the code crashed (else null), and "
            "one sentence saying why."])))
    return found


def _digest(settings: JudgeSettings, prompt: str) -> str:
    """What the answer depends on: the model, its options, and the text (its own digest last,
    so the report can check the text alone)."""
    options = json.dumps({"model": settings.model, "protocol": settings.protocol,
                          "temperature": settings.temperature}, sort_keys=True)
    head = hashlib.sha256(options.encode()).hexdigest()[:16]
    return f"{head}-{_digest_tail(prompt)}"


def _digest_tail(prompt: str) -> str:
    return hashlib.sha256(prompt.encode()).hexdigest()


def _ask(client: Any, unit: FailedUnit, prompt: str, evidence: str) -> RefinedCause:
    exchange = client.ask(prompt, "", SCHEMA)
    payload = exchange.payload
    reply = json.loads(payload) if isinstance(payload, str) else payload
    if not isinstance(reply, dict):
        raise ValueError("the reply held no answer")
    return RefinedCause(unit=unit.unit, evidence=evidence, cause=FailureCause(reply["cause"]),
                        exception=reply.get("exception") or None,
                        reason=str(reply.get("reason", ""))[:500])
