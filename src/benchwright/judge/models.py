"""The judge's settings and result files (`judge.json`, versioned), and what they hold."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from benchwright.metrics.erosion import RubricCounts

Protocol = Literal["openai", "anthropic"]
JudgeStatus = Literal["judged", "error"]
CostSource = Literal["provider", "price_table", "unknown", "none"]
DEFAULT_KEY_ENV: dict[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
MAX_SAMPLES = 20
_CERTAINTY: list[CostSource] = ["unknown", "price_table", "provider", "none"]


def least_certain(sources: list[CostSource]) -> CostSource:
    """The least certain source among costs summed (`none`: nothing was charged)."""
    return min(sources, key=_CERTAINTY.index, default="none")


class JudgeSettings(BaseModel):
    """How checkpoints are judged: saved with a run (`run coding --judge-model`) and in
    `judge/settings.json`; never holds a key (only the name of the variable holding it)."""

    model: str = Field(min_length=1)
    """The judge model, as the endpoint names it."""
    protocol: Protocol = "openai"
    """`openai`: any Chat Completions endpoint (OpenAI, OpenRouter, vLLM, Ollama);
    `anthropic`: the Anthropic Messages API."""
    base_url: str | None = None
    """The endpoint (default: the protocol's public one)."""
    api_key_env: str | None = None
    """The variable holding the key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)."""
    rubric: Path | None = None
    """A rubric file (JSONL, SCBench's format); None: benchwright's own."""
    prefix_template: Path | None = None
    """A jinja template for the shared prefix; None: ours."""
    criteria_template: Path | None = None
    """A jinja template for the criteria part; None: ours."""
    samples: int = Field(default=1, ge=1, le=MAX_SAMPLES)
    """Times each request is judged; flags in a majority of samples are kept."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; None: with the openai protocol 0 for one sample and 1 for more,
    with the anthropic protocol the model's own (none is sent)."""
    max_output_tokens: int = Field(default=8192, ge=256, le=200_000)
    """Output cap per reply (sent to the Anthropic API, which requires one)."""
    max_batch_lines: int = Field(default=1000, ge=1)
    """Lines per batch of files (SCBench: 1,000)."""
    max_batch_files: int = Field(default=5, ge=1)
    """Files per batch (SCBench: 5)."""
    concurrency: int = Field(default=8, ge=1, le=256)
    """Requests in flight at once."""
    retries: int = Field(default=4, ge=0, le=20)
    """Retries of a request after a 429, a 5xx, a timeout or a dropped connection."""
    retry_backoff_s: float = Field(default=1.0, ge=0, le=600)
    """First wait before a retry (doubled each time, at most 60 s; `retry-after` honoured)."""
    request_timeout_s: float = Field(default=300.0, gt=0, le=3600)
    """Seconds one request may take."""

    @property
    def key_env(self) -> str:
        """The variable the key is read from."""
        return self.api_key_env or DEFAULT_KEY_ENV[self.protocol]

    @property
    def effective_temperature(self) -> float | None:
        """The temperature sent (None: none, the model's own)."""
        if self.temperature is not None or self.protocol == "anthropic":
            return self.temperature
        return 0.0 if self.samples == 1 else 1.0


class RubricRef(BaseModel):
    """The rubric a verdict used."""

    source: str
    """Its path, or `bundled:benchwright.jsonl`."""
    sha256: str
    """SHA-256 of the file."""
    items: int
    """Its number of items."""


class TemplateRef(BaseModel):
    """A template a verdict used."""

    source: str
    """Its path, or `bundled:NAME`."""
    sha256: str
    """SHA-256 of its text."""


class TokenUsage(BaseModel):
    """Tokens of one or more requests, as the provider reported them."""

    input_tokens: int = 0
    """Prompt tokens (cached ones included)."""
    output_tokens: int = 0
    """Generated tokens."""
    cached_input_tokens: int = 0
    """Of the prompt tokens, those read from the provider's prompt cache."""

    def plus(self, other: TokenUsage) -> TokenUsage:
        """The sum of both."""
        return TokenUsage(input_tokens=self.input_tokens + other.input_tokens,
                          output_tokens=self.output_tokens + other.output_tokens,
                          cached_input_tokens=self.cached_input_tokens
                          + other.cached_input_tokens)


class Dropped(BaseModel):
    """Flags the judge returned that were dropped, by reason."""

    unknown_criterion: int = 0
    """Naming an item not asked in that request."""
    unknown_file: int = 0
    """Naming a file not in that batch."""
    outside_lines: int = 0
    """With lines outside the file (or end before start)."""


class SupportCounts(BaseModel):
    """For one criterion over K samples: how many lines, and how many distinct flags, were
    raised by exactly k samples (index k = 0..K)."""

    lines: list[int]
    """Lines of the judged files by the number of samples that flagged them (k = 0 included)."""
    flags: list[int]
    """Distinct flags (same item and file, start within 2 lines) by the samples raising them
    (k = 0 is always 0)."""


class CriterionAgreement(BaseModel):
    """How the samples agreed on one rubric item, pooled over the checkpoints judged."""

    criterion: str
    """The item."""
    samples: int
    """Samples per request (K)."""
    lines: int
    """Lines judged (the units of alpha)."""
    lines_flagged: int
    """Of them, lines at least one sample flagged with this item."""
    flags: int
    """Distinct flags raised by any sample."""
    flags_kept: int
    """Of them, raised by more than half of the samples (kept in rubric.jsonl)."""
    alpha: float | None
    """Krippendorff's alpha (nominal, lines as units, samples as coders): 1 full agreement,
    0 no better than chance; None when no sample flagged the item."""
    stability: float | None
    """Mean share of the samples raising each flag (1: every flag raised by every sample)."""


class JudgeFile(BaseModel):
    """`judge.json` in a checkpoint folder: how its verdict was reached."""

    format: Literal["benchwright.judge/1"] = "benchwright.judge/1"
    """The file's format and version."""
    problem: str
    """The problem."""
    trial: int
    """The trial."""
    checkpoint: str
    """The checkpoint."""
    status: JudgeStatus
    """`judged`, or `error` (see `errors`; no rubric.jsonl is written, nothing is scored)."""
    model: str
    """The judge model."""
    protocol: Protocol
    """The API spoken."""
    endpoint: str | None
    """The base URL (credentials redacted); None: the protocol's default."""
    rubric: RubricRef
    """The rubric."""
    prefix_template: TemplateRef
    """The prefix template."""
    criteria_template: TemplateRef
    """The criteria template."""
    samples: int
    """Samples per request."""
    temperature: float | None
    """The temperature sent (None: none, the model's own)."""
    settings_sha256: str
    """Hash of everything that decides a verdict (model, endpoint, rubric, templates, samples,
    temperature, batching): a run is judged with one setting."""
    snapshot_sha256: str
    """Hash of the judged files' paths and contents."""
    files: list[str] = Field(default_factory=list)
    """The judged files."""
    batches: list[list[str]] = Field(default_factory=list)
    """The files of each batch."""
    requests: int = 0
    """Requests behind the verdict (batches x categories x samples)."""
    requests_made: int = 0
    """Calls sent to the provider by this judging (an invalid reply's second ask included)."""
    requests_cached: int = 0
    """Requests answered from the cache."""
    invalid_retries: int = 0
    """Replies that could not be validated and were asked again."""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens of every request behind the verdict (cached ones as first paid)."""
    cost_usd: float = 0.0
    """Cost of every request behind the verdict, as charged when it was made."""
    cost_usd_paid_now: float = 0.0
    """Of that, spent by this judging (0 when every request came from the cache)."""
    cost_source: CostSource = "none"
    """Where the cost comes from: the provider's reply, benchwright's price table (cached
    prompt tokens at the full price: an upper bound), `unknown` (no price: 0 counted)."""
    dropped: Dropped = Field(default_factory=Dropped)
    """Flags dropped, by reason."""
    flags_per_sample: list[int] = Field(default_factory=list)
    """Valid flags each sample raised (before consensus and carry-forward)."""
    metrics: RubricCounts | None = None
    """The checkpoint's rubric metrics (None on error)."""
    agreement: dict[str, SupportCounts] = Field(default_factory=dict)
    """Per criterion, how the samples agreed (with two samples or more)."""
    errors: list[str] = Field(default_factory=list)
    """Why the checkpoint could not be judged (status `error`)."""
    duration_s: float = 0.0
    """Seconds from the first request to the files being written."""
    benchwright_version: str
    """The version that judged."""
    judged_at: str
    """When (UTC, ISO 8601)."""


def settings_sha256(settings: JudgeSettings, endpoint: str | None, rubric_sha: str,
                    template_shas: tuple[str, str]) -> str:
    """The fingerprint of what decides a verdict."""
    decisive = {"model": settings.model, "protocol": settings.protocol, "endpoint": endpoint,
                "rubric": rubric_sha, "templates": list(template_shas),
                "samples": settings.samples, "temperature": settings.effective_temperature,
                "max_output_tokens": settings.max_output_tokens,
                "batch": [settings.max_batch_lines, settings.max_batch_files]}
    return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()
