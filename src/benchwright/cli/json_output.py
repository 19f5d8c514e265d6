"""What `--json` prints: one indented JSON document on stdout."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from pydantic import BaseModel


def echo_json(data: Any) -> None:
    """Print `data` as indented JSON."""
    typer.echo(json.dumps(data, indent=2))


def result_fields(result: BaseModel) -> dict[str, Any]:
    """A run's result file as printed: every field but the file-format tag."""
    data = result.model_dump(mode="json")
    data.pop("format", None)
    return data
