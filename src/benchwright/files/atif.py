"""ATIF files, out and in, for both tracks: the one writer and the one reader.

ATIF is the Agent Trajectory Interchange Format of Harbor's RFC 0001, read by other harnesses'
viewers and by SFT/RL pipelines; the PyPI package `atif` (the `atif` extra) has its pydantic
models. A track turns its own trajectory into an ATIF document (plain JSON values) and writes it
with `write_atif`: keys redacted, then validated with those models, then written atomically.
`read_atif` reads one back from a run folder, whatever wrote it: the file is hostile (never read
through a link, bounded, JSON nested at most so deep, validated), and a bad one is one clear
message (`AtifError`), never a traceback.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from benchwright.errors import UserInputError
from benchwright.extras import import_extra
from benchwright.files.atomic import write_text_atomic
from benchwright.files.nofollow import read_regular
from benchwright.files.redaction import Redactor
from benchwright.files.untrusted import parse_untrusted_json

ATIF_FILE = "trajectory.atif.json"
"""The ATIF file's name in a checkpoint's `agent/` folder or a web trial's folder."""
FALLBACK_VERSION = "ATIF-v1.8"
"""The schema tag written when the `atif` package does not say its version."""
MAX_ATIF_BYTES = 32 * 2**20
"""The largest ATIF file read back from a run folder."""

Json = dict[str, Any]


class Export(BaseModel):
    """What an export of a run's trajectories wrote and what it left out."""

    written: list[str] = Field(default_factory=list)
    """The ATIF files written, relative to the output folder."""
    skipped: list[str] = Field(default_factory=list)
    """Trajectories not exported, each with the reason (`path: why`)."""


class AtifError(UserInputError):
    """An ATIF file that cannot be read: a link, too large, not JSON, or not valid ATIF."""


def available() -> bool:
    """True when the `atif` extra is installed."""
    return importlib.util.find_spec("atif") is not None


def schema_version() -> str:
    """`ATIF-vMAJOR.MINOR` of the installed `atif` package (the version its models implement)."""
    try:
        major, minor, *_ = importlib.metadata.version("atif").split(".")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return FALLBACK_VERSION
    return f"ATIF-v{major}.{minor}"


def validated(doc: Any) -> Any:
    """`doc` as an `atif.Trajectory` (a pydantic ValidationError, a ValueError, when it is not
    valid ATIF; errors.missing_extra when the extra is not installed)."""
    atif = import_extra("atif", "atif", "ATIF trajectories")
    return atif.Trajectory.model_validate(doc)


def atif_text(doc: Json, redactor: Redactor | None = None) -> str:
    """The file's text: `doc` with every secret value replaced, validated, as indented JSON."""
    import json

    text = json.dumps(doc, ensure_ascii=False)
    if redactor is not None:  # marks are plain text: the JSON stays JSON
        text = redactor.text(text)
    trajectory = validated(json.loads(text))
    return str(trajectory.model_dump_json(indent=2, exclude_none=True)) + "\n"


def write_atif(path: Path, doc: Json, redactor: Redactor | None = None) -> Path:
    """Write `doc` to `path` (redacted, validated first: nothing is written when it is not valid
    ATIF)."""
    write_text_atomic(path, atif_text(doc, redactor))
    return path


def read_atif(folder: Path, rel: str, *, max_bytes: int = MAX_ATIF_BYTES) -> Any:
    """The ATIF trajectory at `folder/rel` as an `atif.Trajectory`, read as hostile input.

    Raises AtifError (one line: what is wrong with which file) when it is missing, a link or
    special file, larger than `max_bytes`, not JSON, nested too deeply or not valid ATIF; the
    missing extra is errors.missing_extra."""
    path = folder / rel
    data = read_regular(folder, rel, max_bytes + 1)  # never through a link
    if data is None:
        raise AtifError("no ATIF trajectory here (missing, a link or not a regular file)",
                        path=path)
    if len(data) > max_bytes:
        bound = f"{max_bytes // 2**20} MiB" if max_bytes >= 2**20 else f"{max_bytes} bytes"
        raise AtifError(f"the ATIF trajectory is larger than {bound}", path=path)
    value = parse_untrusted_json(data, path, what="the ATIF trajectory", error=AtifError)
    return validated_file(value, path)


def validated_file(value: Any, path: Path) -> Any:
    """A parsed file's value as an `atif.Trajectory`, or AtifError naming the first problem."""
    if not isinstance(value, dict) or "schema_version" not in value:
        raise AtifError("not an ATIF trajectory (no schema_version)", path=path)
    try:
        return validated(value)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise AtifError(f"not valid ATIF: {first_problem(exc)}", path=path) from None


def first_problem(exc: ValueError) -> str:
    """The first line of a validation error, bounded (the file's values are hostile)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        found = errors()
        if found:
            where = ".".join(str(p) for p in found[0].get("loc", ()))
            return ((f"{where}: " if where else "") + str(found[0].get("msg", "")))[:300]
    return str(exc).splitlines()[0][:300]


def timestamp(value: Any) -> str | None:
    """An ISO 8601 timestamp: an ISO string kept, epoch seconds converted, anything else None
    (an agent's log may hold any text)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value


def present(values: Json) -> Json:
    """`values` without the None ones (ATIF leaves out what is not known)."""
    return {k: v for k, v in values.items() if v is not None}


def content_text(content: Any) -> str:
    """A message or result as text: a string, or the text parts of a multimodal one."""
    if isinstance(content, str):
        return content
    parts = [getattr(p, "text", None) for p in content or []]
    return "\n".join(p if p is not None else "[non-text content]" for p in parts)
