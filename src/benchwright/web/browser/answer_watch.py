"""The agent's chat model, watched for final responses that do not fit the schema.

With a final response schema, browser-use's `done` takes `{success, data}`. Two ways a model can
miss it, told apart here from the validation error behind the model call's failure:
- it ignores the schema and answers `done` with free text (`{"text": ..., "success": ...}`): the
  text is kept and the run ends there as if it had answered (the answer then goes through the
  response adapter: a model that ignores the format once will not start using it);
- it fills the schema with values it does not allow (a status outside the six codes): the error is
  kept and browser-use's own retry shows it to the model; if no valid response follows, the trial
  is an agent error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from benchwright.web.browser.trial_agent import TimedModel
from benchwright.web.evaluation.final_response import INVALID_RESPONSE, STATUS_CODES
from benchwright.web.evaluation.response_adapter import ResponseStatus
from benchwright.web.evaluation.tasks import TaskType

STAND_IN = "answered in free text"
"""`error_details` of the stand-in `done` that ends a run answered in free text (history.json
holds it; the trial's answer is the free text, in TrialOutcome.final_text)."""


@dataclass(frozen=True)
class ProseAnswer:
    """A `done` in free text, given where the schema was asked for."""

    text: str
    success: bool | None


class WatchedModel(TimedModel):
    """A timed chat model that records prose answers and invalid final responses."""

    def __init__(self, inner: Any, task_type: TaskType) -> None:
        super().__init__(inner)
        self.task_type = task_type
        self.prose: ProseAnswer | None = None
        self.invalid: list[str] = []

    async def ainvoke(self, messages: list[Any], output_format: Any = None, **kwargs: Any) -> Any:
        """The wrapped call; a free-text `done` becomes the end of the run."""
        try:
            return await super().ainvoke(messages, output_format, **kwargs)
        except Exception as exc:
            validation = validation_cause(exc)
            if validation is None or not _agent_call(output_format):
                raise
            prose = plain_done(validation)
            if prose is None:
                self.invalid.extend(invalid_fields(validation))
                raise
            self.prose = prose
            usage = usage_of(validation)
            if self.calls:  # the call just recorded as failed did answer: its usage is known
                self.calls[-1] = (self.calls[-1][0], usage)
            return self._finish(output_format, prose, usage)

    def _finish(self, output_format: type[BaseModel], prose: ProseAnswer, usage: Any) -> Any:
        from browser_use.llm.views import ChatInvokeCompletion

        # a stand-in that ends the run; the trial reads `prose`, never this data
        data = {"task_type": self.task_type.value, "status": ResponseStatus.UNKNOWN_ERROR.value,
                "retrieved_data": None, "error_details": STAND_IN}
        done = {"done": {"success": bool(prose.success), "data": data}}
        fields = {name: "" for name, f in output_format.model_fields.items()
                  if f.is_required() and name != "action"}
        return ChatInvokeCompletion(
            completion=output_format.model_validate({**fields, "action": [done]}), usage=usage)


def _agent_call(output_format: Any) -> bool:
    return isinstance(output_format, type) and "action" in getattr(output_format,
                                                                   "model_fields", {})


def validation_cause(exc: BaseException) -> ValidationError | None:
    """The pydantic validation error behind a model call's failure, if that is what it was."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, ValidationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def usage_of(error: ValidationError) -> Any:
    """The token usage of the call whose answer failed validation. The chat model had already
    read it from the response when it validated the answer, and the error drops it; it is
    recovered from that call's frame, so the tokens of a free-text answer are still counted."""
    trace = error.__traceback__
    while trace is not None:
        usage = trace.tb_frame.f_locals.get("usage")
        if usage is not None and hasattr(usage, "prompt_tokens"):
            return usage
        trace = trace.tb_next
    return None


def plain_done(error: ValidationError) -> ProseAnswer | None:
    """A `done` that gave text instead of the structured `data`."""
    for item in error.errors():
        loc, given = item["loc"], item.get("input")
        if (item["type"] == "missing" and loc[-2:] == ("done", "data")
                and isinstance(given, dict) and isinstance(given.get("text"), str)):
            success = given.get("success")
            return ProseAnswer(text=given["text"],
                               success=success if isinstance(success, bool) else None)
    return None


def invalid_fields(error: ValidationError) -> list[str]:
    """What was wrong with a structured final response, one line per field."""
    found = []
    for item in error.errors():
        loc = [str(part) for part in item["loc"]]
        if "done" not in loc or "data" not in loc[loc.index("done"):]:
            continue
        field = ".".join(loc[loc.index("data") + 1:]) or "data"
        found.append(f"{INVALID_RESPONSE}: {field} = {item.get('input')!r}: {item['msg']}"
                     + (f" (the six codes: {', '.join(STATUS_CODES)})" if field == "status"
                        else ""))
    return found
