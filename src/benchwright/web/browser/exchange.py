"""One request and its response as CDP reported them: the raw material of a HAR entry.

A redirect chain shares one CDP requestId; every hop becomes its own `Exchange`. The
`*ExtraInfo` events carry the headers the network stack really sent and received (Cookie,
Set-Cookie, sec-fetch-*); they arrive before or after the main events, so they are kept
separately and paired with hops by order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Body:
    """A response body as `Network.getResponseBody` returned it, or why it is missing."""

    text: str | None = None
    """The body (base64 when `base64`)."""
    base64: bool = False
    """True when `text` is base64-encoded."""
    skipped: str | None = None
    """Why there is no text (too large, binary, evicted)."""


@dataclass
class Exchange:
    """One hop: a request, its response and what happened to it."""

    request: dict[str, Any]
    """CDP `Network.Request`."""
    started_ts: float
    """CDP monotonic timestamp (seconds) of `requestWillBeSent`."""
    started_wall: float
    """Wall-clock seconds (epoch) of `requestWillBeSent`."""
    resource_type: str = ""
    """CDP resource type (Document, XHR, Fetch, Image ...)."""
    request_extra: dict[str, Any] | None = None
    """`requestWillBeSentExtraInfo` params: the headers actually sent."""
    response: dict[str, Any] | None = None
    """CDP `Network.Response` (for a redirect hop: the redirect response)."""
    response_extra: dict[str, Any] | None = None
    """`responseReceivedExtraInfo` params: raw response headers with Set-Cookie."""
    post_data: str | None = None
    """The request body, when it has one."""
    body: Body = field(default_factory=Body)
    """The response body."""
    finished_ts: float | None = None
    """Monotonic timestamp when the hop ended (finished, failed or redirected)."""
    encoded_length: float = -1
    """Bytes received over the wire (`loadingFinished.encodedDataLength`)."""
    error: str | None = None
    """`loadingFailed.errorText`, or why the hop never finished."""
    redirect_url: str = ""
    """For a redirect hop: where it pointed."""
    target: str = ""
    """Which page/tab target made the request (flat session id)."""


@dataclass
class RequestChain:
    """Every hop of one CDP requestId, with ExtraInfo events waiting for their hop."""

    hops: list[Exchange] = field(default_factory=list)
    """Hops in order; the last one is in flight until the request ends."""
    request_extras: list[dict[str, Any]] = field(default_factory=list)
    """`requestWillBeSentExtraInfo` events in arrival order (hop k gets the k-th)."""
    response_extras: list[dict[str, Any]] = field(default_factory=list)
    """`responseReceivedExtraInfo` events in arrival order."""

    def add_hop(self, hop: Exchange) -> None:
        """Start a new hop and give it any ExtraInfo that arrived early."""
        self.hops.append(hop)
        self.pair_extras()

    def pair_extras(self) -> None:
        """Give each hop the ExtraInfo events of its rank."""
        for rank, hop in enumerate(self.hops):
            if hop.request_extra is None and rank < len(self.request_extras):
                hop.request_extra = self.request_extras[rank]
            if hop.response_extra is None and rank < len(self.response_extras):
                hop.response_extra = self.response_extras[rank]

    @property
    def current(self) -> Exchange | None:
        """The hop in flight."""
        return self.hops[-1] if self.hops else None
