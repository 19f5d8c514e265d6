"""Run settings never hold a key: they are saved in manifest.json and read back on resume, so a
setting that holds the value of a secret environment variable is refused, not redacted (a
redacted setting would come back as `<redacted:NAME>`). The one exception is a base URL: its
credentials are kept by reference (the manifest holds marks, restored from the environment on
resume; see docs/security.md, Redaction). Imports no track."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from benchwright.errors import UserInputError
from benchwright.files.redaction import Redactor

# settings whose credentials are stored as marks and restored from the environment on resume
BY_REFERENCE = frozenset({"base_url"})


def refuse_secrets(settings: BaseModel, environ: dict[str, str] | None = None) -> None:
    """Refuse settings that hold the value of a secret environment variable (an API key)."""
    redactor = Redactor.from_environ(environ)
    for where, value in _strings(settings.model_dump(mode="json")):
        cleaned = redactor.text(value)
        if cleaned != value:
            mark = cleaned[cleaned.index("<redacted:"):].split(">")[0] + ">"
            names = mark.removeprefix("<redacted:").removesuffix(">")
            raise UserInputError(
                f"{_option(where)} holds the value of {names}; run settings are saved in "
                "manifest.json, so a key must not be one of them",
                hint=f"leave the key in the environment ({names}) and refer to it from there")


def _strings(value: Any, where: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in BY_REFERENCE:
                yield from _strings(item, (*where, str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, where)


def _option(where: tuple[str, ...]) -> str:
    """A setting's path as the option that sets it: agent_settings.base_url -> --base-url."""
    names = [w for w in where if not w.isdigit()]
    return "--" + (names[-1] if names else "setting").replace("_", "-")
