"""The final response an agent is asked for, as a schema its `done` action must satisfy.

browser-use validates the agent's last action against `FinalResponse` (its `output_model_schema`),
so a structured answer arrives already checked and is written to `agent_response.json` as it is;
answers that do not fit go through the response adapter instead (`response_source` in metrics).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchwright.web.evaluation.response_adapter import ResponseStatus
from benchwright.web.evaluation.tasks import TaskType


class ResponseSource(StrEnum):
    """Which path produced a trial's agent_response.json."""

    SCHEMA = "schema"
    """The agent's validated final response, as it gave it."""
    ADAPTER = "adapter"
    """The response adapter, from the agent's free text (or from its failure)."""


class FinalResponse(BaseModel):
    """The agent's final response: the official WebArena Verified agent response."""

    model_config = ConfigDict(extra="forbid")

    task_type: TaskType = Field(description=(
        "RETRIEVE when the task asks for information, MUTATE when it asks to change something "
        "on the site, NAVIGATE when it asks to open a particular page."))
    """The kind of task the agent believes it was given."""
    status: ResponseStatus = Field(description=(
        "SUCCESS, or the error code that explains why the task could not be done."))
    """SUCCESS or one of the five error codes."""
    retrieved_data: list[Any] | None = Field(default=None, description=(
        "For RETRIEVE tasks that succeeded: the requested values as a list (numbers as numbers, "
        "one item per value asked for). null for MUTATE and NAVIGATE tasks and for errors."))
    """The answer's items (RETRIEVE and SUCCESS); null otherwise."""
    error_details: str | None = Field(default=None, description=(
        "A short explanation when status is an error, else null."))
    """Why the status is an error (not scored)."""


INVALID_RESPONSE = "invalid final response"
"""How the errors of a final response that failed the schema begin."""

STATUS_CODES = tuple(status.value for status in ResponseStatus)
"""The six status codes, in the order the prompt lists them."""
