"""Bad-input probes through the CLI (issue 26's checks): a probe is (name, argv, files to make,
a fragment the one error line must hold); `{tmp}` in argv is the probe's own folder, leading
`VAR=value` items of argv set the environment (`BLOCK=module`: that module cannot be imported).
A probe passes on exit 2, one `error:` line holding the fragment, no traceback, no hang (HUNG_S)
and nothing left at `{tmp}/o` (no run folder)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

import benchwright
from tests.helpers import FIXTURES
from tests.helpers.cli import run_cli
from tests.helpers.shared_runs import quick_finished_run, shared_folder
from tests.helpers.tiers import starts

SOURCE_ROOT = str(Path(benchwright.__file__).resolve().parents[1])
"""The probes run from their own folders: import the benchwright the tests import."""
QUICK_DIR = FIXTURES / "runs" / "quick"
QUICK_CONFIG = (QUICK_DIR / "config.yaml").read_text()
HUNG_S = 300
"""A probe still running after this long waits forever: on a loaded machine, with parallel test
workers, a one-line refusal may take tens of seconds (30 s failed probes under load)."""
DIR, FIFO, LOOP = object(), object(), object()
"""File entries: a folder, a named pipe with no writer, a symlink to itself (a callable entry
edits the file copied there: `edit(path)`)."""
RUN, WEB_RUN, QUICK = object(), object(), object()
"""File entries: a finished coding run, a finished web run (tasks 7001-7002 of the tests'
suite), the `quick` fixture problem."""


class Probe(NamedTuple):
    name: str
    argv: list[str]
    files: dict[str, object]
    fragment: str
    code: int = 2
    """The exit code the docs give (3: what the harness lacks is infrastructure's)."""


def problem(files: dict[str, object]) -> dict[str, object]:
    """The `quick` problem at `p/quick`, with `files` changed (None: removed)."""
    return {"p/quick": QUICK, **{f"p/quick/{k}": v for k, v in files.items()}}


def materialise(root: Path, files: dict[str, object], runs: dict[object, Path]) -> None:
    """Make `files` under `root` (`runs`: the finished runs RUN and WEB_RUN copy)."""
    for rel, content in files.items():
        path = root / rel
        if content is RUN or content is WEB_RUN or content is QUICK:
            shutil.copytree(runs.get(content, QUICK_DIR), path, dirs_exist_ok=True)
            continue
        if callable(content):  # an edit of a copied file
            content(path)
        else:
            _replace(path, content)


def _replace(path: Path, content: object) -> None:
    """`path` made anew as `content` says (None: removed)."""
    if path.is_dir() and not path.is_symlink():
        if content is not DIR:
            shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if content is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if content is DIR:
        path.mkdir(exist_ok=True)
    elif content is FIFO:
        os.mkfifo(path)
    elif content is LOOP:
        path.symlink_to(path.name)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(str(content))


@starts("e2e")
def run_probe(probe: Probe, root: Path, runs: dict[object, Path]) -> str | None:
    """None when the probe got its one-line error and left no run folder, else what failed."""
    folder = root / probe.name
    folder.mkdir()
    materialise(folder, probe.files, runs)
    argv = [a.replace("{tmp}", str(folder)) for a in probe.argv]
    # no key or setting of the user's: a probe that needs one must be refused for want of it
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BENCHWRIGHT_WEB_", "BENCHWRIGHT_CACHE", "BENCHWRIGHT_LLM"))
           and not k.endswith("_API_KEY")}
    env |= {"COLUMNS": "200", "NO_COLOR": "1", "PYTHONPATH": SOURCE_ROOT}
    while argv and "=" in argv[0] and argv[0].split("=")[0].isupper():
        key, _, value = argv.pop(0).partition("=")
        if key == "BLOCK":
            env["PYTHONPATH"] = f"{_blocker(folder, value)}{os.pathsep}{env['PYTHONPATH']}"
        else:
            env[key] = value
    try:
        done = run_cli(*argv, env=env, cwd=folder, timeout=HUNG_S)
    except subprocess.TimeoutExpired:
        return f"{probe.name}: hung ({HUNG_S} s)"
    found = verdict(probe, done)
    if found is None and (folder / "o").exists():
        return f"{probe.name}: a run folder was left at {folder / 'o'}"
    return found


def _blocker(folder: Path, module: str) -> Path:
    """A folder whose `module` fails to import as a module that is not installed does."""
    root = folder / "blocked"
    (root / module).mkdir(parents=True)
    (root / module / "__init__.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{module}'\", name='{module}')\n")
    return root


def verdict(probe: Probe, done: subprocess.CompletedProcess[str]) -> str | None:
    """None for exit 2 (or the probe's code) with one `error:` line holding the fragment, else
    what is wrong."""
    out = done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    if "Traceback" in out:
        return f"{probe.name}: traceback: {out.strip().splitlines()[-1]}"
    if done.returncode != probe.code:
        return f"{probe.name}: exit {done.returncode}: {out.strip()[-300:]!r}"
    if len(lines) != 1 or not lines[0].startswith("error: "):
        return f"{probe.name}: not one line: {done.stderr[-300:]!r}"
    if probe.fragment.lower() not in lines[0].lower():
        return f"{probe.name}: {probe.fragment!r} not in {lines[0]!r}"
    return None


@starts("e2e")
def finished_web_run(root: Path) -> Path:
    """A finished web run of tasks 7001-7002 of the tests' own suite (the fake trial runner)
    in `root/w`."""
    from tests.helpers.web_suites import write_suite

    tasks, config = write_suite(root / "suite")
    _cli(["run", "web", "--suite", str(tasks), "--config", str(config), "--task-ids",
          "7001-7002", "--out", str(root / "w")], {"BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"})
    return root / "w"


@starts("e2e", "sandbox")
def shared_probe_runs(factory: pytest.TempPathFactory) -> dict[object, Path]:
    """The finished runs RUN and WEB_RUN copy, each made once per test session (not once per
    xdist worker and module: every probe copies its own, so none sees another's edits)."""
    def build_web(folder: Path) -> str:
        finished_web_run(folder)
        return "w"

    web, _ = shared_folder(factory, "probe-web-run", build_web)
    return {RUN: quick_finished_run(factory), WEB_RUN: web / "w"}


def _cli(argv: list[str], extra: dict[str, str]) -> None:
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT, **extra}
    done = run_cli(*argv, env=env)
    assert done.returncode == 0, done.stderr


def edit_line(number: int, change: dict[str, object]) -> Callable[[Path], None]:
    """A file entry that edits line `number` (from 1) of a copied journal: `change` is merged
    into the record (a dotted key reaches into it); `{"": ...}` replaces the line's text."""
    def edit(path: Path) -> None:
        lines = path.read_text().splitlines()
        if "" in change:
            lines[number - 1] = str(change[""])
        else:
            record = json.loads(lines[number - 1])
            for key, value in change.items():
                *parents, leaf = key.split(".")
                node = record
                for part in parents:
                    node = node[part]
                node[leaf] = value
            lines[number - 1] = json.dumps(record)
        path.write_text("\n".join(lines) + "\n")
    return edit


def repeat_line(number: int) -> Callable[[Path], None]:
    """A file entry that appends line `number` of a copied journal again."""
    def edit(path: Path) -> None:
        path.write_text(path.read_text() + path.read_text().splitlines()[number - 1] + "\n")
    return edit
