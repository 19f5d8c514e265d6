"""One request to the judge model, end to end: the cache, the budget, the call with its retries,
validation (an invalid reply is asked once more), and what came of it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from benchwright.files.redaction import Redactor
from benchwright.judge.budget import Budget
from benchwright.judge.cache import CacheEntry, VerdictCache
from benchwright.judge.models import CostSource, TokenUsage, least_certain
from benchwright.judge.providers import (
    BrokenReply,
    Exchange,
    JudgeClient,
    Refused,
    Transient,
    price_cost,
)
from benchwright.judge.verdicts import Checked, Flag, InvalidReply, check_flags, parse_payload
from benchwright.llm.pricing import price_of

MAX_WAIT_S = 60.0
ASKS = 2
"""An invalid reply is asked once more, then the request fails."""
Status = Literal["ok", "invalid", "infra", "refused", "halted"]


@dataclass(frozen=True)
class Request:
    """One batch x category x sample of a checkpoint."""

    key: str
    """Its cache key."""
    batch_key: str
    """The batch's files joined by commas (raw_rubric.json's key, as SCBench's)."""
    category: str
    """The rubric category asked."""
    sample: int
    """The sample, from 0."""
    prefix: str
    """The shared first part (instructions, spec, files)."""
    criteria: str
    """The category's items."""
    schema: dict[str, Any]
    """The reply's JSON schema."""
    criteria_names: frozenset[str]
    """The items asked."""
    file_lines: dict[str, int]
    """The batch's files and their line counts."""


@dataclass
class Outcome:
    """What one request gave."""

    request: Request
    status: Status
    flags: list[Flag] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    raw: list[dict[str, Any]] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    cost_source: CostSource = "none"
    paid_now: float = 0.0
    made: int = 0
    cached: bool = False
    invalid_retries: int = 0
    error: str | None = None
    started: float = 0.0
    """When the request began (time.monotonic); a checkpoint's judging is timed from its first
    request, which the pool may start long before the checkpoint is finished."""


class Requester:
    """Sends requests for one judging (thread-safe: one per run, shared by the pool)."""

    def __init__(self, client: JudgeClient, cache: VerdictCache, budget: Budget, model: str,
                 retries: int, backoff_s: float, redactor: Redactor,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client, self.cache, self.budget, self.model = client, cache, budget, model
        self.retries, self.backoff_s = retries, backoff_s
        self.redactor, self.sleep = redactor, sleep

    def run(self, request: Request) -> Outcome:
        """The request's outcome: from the cache, or asked (at most twice if invalid)."""
        started = time.monotonic()
        outcome = self._run(request)
        outcome.started = started
        return outcome

    def _run(self, request: Request) -> Outcome:
        cached = self._from_cache(request)
        if cached is not None:
            return cached
        outcome = Outcome(request=request, status="invalid")
        for _ask in range(ASKS):
            reservation = self.budget.acquire(self._floor(request))
            if reservation is None:
                return _with(outcome, "halted", self.budget.stop_reason)
            try:
                exchange = self._call(request, outcome)
            except BrokenReply as exc:
                self.budget.settle(reservation, 0.0)
                outcome.error = str(exc)
                outcome.raw.append({"error": str(exc)})
                continue
            except (Transient, Refused) as exc:
                self.budget.settle(reservation, 0.0)
                return self._failed(outcome, exc)
            self._account(outcome, exchange, reservation)
            checked = self._checked(request, exchange.payload, outcome)
            if checked is not None:
                return self._stored(outcome, checked, exchange.payload)
        outcome.invalid_retries = ASKS - 1
        outcome.error = f"the reply could not be validated ({ASKS} asks): {outcome.error}"
        return outcome

    def _from_cache(self, request: Request) -> Outcome | None:
        entry = self.cache.get(request.key)
        if entry is None:
            return None
        try:
            checked = check_flags(parse_payload(entry.payload), set(request.criteria_names),
                                  request.file_lines)
        except InvalidReply:
            return None
        return Outcome(request=request, status="ok", flags=checked.flags,
                       dropped=checked.dropped, raw=entry.raw, usage=entry.usage,
                       cost_usd=entry.cost_usd, cost_source=entry.cost_source, cached=True)

    def _floor(self, request: Request) -> float:
        """The price table's cost of the prompt alone (about 4 characters a token)."""
        price = price_of(self.model)
        tokens = (len(request.prefix) + len(request.criteria)) // 4
        return 0.0 if price is None else price.cost(tokens, 0)

    def _call(self, request: Request, outcome: Outcome) -> Exchange:
        """One answer, after up to `retries` retries of transient failures (each call counted
        in `outcome.made`)."""
        for attempt in range(self.retries + 1):
            outcome.made += 1
            try:
                return self.client.ask(request.prefix, request.criteria, request.schema)
            except Transient as exc:
                if attempt == self.retries:
                    raise Transient(f"the provider kept failing: {exc} (after "
                                    f"{self.retries + 1} attempts)",
                                    unreachable=exc.unreachable) from None
                wait = max(self.backoff_s * 2.0 ** attempt, exc.retry_after)
                self.sleep(min(MAX_WAIT_S, wait))
        raise AssertionError("unreachable")

    def _account(self, outcome: Outcome, exchange: Exchange, reservation: float) -> None:
        cost, source = _cost(self.model, exchange)
        self.budget.settle(reservation, None if source == "unknown" else cost)
        outcome.raw.append(exchange.raw)
        outcome.usage = outcome.usage.plus(exchange.usage)
        outcome.cost_usd += cost
        outcome.paid_now += cost
        outcome.cost_source = least_certain([outcome.cost_source, source])

    def _checked(self, request: Request, payload: Any, outcome: Outcome) -> Checked | None:
        try:
            return check_flags(parse_payload(payload), set(request.criteria_names),
                               request.file_lines)
        except InvalidReply as exc:
            outcome.error = str(exc)
            return None

    def _stored(self, outcome: Outcome, checked: Checked, payload: Any) -> Outcome:
        outcome.status, outcome.error = "ok", None
        outcome.flags, outcome.dropped = checked.flags, checked.dropped
        outcome.invalid_retries = len(outcome.raw) - 1
        entry = CacheEntry(key=outcome.request.key, payload=payload, raw=outcome.raw,
                           usage=outcome.usage, cost_usd=outcome.cost_usd,
                           cost_source=outcome.cost_source)
        self.cache.put(entry, self.redactor.text(entry.model_dump_json()))
        return outcome

    def _failed(self, outcome: Outcome, exc: Transient | Refused) -> Outcome:
        if isinstance(exc, Refused) and exc.fatal:
            self.budget.stop(f"the provider refused the judge's requests: {exc}")
            return _with(outcome, "halted", self.budget.stop_reason)
        if isinstance(exc, Transient) and exc.unreachable:  # no other request would get through
            self.budget.stop(f"the judge endpoint cannot be reached: {exc}")
            return _with(outcome, "halted", self.budget.stop_reason)
        status: Status = "infra" if isinstance(exc, Transient) else "refused"
        return _with(outcome, status, self.redactor.text(str(exc)))


def _with(outcome: Outcome, status: Status, error: str | None) -> Outcome:
    outcome.status, outcome.error = status, error
    return outcome


def _cost(model: str, exchange: Exchange) -> tuple[float, CostSource]:
    if exchange.cost_usd is not None:
        return exchange.cost_usd, "provider"
    priced = price_cost(model, exchange.usage)
    return (0.0, "unknown") if priced is None else (priced, "price_table")
