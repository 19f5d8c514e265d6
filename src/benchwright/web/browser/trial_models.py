"""What one browser trial takes and gives back: the one definition of the trial interface.

Used by `benchwright.web.browser.trial` (which re-exports it) and by the web runs
(`benchwright.web.trials.models`). Only pydantic and the standard library are imported here, so the
web runs stay importable without browser-use or websockets installed.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchwright.web.browser.launch import BrowserSettings
from benchwright.web.evaluation.tasks import WebTask

OUTCOME_SCHEMA = "benchwright.web-trial-outcome/1"


class AgentName(StrEnum):
    """The built-in web agents (plugins add theirs: `benchwright.registry.WEB_AGENTS`)."""

    SCRIPTED = "scripted"
    BROWSER_USE = "browser-use"


class RecorderSettings(BaseModel):
    """What the HAR keeps."""

    model_config = ConfigDict(extra="forbid")

    max_body_bytes: int = 2_000_000
    """Response bodies larger than this are left out (a comment says so)."""
    binary_bodies: bool = False
    """Also keep images, fonts and other binary bodies (base64)."""
    flush_interval_s: float = 0.2
    """At most one rewrite of network.har per interval; a killed trial loses at most this much."""
    ignored_url_prefixes: list[str] = Field(
        default_factory=lambda: ["https://cf.browser-use.com/"])
    """Requests not recorded: browser-use's about:blank animation fetches its logo."""
    max_post_data_bytes: int = 1_000_000
    """Request bodies up to this size arrive inline in CDP events."""
    disable_cache: bool = True
    """Bypass the browser cache so every request reaches the network and carries the headers
    really sent (Chromium reports no ExtraInfo headers for cache hits)."""
    extra_info_wait_s: float = 0.1
    """How long a finished request waits for its late ExtraInfo event before it is written."""


class AgentSpec(BaseModel):
    """Which agent drives the browser."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """A registered web agent (`benchwright.registry.WEB_AGENTS`): `scripted` plays an action
    script, `browser-use` asks an OpenAI-compatible model; or a plugin's (or "module:Class")."""
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
    prompt: str = "structured"
    """`structured` (site context, task types, status codes; the final response must fit the
    schema), `plain` (the answer in free text, read by the response adapter), or a template
    file's path (see benchwright.web.browser.prompts)."""


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
    """The agent finished with an answer: success, or a clean answer that the task cannot be
    done (NOT_FOUND_ERROR and the like: the evaluator decides whether that was right)."""
    AGENT_ERROR = "agent_error"
    """The agent finished reporting a failure after failed steps, without an answer, or with an
    invalid final response."""
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
    INFRA_ERROR = "infra_error"
    """The run's infrastructure failed before the trial could start (retried on resume)."""


class StepUsage(BaseModel):
    """The model calls made during one agent step (the trial's ATIF step metrics)."""

    step: int
    """The step, from 1 (browser-use's history order)."""
    calls: int
    """Model calls whose answer came during the step."""
    input_tokens: int | None = None
    """Their prompt tokens; None: a call did not report its usage."""
    cached_input_tokens: int | None = None
    """Of those, read from the provider's cache; None: not reported."""
    output_tokens: int | None = None
    """Their completion tokens; None: a call did not report its usage."""
    cost_usd: float | None = None
    """Their cost at the run's prices; None: unknown (no price for the model, or no usage)."""


class TrialOutcome(BaseModel):
    """What happened in one trial (network.har and history.json are beside it)."""

    schema_: str = Field(default=OUTCOME_SCHEMA, alias="schema")
    """Format version."""
    status: TrialStatus
    """How it ended."""
    final_text: str | None = None
    """The agent's final answer (its `done` text)."""
    agent_success: bool | None = None
    """The agent's own success claim; None when it never finished."""
    steps: int = 0
    """Agent steps taken."""
    input_tokens: int = 0
    """Prompt tokens over all model calls."""
    output_tokens: int = 0
    """Completion tokens over all model calls."""
    cached_input_tokens: int = 0
    """Of the prompt tokens, those the provider read from its cache."""
    cost_usd: float | None = 0.0
    """Cost from the local price table (0 when the model has no price there)."""
    duration_s: float = 0.0
    """Wall-clock seconds of the trial, set-up and tear-down included."""
    model_time_s: float = 0.0
    """Seconds spent waiting for the model (duration minus this is the harness overhead)."""
    harness_s: float = 0.0
    """Of that overhead, the seconds in benchwright's own set-up and wrap-up: browser reset,
    cookies and live logins, recorder start and stop, history, clean-up (and Chromium's start and
    stop when the trial launched its own). The rest is browser-use's: session, agent, steps."""
    errors: list[str] = Field(default_factory=list)
    """Errors of the agent's steps (failed actions included) and of the harness."""
    har_entries: int = 0
    """Entries written to network.har."""
    refused_requests: list[str] = Field(default_factory=list)
    """Requests the harness refused: to a host that is none of the sites', or a page that is not
    http(s) (the browser's policy, confinement.py); the first 20."""
    urls: list[str] = Field(default_factory=list)
    """Pages the agent was on, step by step."""
    structured_response: dict[str, Any] | None = None
    """The agent's final response, validated against the schema (None: it gave none, or the
    run used the plain prompt; the response adapter then reads final_text)."""
    step_usage: list[StepUsage] = Field(default_factory=list)
    """Tokens and cost of each step's model calls (empty: not recorded, as by runners that call
    no model)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

