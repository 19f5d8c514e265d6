"""What one browser trial takes and gives back (re-exported by `trial.py`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwright.web.browser.launch import BrowserSettings
from benchwright.web.browser.recorder import RecorderSettings
from benchwright.web.tasks import WebTask

OUTCOME_SCHEMA = "benchwright.web-trial-outcome/1"


class AgentSpec(BaseModel):
    """Which agent drives the browser."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["scripted", "browser-use"]
    """`scripted` plays an action script; `browser-use` asks an OpenAI-compatible model."""
    model: str | None = None
    """The model name (browser-use agent)."""
    base_url: str | None = None
    """The OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8000/v1` (None: OpenAI's)."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key (the key itself is never stored)."""
    script: Path | None = None
    """The action script (scripted agent)."""
    use_vision: bool = True
    """Send screenshots to the model (browser-use agent; the scripted agent never does)."""
    pricing_file: Path | None = None
    """A local litellm-format price table (`{model: {input_cost_per_token, ...}}`) for cost_usd;
    nothing is downloaded."""
    temperature: float | None = None
    """Sampling temperature (None: the endpoint's default)."""
    llm_timeout_s: int = 120
    """Seconds one model call may take."""
    step_timeout_s: int = 180
    """Seconds one agent step may take."""
    max_failures: int = 3
    """Consecutive failed steps after which browser-use stops."""


class LiveLogin(BaseModel):
    """A login form to fill before the trial starts."""

    model_config = ConfigDict(extra="forbid")

    login_url: str
    """The page with the login form."""
    username: str
    """The login name."""
    password: str
    """The password."""


class TrialRequest(BaseModel):
    """One attempt of one task."""

    model_config = ConfigDict(extra="forbid")

    task: WebTask
    """The task."""
    trial_dir: Path
    """Where network.har, history.json and the browser's files go."""
    site_urls: dict[str, str]
    """Site name -> base URL (`{"shopping": "http://127.0.0.1:41233"}`)."""
    agent: AgentSpec
    """The agent."""
    cookies: list[dict[str, Any]] = Field(default_factory=list)
    """Cookies set before the first navigation (CDP cookie objects, see cookies.py)."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    """Headers added to every request (the sites' auto-login headers, see auth.py)."""
    live_logins: list[LiveLogin] = Field(default_factory=list)
    """Log in through these forms before the trial (when no cookies were captured)."""
    max_steps: int = 30
    """Agent steps allowed."""
    timeout_s: float = 1800.0
    """Wall-clock limit for the whole trial."""
    keep_browser_files: bool = False
    """Keep trial_dir/browser (profile, downloads, agent files) after the trial."""
    browser: BrowserSettings = Field(default_factory=BrowserSettings)
    """Chromium settings (used when the trial launches its own browser)."""
    recorder: RecorderSettings = Field(default_factory=RecorderSettings)
    """What the HAR keeps."""


class TrialStatus(StrEnum):
    """How a trial ended."""

    COMPLETED = "completed"
    """The agent finished and claimed success."""
    AGENT_ERROR = "agent_error"
    """The agent finished and reported a failure (its own error report)."""
    STEP_LIMIT = "step_limit"
    """The agent used every step without finishing."""
    FAILED = "failed"
    """The agent stopped early without finishing (too many failed steps)."""
    MODEL_ERROR = "model_error"
    """The model endpoint failed (refused, rate-limited, unreachable): not the agent's fault."""
    TIMEOUT = "timeout"
    """The trial's wall-clock limit ran out."""
    CRASHED = "crashed"
    """The browser or the harness broke."""


class TrialOutcome(BaseModel):
    """What happened in one trial (network.har and history.json are beside it)."""

    schema_: str = Field(default=OUTCOME_SCHEMA, alias="schema")
    """Format version."""
    status: TrialStatus
    """How it ended."""
    final_text: str | None
    """The agent's final answer (its `done` text)."""
    agent_success: bool | None
    """The agent's own success claim; None when it never finished."""
    steps: int
    """Agent steps taken."""
    input_tokens: int
    """Prompt tokens over all model calls."""
    output_tokens: int
    """Completion tokens over all model calls."""
    cost_usd: float
    """Cost from the local price table (0 when the model has no price there)."""
    duration_s: float
    """Wall-clock seconds of the trial, set-up and tear-down included."""
    model_time_s: float
    """Seconds spent waiting for the model (duration minus this is the harness overhead)."""
    errors: list[str]
    """Errors of the agent's steps (failed actions included) and of the harness."""
    har_entries: int
    """Entries written to network.har."""
    urls: list[str]
    """Pages the agent was on, step by step."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

