"""The header every run's manifest.json starts with, whichever track wrote it.

A track's manifest model has these fields and its own; the kernel reads only the header, to
know which track owns a run folder. Manifests written before the `track` field existed are
told apart by their exact `format` (see `benchwright.registry.TRACK_FORMATS`), never by a
substring of the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from benchwright.errors import UserInputError
from benchwright.files.untrusted import decode_untrusted, read_untrusted_bytes
from benchwright.registry import TRACK_FORMATS
from benchwright.runs.layout import RunFiles

M = TypeVar("M", bound=BaseModel)


class Counted(Protocol):
    """A track's run configuration: it has trials per problem (or task)."""

    trials: int

    def model_copy(self, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> Self: ...


C = TypeVar("C", bound=Counted)


class ManifestHeader(BaseModel):
    """The fields of `manifest.json` common to every track."""

    model_config = ConfigDict(extra="ignore")

    format: str
    """The manifest's format and version, e.g. `benchwright.run/1` (coding)."""
    track: str | None = None
    """The track that owns the run (`coding`, `web`); None in manifests of older versions."""
    created_at: str
    """When the run started (UTC, ISO 8601)."""
    benchwright_version: str
    """The version that started the run."""
    environment: dict[str, str] = {}
    """The machine: platform, Python and tool versions."""

    @property
    def track_name(self) -> str:
        """The owning track: the `track` field, or for an older manifest its exact format."""
        if self.track is not None:
            return self.track
        if self.format not in TRACK_FORMATS:
            raise UserInputError(f"unknown run format {self.format!r}",
                                 hint=f"known: {', '.join(sorted(TRACK_FORMATS))}")
        return TRACK_FORMATS[self.format]


def read_header(run_dir: Path, noun: str = "run",
                command: str = "benchwright run") -> ManifestHeader:
    """The header of the run in `run_dir`; a folder that holds no run is the user's error (a
    `noun` folder, made by `command`, when one track's run is expected)."""
    return read_manifest(run_dir, ManifestHeader, noun=noun, command=command,
                         invalid="cannot read the run's manifest")


def read_manifest(run_dir: Path, model: type[M], *, noun: str, command: str,
                  invalid: str) -> M:
    """`run_dir/manifest.json` as `model` (a track's manifest, or the header): a missing,
    special, huge, non-UTF-8 or invalid file is one line, `invalid: field: reason`, exit 2."""
    path = RunFiles(run_dir).manifest
    if not path.exists() and not path.is_symlink():
        raise UserInputError(f"not a {noun} directory (no manifest.json)", path=run_dir,
                             hint=f"pass the folder `{command}` printed")
    # a folder, FIFO, device, huge or non-UTF-8 file in its place: one clear error, never a hang
    data = read_untrusted_bytes(path, what="manifest.json")
    try:
        # strict: `trials: true` is not a number of trials, "3" not a count
        return model.model_validate_json(decode_untrusted(data, path, what="manifest.json"),
                                         strict=True)
    except ValidationError as exc:
        raise UserInputError(f"{invalid}: {_first_error(exc)}", path=path,
                             hint="it was written by another tool or version") from None


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def with_trials(config: C, trials: int, run_dir: Path, per: str) -> C:
    """The run's configuration with `trials` per `per` (`--until-decided` adds a round);
    trials are only ever added, never taken away."""
    if trials < config.trials:
        raise UserInputError(f"the run already has {config.trials} trials per {per}",
                             path=run_dir, hint="trials are only ever added")
    return config.model_copy(update={"trials": trials})
