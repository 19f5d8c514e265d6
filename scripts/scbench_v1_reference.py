"""Grade SCBench v1.0 reference solutions the way SCBench's Harbor conversion grades them.

Usage (as root, which drops to USER for pytest as Harbor's test.sh does with `runuser`):
    python scripts/scbench_v1_reference.py SCB_DIR [--problem NAME ...] [--checkpoint N ...]
        [--out FILE.jsonl] [--work DIR] [--user scbref] [--python-bin DIR] [--git-dir GIT_DIR]

SCB_DIR is a checkout of github.com/gabeorlanski/scb-problems. For each checkpoint this does
what that repository's `scripts/scb_to_harbor.py` writes into the step's solve.sh and test.sh,
without a container: the reference solution copied into a fresh `app/` folder (a `.venv` with
its requirements.txt when it has one), the problem's tests folder copied to `tests/` (static
assets under `tests/assets/<name>`), then, from `app/` as the unprivileged user,
`uv run --with pytest==9.0.3 ... -m pytest [--timeout=T --timeout-method=signal] --basetemp=...
<earlier checkpoints' test files when include_prior_tests> tests/test_<checkpoint>.py
--checkpoint <checkpoint> --entrypoint "uv run --project <app> <entry>.py" --json-report ...`.
Tests are grouped as the conversion's reward shim groups them: a test from another checkpoint's
file is Regression; else the `error`, `regression`, `functionality` keyword in that order; else
Core; skipped (and xfailed) tests are not counted. conversion.toml's test.sh snippets (e.g.
`ulimit -v`) and verifier timeouts apply. A checkpoint with failing tests is graded a second
time; a test failing only once is listed as flaky.

Prints and appends one JSON line per checkpoint (docs/scbench-parity.md, "SCBench v1.0").
The image's python is 3.12: --python-bin names a folder whose python3 is 3.12 and that USER
can read (pyenv's under /root is not; docs/scbench-parity.md says how to make one).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import subprocess
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

GROUPS = ("Core", "Functionality", "Error", "Regression")
PLUGINS = ("pytest==9.0.3", "pytest-json-ctrf==0.4.1", "pytest-json-report==1.5.0",
           "pytest-timeout==2.4.0")
# The conversion adds a test dependency for each of these modules a test file imports.
IMPORT_TO_PACKAGE = {
    "yaml": "pyyaml", "deepdiff": "deepdiff", "jsonschema": "jsonschema", "httpx": "httpx",
    "pandas": "pandas", "numpy": "numpy", "openpyxl": "openpyxl", "pyarrow": "pyarrow",
    "bs4": "beautifulsoup4", "grpc": "grpcio", "grpc_tools": "grpcio-tools",
    "requests": "requests", "tomli": "tomli",
}
DEFAULT_VERIFIER_TIMEOUT = 600.0
MAX_VERIFIER_TIMEOUT = 7200.0
CHECKPOINT_FILE = re.compile(r"test_(checkpoint_\d+)\.py")
# Harbor's image sets these (its Dockerfile and task.toml's [environment.env]).
IMAGE_ENV = {"PYTHONUNBUFFERED": "1", "TERM": "xterm", "COLUMNS": "240", "LINES": "60",
             "DEBIAN_FRONTEND": "noninteractive", "SHELL": "/bin/bash"}
# The conversion appends a PTY drain to pwd_manager's conftest: after a prompt matched, read
# what arrives in the next 50 ms before returning. Same behaviour, written here.
PWD_MANAGER_DRAIN = """

# --- added by benchwright's scbench_v1_reference.py: the Harbor conversion's PTY drain ---
_bw_expect = PtySession.expect


def _bw_expect_then_drain(self, pattern, timeout=5.0):
    _bw_expect(self, pattern, timeout)
    stop = time.monotonic() + 0.05
    while self.process.poll() is None and time.monotonic() < stop:
        self._read_available(0.01)
    return self.transcript


PtySession.expect = _bw_expect_then_drain
"""


@dataclass
class Checkpoint:
    """One checkpoint as the conversion reads it from config.yaml."""

    name: str
    order: int
    include_prior_tests: bool
    timeout: float | None


@dataclass
class Problem:
    """What the conversion reads from a problem folder and conversion.toml."""

    name: str
    path: Path
    entry_file: str
    dependencies: list[str]
    checkpoints: list[Checkpoint]
    static_assets: dict[str, Path]
    snippets: dict[str, list[str]] = field(default_factory=dict)
    verifier_timeout: float = DEFAULT_VERIFIER_TIMEOUT


@dataclass
class Setup:
    """Where and as whom grading runs."""

    work: Path
    user: str
    python_bin: Path
    uv: str


def dedupe_casefold(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.casefold() not in seen:
            seen.add(item.casefold())
            out.append(item)
    return out


def imported_modules(path: Path) -> set[str]:
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def inferred_dependencies(tests_dir: Path) -> list[str]:
    """Packages for the known modules the tests import (data/assets folders not read)."""
    modules: set[str] = set()
    for path in tests_dir.rglob("*.py"):
        if not {"data", "assets", "__pycache__"} & set(path.parts):
            modules |= imported_modules(path)
    return [IMPORT_TO_PACKAGE[m] for m in sorted(modules) if m in IMPORT_TO_PACKAGE]


def read_checkpoints(config: dict[str, Any]) -> list[Checkpoint]:
    default = config.get("timeout")
    checkpoints = [
        Checkpoint(name, int(raw["order"]), bool(raw.get("include_prior_tests", True)),
                   None if raw.get("timeout", default) is None
                   else float(raw.get("timeout", default)))
        for name, raw in config["checkpoints"].items()]
    return sorted(checkpoints, key=lambda c: c.order)


def problem_overrides(scb_dir: Path, name: str) -> dict[str, Any]:
    path = scb_dir / "conversion.toml"
    if not path.is_file():
        return {}
    section: dict[str, Any] = tomllib.loads(path.read_text()).get(name, {})
    return section


def snippet_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def read_snippets(override: dict[str, Any], checkpoints: list[Checkpoint]) -> dict[str, list[str]]:
    """checkpoint name -> the shell lines test.sh runs before pytest (conversion.toml)."""
    common = snippet_list(override.get("test_sh_snippet"))
    table = override.get("test_sh_snippets")
    if not isinstance(table, dict):
        common += snippet_list(table)
        table = {}
    common += snippet_list(table.get("all")) + snippet_list(table.get("*"))
    return {c.name: common + snippet_list(table.get(c.name)) for c in checkpoints}


def verifier_timeout(override: dict[str, Any], problem_timeout: object) -> float:
    if "verifier_timeout_sec" in override:
        return float(override["verifier_timeout_sec"])
    if isinstance(problem_timeout, (int, float)) and problem_timeout:
        return max(DEFAULT_VERIFIER_TIMEOUT, min(MAX_VERIFIER_TIMEOUT, problem_timeout * 30.0))
    return DEFAULT_VERIFIER_TIMEOUT


def load_problem(scb_dir: Path, name: str) -> Problem:
    path = scb_dir / name
    config = yaml.safe_load((path / "config.yaml").read_text())
    override = problem_overrides(scb_dir, name)
    checkpoints = read_checkpoints(config)
    deps = dedupe_casefold([*(config.get("test_dependencies") or []),
                            *inferred_dependencies(path / "tests"), "pyyaml"])
    raw_assets = config.get("static_assets") or {}
    assets = {key: path / value["path"] for key, value in raw_assets.items()}
    return Problem(name, path, str(config["entry_file"]).removesuffix(".py"), deps, checkpoints,
                   assets, read_snippets(override, checkpoints),
                   verifier_timeout(override, config.get("timeout")))


def group_of(nodeid: str, keywords: Iterable[str], checkpoint: str) -> str:
    """The reward shim's rule: another checkpoint's file is Regression, then the markers."""
    match = CHECKPOINT_FILE.search(nodeid.split("::", 1)[0] if "::" in nodeid else "")
    if match and match.group(1) != checkpoint:
        return "Regression"
    marks = {k.lower() for k in keywords}
    for name in ("error", "regression", "functionality"):
        if name in marks:
            return name.capitalize()
    return "Core"


def short_id(nodeid: str) -> str:
    """A node id from its test file's name on, whatever folder pytest took as its root."""
    path, sep, rest = nodeid.partition("::")
    return Path(path).name + sep + rest


def summarize(report: dict[str, Any], checkpoint: str) -> dict[str, Any]:
    """Counts per group and the failing node ids from a pytest-json-report report."""
    passed = dict.fromkeys(GROUPS, 0)
    total = dict.fromkeys(GROUPS, 0)
    failed = []
    for test in report.get("tests", []):
        outcome = str(test.get("outcome", "error")).lower()
        if outcome in ("skipped", "xfailed"):
            continue
        keywords = test.get("keywords", [])
        group = group_of(test["nodeid"], keywords if isinstance(keywords, list) else list(keywords),
                         checkpoint)
        total[group] += 1
        if outcome in ("passed", "xpassed"):
            passed[group] += 1
        else:
            failed.append(short_id(test["nodeid"]))
    groups = {g: f"{passed[g]}/{total[g]}" if total[g] else "" for g in GROUPS}
    return {"collected": report.get("summary", {}).get("collected"), "groups": groups,
            "failed": failed}


def pytest_command(problem: Problem, checkpoint: Checkpoint, box: Path, setup: Setup) -> list[str]:
    earlier = [c for c in problem.checkpoints if c.order < checkpoint.order]
    prior = [str(box / "tests" / f"test_{c.name}.py") for c in earlier] \
        if checkpoint.include_prior_tests else []
    timeout = [f"--timeout={checkpoint.timeout}", "--timeout-method=signal"] \
        if checkpoint.timeout is not None else []
    withs = [arg for dep in (*PLUGINS, *problem.dependencies) for arg in ("--with", dep)]
    return [setup.uv, "run", *withs, "-m", "pytest", *timeout, f"--basetemp={box / 'pytest-tmp'}",
            *prior, str(box / "tests" / f"test_{checkpoint.name}.py"),
            "--checkpoint", checkpoint.name,
            "--entrypoint", f"uv run --project {box / 'app'} {problem.entry_file}.py",
            f"--ctrf={box / 'ctrf.json'}", "--json-report",
            f"--json-report-file={box / 'report.json'}",
            "--json-report-omit=traceback,streams,log,collectors,warnings", "-rA"]


def user_env(box: Path, setup: Setup) -> dict[str, str]:
    """The environment test.sh's pytest gets under Harbor, with this machine's paths; the
    certificate variables only let uv, pip and npm reach their registries through this machine's
    proxy."""
    cache = setup.work / "cache"
    return {**IMAGE_ENV, "PATH": f"{setup.python_bin}:{Path(setup.uv).parent}:"
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": str(box / "home"), "USER": setup.user, "LOGNAME": setup.user,
            "UV_CACHE_DIR": str(cache / "uv"), "PIP_CACHE_DIR": str(cache / "pip"),
            "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
            "PIP_CERT": "/etc/ssl/certs/ca-certificates.crt", "PIP_CONFIG_FILE": "/dev/null",
            # npx fetches ts-node for test_translator's TypeScript cases, as in Harbor's image
            "NODE_EXTRA_CA_CERTS": "/etc/ssl/certs/ca-certificates.crt"}


def as_user(setup: Setup, argv: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={setup.user}", f"--regid={setup.user}", "--init-groups", *argv]


def run_group(argv: list[str], cwd: Path, env: dict[str, str], timeout: float,
              log: Path) -> int | None:
    """Run in a new session; on timeout kill the whole group and return None."""
    with log.open("ab") as sink:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None


def prepare_box(problem: Problem, checkpoint: Checkpoint, setup: Setup) -> Path:
    """A fresh app/ (the solution), tests/ (the problem's tests, assets) and home/."""
    box = setup.work / "boxes" / problem.name / checkpoint.name
    shutil.rmtree(box, ignore_errors=True)
    shutil.copytree(problem.path / "solutions" / checkpoint.name, box / "app", symlinks=True)
    shutil.copytree(problem.path / "tests", box / "tests", symlinks=True)
    for key, source in problem.static_assets.items():
        target = box / "tests" / "assets" / key
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if problem.name == "pwd_manager":
        with (box / "tests" / "conftest.py").open("a") as conftest:
            conftest.write(PWD_MANAGER_DRAIN)
    for sub in ("home", "pytest-tmp"):
        (box / sub).mkdir()
    subprocess.run(["chown", "-R", f"{setup.user}:", str(box)], check=True)
    return box


def install_requirements(box: Path, setup: Setup, env: dict[str, str]) -> None:
    """solve.sh: a .venv in the solution's folder with its requirements.txt."""
    if (box / "app" / "requirements.txt").is_file():
        script = "python3 -m venv .venv && .venv/bin/python -m pip install -q -r requirements.txt"
        run_group(as_user(setup, ["bash", "-c", script]), box / "app", env, 1800,
                  box / "solve.log")


def grade_once(problem: Problem, checkpoint: Checkpoint, setup: Setup) -> dict[str, Any]:
    box = prepare_box(problem, checkpoint, setup)
    env = user_env(box, setup)
    install_requirements(box, setup, env)
    argv = pytest_command(problem, checkpoint, box, setup)
    snippets = problem.snippets.get(checkpoint.name, [])
    if snippets:
        argv = ["bash", "-c", "\n".join([*snippets, 'exec "$@"']), "bash", *argv]
    started = time.monotonic()
    code = run_group(as_user(setup, argv), box / "app", env, problem.verifier_timeout,
                     box / "pytest.log")
    report_path = box / "report.json"
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    return {**summarize(report, checkpoint.name), "exit_code": code,
            "seconds": round(time.monotonic() - started, 1)}


def grade(problem: Problem, checkpoint: Checkpoint, setup: Setup, commit: str) -> dict[str, Any]:
    """One checkpoint's line; graded a second time when a test failed, to tell flaky ones."""
    first = grade_once(problem, checkpoint, setup)
    line = {"problem": problem.name, "checkpoint": checkpoint.name, "scb_commit": commit, **first}
    if first["failed"] or first["exit_code"] not in (0, 1):
        second = grade_once(problem, checkpoint, setup)
        line["second_run"] = {k: second[k] for k in ("collected", "groups", "exit_code", "failed")}
        line["flaky"] = sorted(set(first["failed"]) ^ set(second["failed"]))
    return line


def missing_files(git_dir: Path | None, scb_dir: Path, name: str) -> list[str]:
    """Files the commit has for this problem that the checkout lacks (large data files)."""
    if git_dir is None:
        return []
    listed = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only",
                             "HEAD", f"{name}/"], capture_output=True, text=True, check=True)
    return [p for p in listed.stdout.splitlines() if not (scb_dir / p).exists()]


def commit_of(git_dir: Path | None, scb_dir: Path) -> str:
    argv = ["git", f"--git-dir={git_dir}"] if git_dir else ["git", "-C", str(scb_dir)]
    done = subprocess.run([*argv, "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def emit(line: dict[str, Any], out: Path) -> None:
    text = json.dumps(line)
    print(text, flush=True)
    with out.open("a") as sink:
        sink.write(text + "\n")


def run_problem(args: argparse.Namespace, setup: Setup, commit: str, name: str) -> None:
    missing = missing_files(args.git_dir, args.scb_dir, name)
    if missing:
        emit({"problem": name, "scb_commit": commit, "missing_files": missing}, args.out)
        return
    problem = load_problem(args.scb_dir, name)
    for checkpoint in problem.checkpoints:
        if not args.checkpoint or checkpoint.order in args.checkpoint:
            emit(grade(problem, checkpoint, setup, commit), args.out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scb_dir", type=Path)
    parser.add_argument("--problem", action="append", default=[])
    parser.add_argument("--checkpoint", action="append", type=int, default=[])
    parser.add_argument("--out", type=Path, default=Path("scbench-v1-reference.jsonl"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/scbench-v1-reference"))
    parser.add_argument("--user", default="scbref", help="the unprivileged user pytest runs as")
    parser.add_argument("--python-bin", type=Path, required=True,
                        help="a folder holding python3 (3.12) that --user can run")
    parser.add_argument("--uv", default=shutil.which("uv") or "uv",
                        help="the uv binary (readable by --user)")
    parser.add_argument("--git-dir", type=Path, default=None,
                        help="scb-problems' git folder, to name the commit and missing files")
    args = parser.parse_args()
    setup = Setup(args.work.resolve(), args.user, args.python_bin.resolve(), args.uv)
    for sub in ("boxes", "cache"):
        (setup.work / sub).mkdir(parents=True, exist_ok=True)
    subprocess.run(["chown", f"{setup.user}:", str(setup.work / "cache")], check=True)
    names = args.problem or sorted(p.name for p in args.scb_dir.iterdir()
                                   if (p / "config.yaml").is_file())
    commit = commit_of(args.git_dir, args.scb_dir)
    for name in names:
        run_problem(args, setup, commit, name)


if __name__ == "__main__":
    main()
