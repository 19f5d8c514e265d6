"""A second web benchmark is a plugin (issue 28 point 3): the `toy` suite, its `toyshop` site and
its own evaluator, registered from a test package outside src/ (tests/helpers/toy_web_suite)
through the registry's entry-point groups, run end to end through the CLI with the scripted agent
in real Chromium against the toy shop served on loopback, then re-scored by `eval RUN_DIR`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli

ROOT = Path(__file__).parents[3]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.e2e,
    pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                       reason="needs browser-use: pip install 'benchwright[web]'"),
]
ENTRY_POINTS = """[benchwright.web_suites]
toy = tests.helpers.toy_web_suite.plugin:open_toy

[benchwright.web_sites]
toyshop = tests.helpers.toy_web_suite.plugin:TOYSHOP
"""


def _installed(folder: Path) -> Path:
    """A distribution declaring the toy suite and site, as `pip install` would leave it."""
    info = folder / "benchwright_toy_suite-0.1.dist-info"
    info.mkdir(parents=True)
    info.joinpath("METADATA").write_text(
        "Metadata-Version: 2.1\nName: benchwright-toy-suite\nVersion: 0.1\n")
    info.joinpath("entry_points.txt").write_text(ENTRY_POINTS)
    return folder


def benchwright(site_packages: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BENCHWRIGHT_WEB_TRIAL_RUNNER"}
    env["PYTHONPATH"] = os.pathsep.join([str(site_packages), str(ROOT)])
    return run_cli(*args, env=env, cwd=ROOT)


def _records(run_dir: Path) -> dict[int, dict[str, Any]]:
    return {json.loads(p.read_text())["task_id"]: json.loads(p.read_text())
            for p in sorted(run_dir.glob("tasks/*/trial_*/eval_result.json"))}


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("toy")
    site_packages, out = _installed(root / "site-packages"), root / "run"
    done = benchwright(site_packages, "run", "web", "--suite", "toy", "--agent", "scripted",
                       "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return site_packages, out, json.loads(done.stdout)


def test_the_toy_suite_runs_end_to_end(toy_run: tuple[Path, Path, dict[str, Any]]) -> None:
    _, out, summary = toy_run
    assert (summary["suite"], summary["n_tasks"], summary["n_trials"]) == ("toy", 2, 2)
    assert summary["n_passed"] == 1  # task 2's script answers wrong
    records = _records(out)
    assert (records[1]["score"], records[2]["score"]) == (1.0, 0.0)
    # scored by the toy evaluator, which saw the browser load the toy shop
    assert {r["webarena_verified_version"] for r in records.values()} == {"toy-evaluator/1"}
    assert all(r["evaluators_results"][0]["visited_toyshop"] for r in records.values())
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["site_urls"]) == {"toyshop"}
    assert (out / "report.md").is_file()


def test_eval_rescores_the_toy_run_identically(
        toy_run: tuple[Path, Path, dict[str, Any]]) -> None:
    site_packages, out, _ = toy_run
    before = {k: r["score"] for k, r in _records(out).items()}
    done = benchwright(site_packages, "eval", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert {k: r["score"] for k, r in _records(out).items()} == before


def test_the_registry_lists_the_plugin_suite_and_site(
        toy_run: tuple[Path, Path, dict[str, Any]]) -> None:
    site_packages, _, _ = toy_run
    code = ("from benchwright.registry import WEB_SITES, WEB_SUITES; "
            "print(list(WEB_SUITES), list(WEB_SITES)[-1])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site_packages), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=True)
    assert done.stdout.split("] ")[0] == "['local', 'webarena-verified', 'toy'"
    assert done.stdout.strip().endswith("toyshop")
