"""A third track is one registration (issue 38): the `toy` track (tests/helpers/toy_track), declared
by one entry point of the group `benchwright.tracks` in a distribution outside src/, run end to end
through the CLI: `run toy` (interrupted, refused a changed option on resume, resumed), `report`
(with the regression gate's clusters), `eval RUN_DIR`, `export atif`, `view --bundle` and the
Python API's `load_run`; nothing of benchwright names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.e2e
ENTRY_POINTS = """[benchwright.tracks]
toy = tests.helpers.toy_track.plugin:ENTRY
"""


def _installed(folder: Path) -> Path:
    """A distribution declaring the toy track, as `pip install` would leave it."""
    info = folder / "benchwright_toy_track-0.1.dist-info"
    info.mkdir(parents=True)
    info.joinpath("METADATA").write_text(
        "Metadata-Version: 2.1\nName: benchwright-toy-track\nVersion: 0.1\n")
    info.joinpath("entry_points.txt").write_text(ENTRY_POINTS)
    return folder


def _env(site_packages: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site_packages), str(ROOT)])}


def test_a_registered_track_runs_end_to_end_through_the_cli(tmp_path: Path) -> None:
    env = _env(_installed(tmp_path / "site-packages"))
    run = tmp_path / "runs" / "toy"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=env, cwd=ROOT)

    stopped = cli("run", "toy", "--words", "alpha,be,gam,d,ee,fff", "--out", str(run),
                  "--stop-after", "1")
    assert stopped.returncode == 130, stopped.stderr
    assert f"benchwright run toy --resume {run}" in stopped.stderr
    refused = cli("run", "toy", "--resume", str(run), "--words", "x")
    assert refused.returncode == 2 and "drop words" in refused.stderr
    assert "Traceback" not in refused.stderr
    resumed = cli("run", "toy", "--resume", str(run))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == {"complete": True, "letters": 16}

    report = cli("report", str(run), "--baseline", str(run), "--fail-if-worse", "5")
    assert report.returncode == 0, report.stderr
    assert report.stdout.startswith("# toy report") and "gate passed" in report.stderr
    regraded = cli("eval", str(run), "--json")
    assert regraded.returncode == 0, regraded.stderr
    assert json.loads(regraded.stdout)["letters"] == 16
    exported = cli("export", "atif", str(run), "--out", str(tmp_path / "atif"), "--json")
    assert exported.returncode == 0, exported.stderr
    assert sorted(json.loads(exported.stdout)["written"]) == [
        f"{word}/trajectory.json" for word in ("alpha", "be", "d", "ee", "fff", "gam")]
    bundled = cli("view", str(run.parent), "--bundle", str(tmp_path / "site"))
    assert bundled.returncode == 0, bundled.stderr
    rows = (tmp_path / "site" / "data" / "runs.js").read_text()
    assert '"track":"toy"' in rows.replace(" ", "")

    code = ("import sys, benchwright; r = benchwright.load_run(sys.argv[1]); "
            "print(type(r).__name__, r.track, sorted(r.words))")
    loaded = subprocess.run([sys.executable, "-c", code, str(run)], env=env, cwd=ROOT,
                            capture_output=True, text=True, check=True)
    assert loaded.stdout.split()[:2] == ["ToyRun", "toy"] and "'fff'" in loaded.stdout


def test_a_track_not_installed_is_an_unknown_track(tmp_path: Path) -> None:
    # the same run folder without the plugin: one line naming the known tracks, exit 2
    env = _env(_installed(tmp_path / "site-packages"))
    run = tmp_path / "toy"
    made = run_cli("run", "toy", "--words", "a", "--out", str(run), env=env, cwd=ROOT)
    assert made.returncode == 0, made.stderr
    bare = run_cli("report", str(run), cwd=ROOT)
    assert bare.returncode == 2, bare.stderr
    assert "unknown track 'toy'" in bare.stderr and "coding, web" in bare.stderr
