"""The `toy` track: a run counts the letters of some words, one word a unit of work, journaled
as it finishes. It has every part a track registers (`registry.TrackEntry`): the kernel's steps
and readers, `benchwright run toy`, the `eval RUN_DIR` view, the API's run view and the viewer's
pages; nothing of benchwright names it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from benchwright.errors import UserInputError
from benchwright.files.atif import Export
from benchwright.files.atomic import write_json_atomic, write_text_atomic
from benchwright.protocols import (
    AnyTrack,
    ClusterCounts,
    ExecutorSetup,
    RegradeSettings,
    StartedRun,
)
from benchwright.registry import EXECUTORS, TrackEntry
from benchwright.runs import new_or_resumed, start
from benchwright.runs.clock import utc_now
from benchwright.runs.journal import append_record, read_jsonl
from benchwright.runs.layout import RunFiles
from benchwright.runs.manifest import read_manifest
from benchwright.version import __version__

NAME = "toy"
JOURNAL = "words.jsonl"


class ToyConfig(BaseModel):
    """What a toy run is told."""

    words: list[str]
    """The units of work."""


class ToyManifest(BaseModel):
    """manifest.json of a toy run: the kernel's header and the configuration."""

    format: str = "benchwright-toy.run/1"
    """The format."""
    track: str = NAME
    """The owning track."""
    created_at: str
    """When the run started."""
    benchwright_version: str = __version__
    """The version that started it."""
    config: ToyConfig
    """The saved configuration."""


class Counted(BaseModel):
    """A journal record: one word counted."""

    word: str
    """The word."""
    letters: int
    """Its length."""


class ToyResult(BaseModel):
    """result.json of a toy run."""

    complete: bool
    """Every word counted."""
    letters: int
    """The letters of every counted word."""


class ToyHooks:
    """`stop_after`: a Ctrl-C after that many words (the interrupt a user would send)."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.stop_after = stop_after


class ToyTrack:
    """`benchwright run toy`."""

    name = NAME
    noun = "toy run"
    command = "benchwright run toy"

    def node_checks(self, config: ToyConfig) -> list[Callable[[], object]]:
        return []

    def create(self, run_dir: Path, config: ToyConfig) -> ToyManifest:
        run_dir.mkdir(parents=True, exist_ok=True)
        manifest = ToyManifest(created_at=utc_now(), config=config)
        write_text_atomic(RunFiles(run_dir).manifest, manifest.model_dump_json())
        return manifest

    def resumed(self, run_dir: Path) -> ToyConfig:
        return self.read(run_dir).config

    def refresh(self, run_dir: Path) -> ToyManifest:
        return self.read(run_dir)

    def sweep(self, run_dir: Path) -> None:
        """Nothing is left behind: a word is journaled at once."""

    def execute(self, run: StartedRun[ToyConfig]) -> ToyResult:
        done = {r.word for r in _records(run.run_dir)}
        stop_after = getattr(run.hooks, "stop_after", None)
        for n, word in enumerate(w for w in run.config.words if w not in done):
            if stop_after is not None and n >= stop_after:
                raise KeyboardInterrupt
            append_record(run.run_dir / JOURNAL, Counted(word=word, letters=len(word)))
        return self.finish(run.run_dir)

    def outcome(self, run_dir: Path, result: Any) -> str:
        return f"{result.letters} letters; result.json in {run_dir}"

    def read(self, run_dir: Path) -> ToyManifest:
        return read_manifest(run_dir, ToyManifest, noun=self.noun, command=self.command,
                             invalid="cannot read the toy manifest")

    def finish(self, run_dir: Path) -> ToyResult:
        records = _records(run_dir)
        result = ToyResult(complete=len(records) == len(self.read(run_dir).config.words),
                           letters=sum(r.letters for r in records))
        write_text_atomic(RunFiles(run_dir).result_json, result.model_dump_json())
        write_text_atomic(RunFiles(run_dir).report_md, self.render(result))
        return result

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> BaseModel:
        return self.finish(run_dir)

    def report(self, run_dir: Path, baseline: Path | None) -> ToyResult:
        return self.finish(run_dir)

    def render(self, report: ToyResult) -> str:
        return f"# toy report\n\n{report.letters} letters\n"

    def resume_command(self, run_dir: Path) -> str:
        return f"benchwright run toy --resume {run_dir}"

    def interrupted(self, run_dir: Path) -> str:
        return "interrupted; counted words are kept"

    def clusters(self, run_dir: Path, metric: str | None) -> ClusterCounts:
        counts = {r.word: (1.0, 1.0) for r in _records(run_dir)}
        return ClusterCounts("pass rate", "words", counts)

    def export_atif(self, run_dir: Path, out: Path, redactor: Any) -> Export:
        result = Export()
        for record in _records(run_dir):
            write_json_atomic(out / record.word / "trajectory.json", record.model_dump())
            result.written.append(f"{record.word}/trajectory.json")
        return result


def _records(run_dir: Path) -> list[Counted]:
    return read_jsonl(run_dir / JOURNAL, Counted)


TRACK: AnyTrack = ToyTrack()


def run_toy(
    words: Annotated[str | None, typer.Option(help="Comma-separated words.")] = None,
    out: Annotated[Path | None, typer.Option()] = None,
    resume: Annotated[Path | None, typer.Option(metavar="RUN_DIR")] = None,
    stop_after: Annotated[int | None, typer.Option(hidden=True)] = None,
) -> None:
    """Count the letters of some words."""
    given = [name for name, value in (("words", words), ("out", out)) if value is not None]

    def new() -> tuple[Path, ToyConfig]:
        if words is None or out is None:
            raise UserInputError("a new toy run needs --words and --out")
        return out.resolve(), ToyConfig(words=words.split(","))

    run_dir, config = new_or_resumed(resume, given, new)
    executor = EXECUTORS.get("local").from_setup(ExecutorSetup())
    result = start(TRACK, run_dir, config, executor=executor, hooks=ToyHooks(stop_after))
    typer.echo(json.dumps(result.model_dump()))


def show_regraded(run_dir: Path, outcome: ToyResult, as_json: bool) -> None:
    typer.echo(outcome.model_dump_json() if as_json else f"{outcome.letters} letters")


@dataclass(frozen=True)
class ToyRun:
    """What `benchwright.load_run` returns for a toy run."""

    path: Path
    track: str
    words: list[str]

    @classmethod
    def open(cls, path: Path, track: AnyTrack) -> ToyRun:
        return cls(path=path, track=track.name, words=[r.word for r in _records(path)])


class ToyPages:
    """The viewer's pages of toy runs."""

    track = NAME

    def row(self, ref: Any, state: Any) -> dict[str, Any]:
        return {"rid": ref.rid, "track": NAME, "path": str(ref.path), "name": ref.path.name}

    def ci(self, ref: Any) -> dict[str, Any]:
        return {"metrics": []}

    def run_page(self, ref: Any, state: Any) -> dict[str, Any]:
        return {"words": [r.word for r in _records(ref.path)]}

    def detail(self, ref: Any, rest: list[str]) -> dict[str, Any] | None:
        return None

    def compare(self, a: Any, b: Any) -> dict[str, Any]:
        return {}

    def keys(self, ref: Any) -> list[str]:
        return [f"run/{ref.rid}"]


PAGES = ToyPages()
ENTRY = TrackEntry(
    track="tests.helpers.toy_track.plugin:TRACK",
    run_command="tests.helpers.toy_track.plugin:run_toy",
    regrade_view="tests.helpers.toy_track.plugin:show_regraded",
    run_view="tests.helpers.toy_track.plugin:ToyRun",
    view_pages="tests.helpers.toy_track.plugin:PAGES")
