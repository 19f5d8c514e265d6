"""`load_run`: a run folder of either track as a typed object, through the kernel
(`runs.open_run` finds the track, its `Track.read` the manifest); the track's view of the folder
is its entry's `run_view` in `benchwright.registry.TRACKS`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from benchwright.coding.attempts.journal import read_records
from benchwright.coding.attempts.models import CheckpointRecord, Manifest, RunConfig, RunResult
from benchwright.errors import UserInputError
from benchwright.files.untrusted import decode_untrusted, read_untrusted_bytes
from benchwright.protocols import AnyTrack
from benchwright.registry import TRACKS
from benchwright.runs import open_run
from benchwright.runs.layout import RunFiles
from benchwright.web.trials.models import TrialRecord, WebManifest, WebRunConfig, WebRunResult
from benchwright.web.trials.trial_rules import read_trials

M = TypeVar("M", bound=BaseModel)
ManifestT = TypeVar("ManifestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class _RunFolder(Generic[ManifestT, ResultT]):
    """What every run folder has, read."""

    path: Path
    """The run folder."""
    manifest: ManifestT
    """manifest.json: the configuration, what was planned, the machine."""
    result: ResultT | None
    """result.json: the totals (None until the run has finished, and been scored, once)."""


def _read(path: Path, track: AnyTrack, manifest: type[ManifestT],
          result: type[ResultT]) -> tuple[ManifestT, ResultT | None]:
    """The manifest (through the track) and result.json of the run in `path`."""
    read = track.read(path)
    if not isinstance(read, manifest):
        raise TypeError(f"{track.name} read a {type(read).__name__}, not a {manifest.__name__}")
    return read, read_result(path, result)


@dataclass(frozen=True)
class CodingRun(_RunFolder[Manifest, RunResult]):
    """A coding run folder (`benchwright run coding`, `run_coding`), as `load_run` reads it."""

    checkpoints: list[CheckpointRecord] = field(repr=False)
    """Every graded checkpoint, attempt by attempt (problem, then trial), in order."""
    track: Literal["coding"] = "coding"
    """The track that owns the folder."""

    @property
    def config(self) -> RunConfig:
        """The run's configuration."""
        return self.manifest.config

    @classmethod
    def open(cls, path: Path, track: AnyTrack) -> CodingRun:
        """The coding run in `path` (its track, from `open_run`)."""
        from benchwright.coding.attempts.layout import RunLayout

        manifest, result = _read(path, track, Manifest, RunResult)
        layout, config = RunLayout(path), manifest.config
        records = [record for problem in config.problems
                   for trial in range(1, config.trials + 1)
                   for record in read_records(layout.journal(problem, trial))]
        return cls(path=path, manifest=manifest, result=result, checkpoints=records)


@dataclass(frozen=True)
class WebRun(_RunFolder[WebManifest, WebRunResult]):
    """A web run folder (`benchwright run web`, `run_web`), as `load_run` reads it."""

    trials: list[TrialRecord] = field(repr=False)
    """Every finished trial, as the journal has them."""
    track: Literal["web"] = "web"
    """The track that owns the folder."""

    @property
    def config(self) -> WebRunConfig:
        """The run's configuration."""
        return self.manifest.config

    @classmethod
    def open(cls, path: Path, track: AnyTrack) -> WebRun:
        """The web run in `path` (its track, from `open_run`)."""
        from benchwright.web.trials.layout import WebRunLayout

        manifest, result = _read(path, track, WebManifest, WebRunResult)
        return cls(path=path, manifest=manifest, result=result,
                   trials=read_trials(WebRunLayout(path).journal, manifest))


Run = CodingRun | WebRun


def load_run(path: Path | str) -> Run:
    """The run in `path`, of either track: a `CodingRun` or a `WebRun` (its `track` says
    which). A folder that holds no run is the user's error."""
    folder = Path(path).expanduser().resolve()
    opened = open_run(folder)
    view: type[CodingRun] | type[WebRun] = TRACKS.part(opened.track.name, "run_view")
    return view.open(folder, opened.track)


def read_result(run_dir: Path, model: type[M]) -> M | None:
    """`run_dir/result.json` as `model`, None when there is none yet."""
    path = RunFiles(run_dir).result_json
    if not path.exists():
        return None
    data = read_untrusted_bytes(path, what="result.json")
    try:
        return model.model_validate_json(decode_untrusted(data, path, what="result.json"))
    except ValidationError as exc:
        raise UserInputError(f"result.json is not readable ({exc.error_count()} problems)",
                             path=path, hint="finish the run again: benchwright eval RUN_DIR"
                             ) from None
