"""Commands start instantly (issue 40): `--version`, every command's `--help` and a bad option
import no pydantic, rich, HTTP client, YAML parser or track module, checked by the list of
modules the real `benchwright` executable imported (PYTHONPROFILEIMPORTTIME: structural, never
timed; bench/cli_startup.py measures the time). One command of each family runs through that
executable, not the tests' pre-imported CLI (tests/helpers/cli_forks.py), so a slow start shows
in the suite's time. The choices and defaults `--help` shows without importing the tracks
(cli/option_values.py) are each checked against the track's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest

from benchwright.cli import option_values
from benchwright.cli.entry import command
from benchwright.cli.main import app

pytestmark = pytest.mark.e2e

HEAVY = ("pydantic", "pydantic_core", "rich", "httpx", "httpcore", "requests", "aiohttp",
         "urllib.request", "http.client", "yaml", "jinja2", "markdown_it", "pygments", "asyncio",
         "benchwright.api", "benchwright.coding", "benchwright.web", "benchwright.view",
         "benchwright.judge", "benchwright.llm", "benchwright.metrics", "benchwright.runs",
         "benchwright.sandbox", "benchwright.protocols", "benchwright.executors")
"""What a start that only prints or refuses must not import (a module or any below it)."""
EXECUTABLE = Path(sys.executable).with_name("benchwright")
"""The console script the install made, as a user starts it."""


def _command_paths(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in getattr(group, "commands", {}).items():
        yield from _command_paths(sub, (*path, name))


def _benchwright(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The real executable's run of ARGS, and the modules it imported (its import-time log)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([str(EXECUTABLE), *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
    lines = done.stderr.splitlines()
    modules = [line.split("|")[-1].strip() for line in lines if line.startswith("import time:")]
    stderr = "".join(f"{line}\n" for line in lines if not line.startswith("import time:"))
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, stderr), modules


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith(HEAVY) and (
        m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty working folder: no benchwright.toml or pyproject.toml to read defaults from."""
    return tmp_path_factory.mktemp("startup")


def test_the_executable_is_installed() -> None:
    assert EXECUTABLE.is_file(), f"{EXECUTABLE}: install the package (pip install -e .)"


def test_version_and_every_help_import_nothing_heavy(folder: Path) -> None:
    # imported here, walked in one process; each command is then started on its own
    paths = [p for p in _command_paths(command(app))]
    assert len(paths) > 30 and ("run", "coding") in paths and ("web", "tasks", "list") in paths
    starts = [["--version"], *([*p, "--help"] for p in paths)]
    found = {}
    for args in starts:
        done, modules = _benchwright(*args, cwd=folder)
        assert done.returncode == 0 and done.stdout.strip(), (args, done.stderr)
        assert "typer" in modules  # the log is read: an empty one would prove nothing
        if _heavy(modules):
            found[" ".join(args)] = _heavy(modules)
    assert found == {}


@pytest.mark.parametrize("args", [
    ["run", "coding", "--trials", "0"],
    ["run", "coding", "--thinking", "loud"],
    ["run", "coding", "--agent", "no-such-agent"],
    ["run", "web", "--no-such-option"],
    ["eval", "checkpoint", "--workers", "x"],
    ["report"],
    ["no-such-command"],
], ids=["bound", "choice", "agent", "option", "number", "missing", "command"])
def test_a_bad_option_is_one_line_without_importing_a_track(args: list[str],
                                                            folder: Path) -> None:
    done, modules = _benchwright(*args, cwd=folder)
    assert done.returncode == 2 and done.stderr.startswith("error: ")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    # typer checks a value with pydantic's TypeAdapter (its own need, and pydantic's own imports
    # with it); no model, no rich, no track
    assert [m for m in _heavy(modules) if not m.startswith(("pydantic", "asyncio"))] == []


@pytest.mark.parametrize(("args", "expected"), [
    (["--version"], "benchwright "),
    (["run", "coding", "--help"], "--until-decided"),
    (["eval", "checkpoint", "--help"], "--workspace"),
    (["report", "no-such-run"], ""),
    (["plan", "--difference", "10", "--pass-rate", "50", "--spread", "20", "--json"], '"rows"'),
    (["metrics", "judge", "--help"], "--samples"),
    (["problems", "list", "--json"], '"kv_server"'),
    (["agents", "list", "--json"], '"oracle"'),
    (["web", "tasks", "list", "--suite", "local", "--json"], '"task_id"'),
    (["testing", "--help"], "fake-llm"),
    (["view", "--help"], "--bundle"),
    (["export", "--help"], "atif"),
    (["llm", "cassette", "stats", "no-such-cassette"], ""),
    (["images", "--help"], "build"),
    (["cache", "--help"], "list"),
], ids=lambda v: v[0] if isinstance(v, list) else None)
def test_each_family_runs_through_the_real_executable(args: list[str], expected: str,
                                                      folder: Path) -> None:
    done, _modules = _benchwright(*args, cwd=folder)
    if expected:  # a command that answers
        assert done.returncode == 0, done.stderr
        assert expected in done.stdout
        if "--json" in args:
            json.loads(done.stdout)
    else:  # one that refuses a missing folder: one line, exit 2
        assert done.returncode == 2 and done.stderr.startswith("error: "), done.stderr
        assert done.stderr.count("\n") == 1


def test_the_copied_choices_and_defaults_are_the_tracks() -> None:
    from benchwright.coding.agents.settings import Thinking
    from benchwright.coding.attempts import snapshots
    from benchwright.coding.attempts.models import StartFrom
    from benchwright.coding.grading.policies import PassPolicy
    from benchwright.coding.problems.scaffold import Kind
    from benchwright.judge.models import MAX_SAMPLES, Protocol
    from benchwright.protocols import EXECUTOR_DEFAULTS
    from benchwright.web.browser.prompts import STRUCTURED
    from benchwright.web.evaluation.tasks import Subset
    from benchwright.web.submission.package import TrialChoice
    from benchwright.web.trials.suites import LOCAL, WEBARENA

    values = option_values
    for copy, owner in [(values.ThinkingChoice, Thinking), (values.PassPolicyChoice, PassPolicy),
                        (values.StartFromChoice, StartFrom), (values.TrialChoice, TrialChoice),
                        (values.SubsetChoice, Subset)]:
        assert [(c.name, c.value) for c in copy] == [(o.name, o.value) for o in owner]
    defaults = values.EXECUTOR_DEFAULTS
    assert (defaults.address, defaults.job_cpus, defaults.job_memory_mb) == (
        EXECUTOR_DEFAULTS.address, EXECUTOR_DEFAULTS.job_cpus, EXECUTOR_DEFAULTS.job_memory_mb)
    assert (values.MAX_SNAPSHOT_MB, values.MAX_SNAPSHOT_FILES) == (
        snapshots.DEFAULT_MAX_SNAPSHOT_MB, snapshots.DEFAULT_MAX_SNAPSHOT_FILES)
    assert (values.LOCAL_SUITE, values.WEBARENA_SUITE, values.STRUCTURED_PROMPT) == (
        LOCAL, WEBARENA, STRUCTURED)
    assert get_args(values.JudgeProtocol) == get_args(Protocol)
    assert values.MAX_JUDGE_SAMPLES == MAX_SAMPLES
    assert get_args(values.ProblemKind) == get_args(Kind)


def test_a_choice_reaches_the_api_as_the_tracks_value() -> None:
    from benchwright.api.coding import CodingOptions
    from benchwright.cli.run_cmd import coding_options

    params = {"pass_policy": option_values.PassPolicyChoice.ALL_CASES, "thinking": None,
              "start_from": option_values.StartFromChoice.REFERENCE, "trials": 2}
    options = coding_options(params)
    assert options == {"pass_policy": "all-cases", "start_from": "reference", "trials": 2,
                       "agent_options": {}}
    assert type(options["pass_policy"]) is str
    assert set(options) <= CodingOptions.__optional_keys__
