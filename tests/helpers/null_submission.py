"""A null submission and the files an attacker plants beside it (issue 36, point 8).

The submission implements nothing: its entry file prints a fixed line. Around it, each *channel*
plants every file name that pytest 8/9 or CPython reads at start-up, or that a test runs, so that
if the grader read any of them the submission would score: pytest configs whose options add a
forging plugin and deselect everything, conftest.py files, start-up customisation modules, a
.pth file, compiled modules, console scripts named after the programs tests call, and links to
every file of the tests folder (at grading time the program also makes its output a link to the
running case's expected file). `plant(workspace, channels)` writes them; the grader must give
the whole a score of 0 on any problem.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

from tests.helpers.evil_package import write_evil_package

# A pytest plugin that turns every test into a pass, whatever loads it.
FORGE = textwrap.dedent('''\
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome = "passed"
        report.longrepr = None
    ''')
PLUGIN = "forge_bw"
# pytest's options that would add a test folder of the submission's (its conftest.py forges
# every verdict) and deselect the problem's cases.
_ADDOPTS = ["forged", "-k", "not case"]
_INI_BODY = "pythonpath = .\naddopts = forged -k 'not case'\n"
_TOML_BODY = 'pythonpath = ["."]\naddopts = ["forged", "-k", "not case"]\n'
CONFIGS = {
    "pytest.ini": f"[pytest]\n{_INI_BODY}",
    ".pytest.ini": f"[pytest]\n{_INI_BODY}",
    "pytest.toml": f"[pytest]\n{_TOML_BODY}",
    ".pytest.toml": f"[pytest]\n{_TOML_BODY}",
    "pyproject.toml": f"[tool.pytest.ini_options]\n{_INI_BODY}",
    "tox.ini": f"[pytest]\n{_INI_BODY}",
    "setup.cfg": f"[tool:pytest]\n{_INI_BODY}",
}
# Start-up hooks of CPython: each puts the workspace on sys.path and asks pytest for the forge.
_STARTUP = (f"import os, sys\nsys.path.insert(0, {{here!r}})\n"
            f"os.environ['PYTEST_PLUGINS'] = {PLUGIN!r}\n")
# The programs SCBench-style tests run (pytest's PATH): each says "no difference" and succeeds.
PROGRAMS = ("diff", "cmp", "git", "cat", "sh", "bash", "uv", "env", "true", "sort", "jq")
_FAKE_PROGRAM = "#!/bin/sh\nexit 0\n"
TESTS_DIR = ".evaluation_tests"


def null_program(answers: dict[str, str] | None = None) -> str:
    """The entry file: prints a fixed line. With `answers` (input text -> the expected file's
    path relative to the tests folder, known to anyone who reads the public tests), an
    `--out FILE` argument becomes a link to the running case's expected output."""
    return textwrap.dedent(f'''\
        import os, sys
        ANSWERS = {answers or {}!r}
        print("not implemented")
        args = sys.argv[1:]
        if ANSWERS and "--out" in args:
            out = args[args.index("--out") + 1]
            text = open(args[0]).read() if args and os.path.isfile(args[0]) else ""
            rel = ANSWERS.get(text)
            here = os.path.dirname(os.path.abspath(__file__))
            # Where the grader lays the tests: inside the workspace (the jail leaves an empty
            # folder of that name there), or beside it.
            tests = os.path.join(here, {TESTS_DIR!r})
            if not os.path.lexists(tests):
                tests = os.path.join(os.path.dirname(here), {TESTS_DIR!r})
            if rel:
                if os.path.lexists(out):
                    os.unlink(out)
                os.symlink(os.path.join(tests, rel), out)
        ''')


def plant_config(workspace: Path, names: Iterable[str] = CONFIGS) -> None:
    """pytest config files (every name by default), each adding a forging test folder of the
    submission's and deselecting the problem's cases."""
    for name in names:
        (workspace / name).write_text(CONFIGS[name])
    _write_forge(workspace)
    forged = workspace / "forged"
    forged.mkdir(exist_ok=True)
    (forged / "conftest.py").write_text(FORGE)
    (forged / "test_forged.py").write_text("def test_forged():\n    pass\n")


def plant_conftest(workspace: Path) -> None:
    """conftest.py at every level the submission can write: its root, sub-folders, a folder
    named like the tests'."""
    for rel in ("conftest.py", "forged/conftest.py", "sub/conftest.py", "tests/conftest.py",
                f"{TESTS_DIR}/conftest.py", "forged/test_forged.py"):
        target = workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(FORGE if "conftest" in rel else "def test_forged():\n    pass\n")


def plant_startup(workspace: Path, python: Path | None = None) -> None:
    """sitecustomize, usercustomize, a .pth file, the forge as a module, compiled copies (beside
    their source, sourceless, and in __pycache__)."""
    _write_forge(workspace)
    hook = _STARTUP.format(here=str(workspace))
    for name in ("sitecustomize.py", "usercustomize.py"):
        (workspace / name).write_text(hook)
    (workspace / f"{PLUGIN}.pth").write_text(f"import {PLUGIN}\n")
    (workspace / ".pth").write_text(f"import {PLUGIN}\n")
    if python is not None:
        _compile(python, workspace)


def plant_programs(workspace: Path) -> None:
    """Console scripts named after the programs tests run: in an environment the submission's
    requirements build (a local package whose wheel installs them), and loose in the workspace."""
    package = write_evil_package(workspace / "forgepkg", "LOOT = ''", extra={
        f"evilpkg-0.1.data/scripts/{name}": _FAKE_PROGRAM for name in PROGRAMS})
    (workspace / "requirements.txt").write_text(f"evilpkg @ file://{package}\n")
    for folder in (workspace / "bin", workspace):
        folder.mkdir(exist_ok=True)
        for name in PROGRAMS:
            path = folder / name
            path.write_text(_FAKE_PROGRAM)
            path.chmod(0o755)


def plant_links(workspace: Path, tests_dir: Path) -> None:
    """A link to every file of the problem's tests, as the grader lays them out beside the
    workspace and inside it, both relative and under the names the tests use."""
    for file in sorted(p for p in tests_dir.rglob("*") if p.is_file()):
        rel = file.relative_to(tests_dir)
        flat = str(rel).replace(os.sep, "__")
        for prefix, target in (("up", Path("..") / TESTS_DIR / rel),
                               ("in", Path(TESTS_DIR) / rel)):
            (workspace / f"link_{prefix}_{flat}").symlink_to(target)
        named = workspace / "links" / rel
        named.parent.mkdir(parents=True, exist_ok=True)
        if not named.exists():
            named.symlink_to(Path("..") / ".." / TESTS_DIR / rel)


def answers_for(tests_dir: Path, checkpoint: str) -> dict[str, str]:
    """For the `outfiles` fixture: each case's input text -> its expected file, relative to
    the tests folder (what an attacker reads off the public tests)."""
    import json

    found: dict[str, str] = {}
    for case in sorted((tests_dir / "data" / checkpoint / "core").iterdir()):
        lines = json.loads((case / "case.json").read_text())["lines"]
        found["".join(f"{line}\n" for line in lines)] = str(
            (case / "expected_output.txt").relative_to(tests_dir))
    return found


CHANNELS: dict[str, Callable[..., None]] = {
    "config": plant_config, "conftest": plant_conftest, "startup": plant_startup,
    "programs": plant_programs,
}


def plant(workspace: Path, channels: Iterable[str], tests_dir: Path,
          python: Path | None = None) -> None:
    """Plant every file of the named channels (`CHANNELS` and "links") in `workspace`."""
    for channel in channels:
        if channel.startswith("config:"):  # one config file alone: pytest reads only the first
            plant_config(workspace, [channel.partition(":")[2]])
        elif channel == "links":
            plant_links(workspace, tests_dir)
        elif channel == "startup":
            plant_startup(workspace, python)
        else:
            CHANNELS[channel](workspace)


def _write_forge(workspace: Path) -> None:
    (workspace / f"{PLUGIN}.py").write_text(FORGE)


def _compile(python: Path, workspace: Path) -> None:
    """The forge and the start-up hooks compiled by the grading interpreter: sourceless beside
    the sources (`x.pyc`) and as cached bytecode (`__pycache__/x.cpython-3NN.pyc`)."""
    script = textwrap.dedent('''\
        import py_compile, shutil, sys
        for name in sys.argv[1:]:
            cached = py_compile.compile(name + ".py", doraise=True)
            shutil.copyfile(cached, name + ".pyc")
        shutil.copyfile(sys.argv[1] + ".pyc", "conftest.pyc")
        ''')
    names = [PLUGIN, "sitecustomize", "usercustomize"]
    subprocess.run([str(python), "-c", script, *names], cwd=workspace, check=True, timeout=60)
