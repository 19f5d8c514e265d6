"""`benchwright.runs.open_run`: a run folder goes to the track its manifest names (issue 14).

The track is the manifest's `track` field; manifests written before it are told apart by their
exact `format`, never by a substring of the file (a coding run whose settings mention the web
format is still a coding run).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.runs import open_run
from tests.helpers import FIXTURES, run_cli

QUICK = FIXTURES / "runs"
HEADER = {"created_at": "2026-01-02T03:04:05+00:00", "benchwright_version": "0.1.0",
          "environment": {"platform": "linux"}}


def _run_dir(tmp_path: Path, manifest: dict[str, object]) -> Path:
    tmp_path.joinpath("manifest.json").write_text(json.dumps({**HEADER, **manifest}))
    return tmp_path


@pytest.mark.parametrize(("manifest", "track"), [
    ({"format": "benchwright.run/1", "track": "coding"}, "coding"),
    ({"format": "benchwright.web-run/1", "track": "web"}, "web"),
    ({"format": "benchwright.run/1"}, "coding"),  # written before the `track` field
    ({"format": "benchwright.web-run/1"}, "web"),
    ({"format": "benchwright.run/1", "model": "benchwright.web-run/1"}, "coding"),
])
def test_the_track_comes_from_the_manifest(tmp_path: Path, manifest: dict[str, object],
                                           track: str) -> None:
    run = open_run(_run_dir(tmp_path, manifest))
    assert run.track.name == track
    assert run.header.created_at == HEADER["created_at"]


def test_an_unknown_format_or_track_lists_the_choices(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="unknown run format") as caught:
        open_run(_run_dir(tmp_path, {"format": "benchwright.run/9"}))
    assert "benchwright.run/1" in caught.value.one_line()
    with pytest.raises(UserInputError, match="unknown track 'video'") as caught:
        open_run(_run_dir(tmp_path, {"format": "benchwright.run/1", "track": "video"}))
    assert "coding, web" in caught.value.one_line()


def test_a_folder_without_a_run_is_the_users_error(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="not a run directory"):
        open_run(tmp_path)
    manifest = tmp_path / "manifest.json"
    manifest.write_bytes(b"\xff\xfe not json")
    with pytest.raises(UserInputError, match="not UTF-8"):
        open_run(tmp_path)
    manifest.write_text("[1, 2]")
    with pytest.raises(UserInputError, match="cannot read the run's manifest"):
        open_run(tmp_path)
    manifest.unlink()
    os.mkfifo(manifest)  # no writer: reading it must not wait
    with pytest.raises(UserInputError, match="not a regular file"):
        open_run(tmp_path)


def test_the_wrong_track_is_refused_with_the_command_that_continues_it(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="is a web run, not a coding run") as caught:
        open_run(_run_dir(tmp_path, {"format": "benchwright.web-run/1"}), expect="coding")
    assert "benchwright run web --resume" in caught.value.one_line()


def test_a_coding_run_that_mentions_the_web_format_is_reported_as_coding(
        tmp_path: Path) -> None:
    # The CLI used to look for the web format's name anywhere in manifest.json.
    out = tmp_path / "run"
    made = run_cli("run", "coding", "--problems-dir", str(QUICK), "--problem", "quick",
                   "--model", "benchwright.web-run/1", "--no-metrics", "--unsafe-no-sandbox",
                   "--out", str(out))
    assert made.returncode == 0, made.stderr
    report = run_cli("report", str(out), "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["header"]["track"] == "coding"
    regraded = run_cli("eval", str(out), "--json")
    assert regraded.returncode == 0, regraded.stderr
    assert json.loads(regraded.stdout)["n_checkpoints"] == 4


@pytest.mark.sandbox
def test_both_tracks_are_driven_through_the_same_interface(tmp_path: Path) -> None:
    from benchwright.coding.attempts.models import RunConfig
    from benchwright.protocols import ExecutorSetup
    from benchwright.registry import EXECUTORS, TRACKS
    from benchwright.runs import start
    from benchwright.web.trials.models import AgentSpec, WebRunConfig

    configs = {
        "coding": RunConfig(problems_dir=QUICK, problems=["quick"], agent="oracle",
                            metrics=False, unsafe_no_sandbox=True),
        "web": WebRunConfig(suite="local", task_ids=[9001, 9002], runner="fake",
                            agent=AgentSpec(name="scripted")),
    }
    for name, config in configs.items():
        out = tmp_path / name
        TRACKS.get(name).create(out, config)
        run = open_run(out)
        assert run.track.name == name
        local = EXECUTORS.get("local").from_setup(ExecutorSetup())
        result = start(run.track, out, executor=local).model_dump()
        assert result["complete"] is True
        assert (out / "result.json").is_file() and (out / "report.md").is_file()
        assert run.track.finish(out).model_dump()["complete"] is True
        assert run.track.render(run.track.report(out, None)).startswith("# benchwright report")
