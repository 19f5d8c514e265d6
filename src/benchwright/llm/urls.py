"""The one check of a model endpoint's base URL (`--base-url`, `-A base_url=`), for both tracks."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit
from urllib.request import getproxies

from benchwright.errors import InfrastructureError


def check_base_url(value: str) -> str:
    """`value` if it is an http(s) URL with a host and no spaces or control characters (a
    newline would forge a header line or a log line); else ValueError saying what to give."""
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        raise ValueError("a URL holds no spaces or control characters")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("give an http:// or https:// URL with a host")
    return value


REACH_TIMEOUT_S = 10.0
"""How long a model endpoint may take to accept a connection before a run or a judging is
refused (a refused connection or an unknown host answer at once)."""


def require_reachable(base_url: str, what: str, hint: str,
                      timeout_s: float = REACH_TIMEOUT_S) -> None:
    """Refuse, with one line (InfrastructureError, exit 3), an endpoint no connection can be made
    to: before minutes of retried requests, each failing alike. Behind an HTTP proxy (its
    variables set) the endpoint is the proxy's to reach: nothing is checked here."""
    if getproxies():
        return
    parts = urlsplit(base_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        return  # check_base_url's to refuse
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout_s).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise InfrastructureError(f"{what} {parts.scheme}://{parts.hostname}:{port} cannot be "
                                  f"reached: {reason}", hint=hint) from None
