"""What `run_coding` and `run_web` share about their options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchwright.errors import UserInputError


def refuse_unknown(options: Mapping[str, Any], known: type) -> None:
    """An option the run would not use (a typo, an option of the other track) is an error,
    never silently dropped; `known` is the TypedDict of the run's options."""
    unknown = sorted(set(options) - set(known.__annotations__))
    if unknown:
        raise UserInputError(f"unknown option {unknown[0]!r}",
                             hint=f"options: {', '.join(known.__annotations__)}")
