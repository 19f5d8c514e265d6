"""SCBench's quality figures, computed by SCBench's own tool: scb-check, pinned, run sandboxed.

scb-check (PyPI, Python >= 3.12) defines verbosity, erosion and cognitive erosion as SCBench v1.0
publishes them. Rather than re-implement it and chase its every rule, benchwright runs it: in a uv
environment of its own (`ensure_env`, cached by content hash, so runs stay offline once it is
built), with a 3.12+ interpreter found on the machine, inside the bubblewrap sandbox (it parses
untrusted code, and ast-grep runs on it), on a copy of the snapshot whose links are never
followed. Its working folder is an empty scratch folder, so a configuration file the
submission ships (`scb-check.toml`, `[tool.ruff] exclude` in a pyproject.toml, both of which
scb-check honours from its working folder) cannot take code out of the count.

When the figures cannot be had (no 3.12+ interpreter, the environment cannot be built offline,
no sandbox, scb-check failed) they are unknown: `ScbCheckResult.figures` is None and `reason`
says why, never zeros.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from benchwright.errors import BenchwrightError
from benchwright.files.nofollow import copy_tree
from benchwright.files.owned_temp import OwnedTemp
from benchwright.protocols import Limits, Mount, Runtime
from benchwright.sandbox.environments import BuiltEnv, ensure_env
from benchwright.sandbox.interpreters import Interpreter, resolve_python

SCB_CHECK_VERSION = "0.2.0"
# scb-check and every package it installs, pinned (as `uv pip freeze` listed them with 0.2.0), so
# the figures never move under a new release of a dependency (ast-grep's above all).
REQUIREMENTS = (
    f"scb-check=={SCB_CHECK_VERSION}", "annotated-doc==0.0.7", "annotated-types==0.8.0",
    "ast-grep-cli==0.42.1", "click==8.5.1", "markdown-it-py==4.3.0", "mdurl==0.1.2",
    "pydantic==2.13.3", "pydantic-core==2.46.3", "pygments==2.21.0", "pyyaml==6.0.3",
    "rich==15.0.0", "shellingham==1.5.4", "structlog==25.5.0", "tree-sitter==0.25.2",
    "tree-sitter-cpp==0.23.4", "tree-sitter-haskell==0.23.1", "tree-sitter-javascript==0.25.0",
    "tree-sitter-python==0.25.0", "tree-sitter-rust==0.24.2", "tree-sitter-typescript==0.23.2",
    "tree-sitter-zig==1.1.2", "typer==0.24.2", "typing-extensions==4.16.0",
    "typing-inspection==0.4.5",
)
ENV_LABEL = "scb-check"
PYTHONS = ("3.13", "3.12")
"""Interpreters scb-check may run on, preferred first (it needs 3.12 or later)."""
INSIDE = Path("/snapshot")
LIMITS = Limits(wall_clock_s=900.0, memory_mb=4096, max_processes=64, max_output_mb=4)
_MAX_REPORT = 1024 * 1024


class ScbCheckFigures(BaseModel):
    """`scb-check check PATH --report --include-all`'s JSON, under its own keys."""

    model_config = ConfigDict(extra="allow")

    verbosity: float
    """verbosity_flagged_loc / total_loc: share of source lines flagged by clone detection,
    ast-grep rules or structural rules."""
    erosion: float
    """high_cc_mass / total_mass: share of function mass (CC x sqrt(SLOC)) in CC > 10 functions."""
    cog_erosion: float
    """high_cog_mass / total_cog_mass: the same with cognitive complexity."""
    files_scanned: int
    """Source files read."""
    total_loc: int
    """Source lines (SLOC) over those files."""
    verbosity_flagged_loc: int
    """Source lines flagged by any of the three checks (each line once)."""
    clone_loc: int
    """Source lines in duplicated code (every instance)."""
    ast_grep_flagged_loc: int
    """Source lines flagged by scb-check's ast-grep rules."""
    structural_rule_loc: int
    """Source lines flagged by its structural rules."""
    structural_rule_findings: int
    """Findings of its structural rules."""
    total_functions: int
    """Functions and methods."""
    high_cc_functions: int
    """Of them, with cyclomatic complexity above 10."""
    high_cog_functions: int
    """Of them, with cognitive complexity above its threshold."""
    total_mass: float
    """Sum of CC x sqrt(SLOC) over functions."""
    high_cc_mass: float
    """That sum over CC > 10 functions."""
    total_cog_mass: float
    """Sum of cognitive complexity x sqrt(SLOC) over functions."""
    high_cog_mass: float
    """That sum over functions above the cognitive threshold."""


class ScbCheckResult(BaseModel):
    """SCBench's figures of one snapshot, or why they are unknown."""

    version: str = SCB_CHECK_VERSION
    """The scb-check version that measured (or was to measure)."""
    figures: ScbCheckFigures | None = None
    """Its figures; None when unknown."""
    reason: str | None = None
    """Why the figures are unknown (one line); None when they are known."""
    unparsed: list[str] = Field(default_factory=list)
    """Files scb-check could not parse and left out of its figures (as SCBench's figures leave
    them out), relative to the snapshot."""
    seconds: float = 0.0
    """Time scb-check took, sandbox included."""


def report_keys(result: ScbCheckResult | None) -> dict[str, object]:
    """SCBench's figures under scb-check's report keys (`verbosity`, `erosion`, `cog_erosion`,
    `total_loc`, `clone_loc`, ...) with `scb_check_version`; when they are unknown, only the
    version and `scb_check_unknown` (why), never zeros; `scb_check_unparsed` lists the files it
    could not parse (left out of its figures); nothing for metrics written before
    benchwright ran scb-check (`result` None)."""
    if result is None:
        return {}
    if result.figures is None:
        return {"scb_check_version": result.version, "scb_check_unknown": result.reason}
    unparsed = {"scb_check_unparsed": result.unparsed} if result.unparsed else {}
    return {"scb_check_version": result.version,
            **result.figures.model_dump(exclude={"syntax_by_language"}), **unparsed}


def scb_check_env() -> BuiltEnv:
    """scb-check's environment, built on first use (this needs the package index) and reused
    after; raises a BenchwrightError when no 3.12+ interpreter exists or the build fails."""
    return ensure_env(ENV_LABEL, _interpreter(), list(REQUIREMENTS))


def _interpreter() -> Interpreter:
    for version in PYTHONS:
        try:
            return resolve_python(version)
        except BenchwrightError:
            continue
    return resolve_python(PYTHONS[-1])  # raises, naming what to install


@functools.cache
def _env_once() -> BuiltEnv | str:
    """The environment, or why it is missing; tried once per process (an offline build fails
    the same way at every checkpoint, and each attempt would wait on the network)."""
    try:
        return scb_check_env()
    except BenchwrightError as exc:
        return f"scb-check {SCB_CHECK_VERSION} is not available: {exc.one_line()}"


def measure(root: Path, runtime: Runtime | None = None) -> ScbCheckResult:
    """SCBench's figures of the folder `root`, by scb-check in the sandbox (`runtime`; None: the
    bubblewrap sandbox)."""
    started = time.perf_counter()
    env = _env_once()
    if isinstance(env, str):
        return ScbCheckResult(reason=env)
    try:
        if runtime is None:
            from benchwright.sandbox.bwrap import BwrapRuntime

            runtime = BwrapRuntime()
        figures = _run(env, root, runtime)
    except BenchwrightError as exc:
        return ScbCheckResult(reason=f"scb-check could not run: {exc.one_line()}",
                              seconds=round(time.perf_counter() - started, 3))
    seconds = round(time.perf_counter() - started, 3)
    if isinstance(figures[0], str):
        return ScbCheckResult(reason=figures[0], seconds=seconds)
    return ScbCheckResult(figures=figures[0], unparsed=figures[1], seconds=seconds)


def _run(env: BuiltEnv, root: Path, runtime: Runtime
         ) -> tuple[ScbCheckFigures | str, list[str]]:
    """Run scb-check; its figures (or why there are none) and the files it could not parse."""
    with OwnedTemp("benchwright-scbcheck-") as scratch:
        (scratch / "tmp").mkdir()
        # A copy (links kept as links, never followed inside): the sandbox's fresh uid owns it,
        # so it can read what the harness's user alone could read.
        copy_tree(root, scratch / "code")
        out, err = scratch / "stdout", scratch / "stderr"
        # The host runtime (--unsafe-no-sandbox) has no mounts: the real paths there.
        host = runtime.name == "unsafe-local"
        where = scratch / "code" if host else INSIDE
        argv = [str(env.path / "bin" / "python"), "-I", "-c", _MAIN, "check", str(where),
                "--report", "--include-all"]
        with out.open("wb") as stdout, err.open("wb") as stderr:
            result = runtime.run(argv, cwd=scratch / "tmp" if host else Path("/tmp"),
                                 env=_env(env), mounts=_mounts(env, scratch), limits=LIMITS,
                                 stdout=stdout, stderr=stderr)
        if result.timed_out:
            return f"scb-check ran past {LIMITS.wall_clock_s:.0f} s and was stopped", []
        said = _last_line(err)
        if result.exit_code == 2 and "no supported source files" in said:
            return _not_measured(scratch / "code"), []
        if result.exit_code not in (0, 1):  # 1: it found something, as it does on most code
            return f"scb-check exited {result.exit_code}: {said or 'no output'}", []
        return _parse(out), _unparsed(err, where)


# The console script's body: run through the environment's python with -I, so neither the
# working folder nor PYTHON* variables add anything to its import path. scb-check reads its own
# bundled ast-grep rules (about 400 YAML documents, twice) with PyYAML's pure-Python safe loader,
# which is a third of its run; `_FAST_YAML` swaps in PyYAML's libyaml loader of the same safe
# constructor, which reads those files to the same documents
# (tests/metrics/test_scbcheck.py::test_scb_check_rules_read_the_same_with_libyaml).
_FAST_YAML = "import yaml; yaml.SafeLoader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)"
_MAIN = f"import sys; {_FAST_YAML}; from scb_check.cli import main; sys.exit(main())"


def _env(env: BuiltEnv) -> dict[str, str]:
    # scb-check looks for ast-grep on PATH, then next to its interpreter: both are the pinned one.
    return {"PATH": f"{env.path / 'bin'}:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
            "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}


def _mounts(env: BuiltEnv, scratch: Path) -> list[Mount]:
    prefix = Path(os.path.realpath(env.python)).parents[1]
    return [Mount(path=prefix), Mount(path=env.path),
            Mount(path=scratch / "code", writable=True, target=INSIDE, nosymfollow=True),
            Mount(path=scratch / "tmp", writable=True, target=Path("/tmp"))]


def _parse(out: Path) -> ScbCheckFigures | str:
    with out.open("rb") as file:
        text = file.read(_MAX_REPORT).decode(errors="replace")
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                return ScbCheckFigures.model_validate(json.loads(line))
            except ValueError as exc:
                return f"scb-check's report could not be read: {str(exc).splitlines()[0]}"
    return "scb-check printed no report"


def _not_measured(code: Path) -> str:
    """A snapshot with no file of a language scb-check reads: which kinds of file it holds."""
    kinds = sorted({Path(name).suffix or name for _dir, _subdirs, names in os.walk(code)
                    for name in names})
    shown = ", ".join(kinds[:8]) + (", ..." if len(kinds) > 8 else "") if kinds else "no files"
    return (f"not measured for {shown}: scb-check {SCB_CHECK_VERSION} reads none of these "
            "(it reads Python, JavaScript, TypeScript, Rust, C++, Haskell and Zig)")


_PARSE_FAILURE = re.compile(r"failed to parse `([^`]+)` as ")


def _unparsed(err: Path, base: Path) -> list[str]:
    """The files its warnings say it could not parse, relative to the snapshot."""
    with err.open("rb") as file:
        text = file.read(_MAX_REPORT).decode(errors="replace")
    found = {Path(m.group(1)) for m in _PARSE_FAILURE.finditer(text)}
    return sorted(str(p.relative_to(base)) if p.is_relative_to(base) else str(p) for p in found)


def _last_line(path: Path, limit: int = 64 * 1024) -> str:
    """The last line that says something (typer draws its errors in a box)."""
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - limit))
        lines = file.read().decode(errors="replace").splitlines()
    said = [line.strip(" │╭╮╰╯─") for line in lines if any(c.isalnum() for c in line)]
    return said[-1][:300] if said else ""
