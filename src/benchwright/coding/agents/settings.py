"""`AgentSettings`: limits, endpoint and retries of the agents that call an LLM (`-A key=value`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchwright.llm.urls import check_base_url


class Thinking(StrEnum):
    """SCBench's thinking presets (`slop-code run ... thinking=low`)."""

    NONE = "none"
    """No thinking setting: the agent's own default."""
    DISABLED = "disabled"
    """Thinking off (a budget of 0)."""
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


# The budgets SCBench gives its presets (its claude_code adapter's `_THINKING_TOKEN_MAP`); the
# agents that take an effort level instead read them back as low, medium and high.
THINKING_BUDGETS: dict[Thinking, int | None] = {
    Thinking.NONE: None, Thinking.DISABLED: 0, Thinking.LOW: 4000, Thinking.MEDIUM: 10000,
    Thinking.HIGH: 31999}


class AgentSettings(BaseModel):
    """Limits, endpoint and retry policy for agents that call an LLM (`-A key=value` on the CLI)."""

    model_config = ConfigDict(allow_inf_nan=False)

    base_url: str | None = None
    """The model provider's base URL (for `mini`: an OpenAI-compatible `/v1` URL); None: the
    provider's own. Point it at `benchwright testing fake-llm` to run offline."""
    step_limit: int = Field(default=100, ge=0, le=1_000_000)
    """Model calls allowed per checkpoint (0: no limit)."""
    cost_limit_usd: float = Field(default=3.0, ge=0)
    """Spend allowed per checkpoint in US dollars (0: no limit)."""
    command_timeout_s: float = Field(default=300.0, gt=0)
    """Wall-clock limit of one tool command the agent runs."""
    request_timeout_s: float = Field(default=600.0, gt=0)
    """Seconds one model call may take before it counts as a provider timeout."""
    llm_retries: int = Field(default=6, ge=0, le=1000)
    """Retries of a model call that hit a 429, a 5xx, a timeout or a broken reply."""
    retry_backoff_s: float = Field(default=2.0, ge=0)
    """First wait before such a retry; doubled each time, at most 60 s (or the retry-after)."""
    infra_retries: int = Field(default=2, ge=0, le=1000)
    """Times a checkpoint is re-run from its starting files after an infrastructure error."""
    infra_backoff_s: float = Field(default=60.0, ge=0)
    """First wait before re-running a checkpoint; doubled each time."""
    input_price_per_mtok: float | None = Field(default=None, ge=0)
    """US dollars per million prompt tokens, overriding the price table (custom models)."""
    output_price_per_mtok: float | None = Field(default=None, ge=0)
    """US dollars per million generated tokens, overriding the price table."""
    package_indexes: bool = False
    """With `--agent-network`: the agent's sandbox may also reach the package indexes (PyPI and
    the configured ones). `mini`'s commands, which never call the model, reach them anyway."""
    thinking_budget: int | None = Field(default=None, ge=0, le=10**9)
    """Reasoning tokens per model call for agents that take a budget (claude_code, gemini; codex
    and opencode map it to an effort level); None: the agent's default, 0: thinking off. Set
    from `thinking` when a preset is given."""
    thinking: Thinking | None = None
    """The SCBench preset the run was given (`--thinking`), recorded as given; its budget is
    `thinking_budget`. None: no preset (an explicit budget, or none at all)."""

    @model_validator(mode="after")
    def _preset_budget(self) -> Self:
        if self.thinking is None:
            return self
        budget = THINKING_BUDGETS[self.thinking]
        if self.thinking_budget is None:
            self.thinking_budget = budget
        elif self.thinking_budget != budget:
            raise ValueError(f"thinking {self.thinking} means a budget of {budget}, not "
                             f"{self.thinking_budget}: give a preset or a budget, not both")
        return self

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return None if value is None else check_base_url(value)
