"""The one check of a model endpoint's base URL (`--base-url`, `-A base_url=`), for both tracks."""

from __future__ import annotations

from urllib.parse import urlsplit


def check_base_url(value: str) -> str:
    """`value` if it is an http(s) URL with a host and no spaces or control characters (a
    newline would forge a header line or a log line); else ValueError saying what to give."""
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        raise ValueError("a URL holds no spaces or control characters")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("give an http:// or https:// URL with a host")
    return value
