"""What a replayed run puts where a key would be: agents and SDKs refuse to start without one,
and a replay sends nothing anywhere, so a placeholder stands in for every provider's variable
the environment does not set (the recording's own key is never needed, nor read)."""

from __future__ import annotations

import os
from collections.abc import MutableMapping

PLACEHOLDER = "benchwright-replay-no-key"
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")
DIVERGED = "replay diverged"
"""How every replay-divergence message starts (`errors.ReplayDivergence`)."""


def set_placeholder_keys(environ: MutableMapping[str, str] | None = None,
                         names: tuple[str, ...] = ()) -> None:
    """Set each provider key variable (and `names`) that is unset to the placeholder (this
    process's environment by default: agents started after it inherit them)."""
    target = os.environ if environ is None else environ
    for name in (*PROVIDER_KEYS, *names):
        target.setdefault(name, PLACEHOLDER)


def first_divergence(messages: list[str]) -> str | None:
    """The first of a run's error messages that is a replay divergence, if any."""
    return next((m for m in messages if DIVERGED in m), None)
