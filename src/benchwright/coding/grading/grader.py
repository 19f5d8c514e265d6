"""Grade one checkpoint of a problem on a workspace snapshot, as SCBench does, in a sandbox."""

from __future__ import annotations

import errno
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from benchwright.coding.grading import expected as ex
from benchwright.coding.grading import jail, scbench_compat
from benchwright.coding.grading import links as lk
from benchwright.coding.grading import pytest_report as pr
from benchwright.coding.grading import scratch as sc
from benchwright.coding.grading import verdict_channel as vc
from benchwright.coding.grading import workspace as ws
from benchwright.coding.grading.evaluation import (
    CheckpointEvaluation,
    EnvInfo,
    GraderInfo,
    GradeStatus,
    GradingRule,
    OutputCut,
    RuleFired,
)
from benchwright.coding.grading.policies import all_verdicts
from benchwright.coding.problems.config import CheckpointConfig, Group, ProblemConfig
from benchwright.coding.problems.semantics import grading_semantics
from benchwright.errors import (
    DiskFull,
    EnvironmentBuildError,
    EnvironmentUnavailable,
    WorkspaceError,
)
from benchwright.files.nofollow import Usage, read_regular, usage
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import CONTAINER_RUNTIMES, ExecResult, Limits, Mount, memory_limit_mb
from benchwright.sandbox.capped_output import CappedPipe
from benchwright.sandbox.environments import (
    BuiltEnv,
    cache_root,
    ensure_env,
    parse_requirements,
    uv_binary,
)
from benchwright.sandbox.interpreters import Interpreter, resolve_python
from benchwright.version import __version__

# The runtimes that isolate: environment builds, a private /tmp and the jail go with them.
SANDBOXED = ("bwrap", *CONTAINER_RUNTIMES)

# The grader's own test environment: pinned, so a verdict does not drift with new releases.
TEST_ENV_BASE = (
    "pytest==9.0.3",
    "pytest-json-report==1.5.0",
    "pytest-timeout==2.4.0",
    "jsonschema==4.26.0",
    "deepdiff==9.1.0",
    "pyyaml==6.0.3",
    "httpx==0.28.1",
)
Progress = Callable[[str], None]
MIB = 1024 * 1024


@dataclass(frozen=True)
class GradeOptions:
    """How to grade: runtime, limits, interpreter."""

    runtime: Runtime
    """Where the tests run (the bubblewrap sandbox by default)."""
    limits: Limits = field(default_factory=Limits)
    """Resource limits for the whole checkpoint."""
    python: str | None = None
    """Interpreter request (`3.12`, a path); None means 3.12 when present."""
    require_entry_file: bool = False
    """Refuse a snapshot without the entry file (for `eval checkpoint`); runs grade it as failed."""
    scratch_root: Path | None = None
    """A 0700 folder for the grading workspaces (a run's own); None: `scratch.private_root()`."""
    grader: str = "pytest"
    """The registered grader (`benchwright.registry.GRADERS`) the run loop and `eval` use."""
    extra_env: Mapping[str, str] = field(default_factory=dict)
    """Variables over the grader's own (TZ, PYTHONHASHSEED): `problems validate` varies them."""
    reverse_files: bool = False
    """Run the test files in reverse order (each file's tests keep theirs): `problems validate`."""
    jail_log: Path | None = None
    """Append every jailed command (command, working folder, paths exposed) to this file, one
    JSON line each: how `scripts/scbench_parity.py --jail-log` shows what the jail let through."""


class GradeOutput(BaseModel):
    """The evaluation and the raw material it was derived from."""

    evaluation: CheckpointEvaluation
    """The result."""
    stdout: str
    """pytest's standard output."""
    stderr: str
    """pytest's standard error."""
    report: dict[str, Any] | None
    """pytest-json-report's report, as pytest sent it to the harness (never the file)."""


class _Prepared(BaseModel):
    """The scratch folder as laid out: the workspace (the submission's copy, pytest's working
    folder) and beside it what only the harness wrote (tests, pytest.ini, plugin, report)."""

    scratch: Path
    workspace: Path
    tests: Path
    """`scratch/.evaluation_tests`: mounted read-only, never under the workspace."""
    asset_env: dict[str, str]
    plugin_path: Path
    anyio: bool
    """Whether pytest loads anyio's plugin (`wants_anyio`): decided once, for the argv that runs
    and the one recorded."""


class _Ran(BaseModel):
    """What the sandboxed pytest did, and what it reported over the verdict channel."""

    result: ExecResult
    stdout: str
    stderr: str
    pipe: vc.PipeReport
    file_report: dict[str, Any] | None
    cut: OutputCut
    anyio: bool
    """`_Prepared.anyio`, for the arguments recorded."""
    links: list[str] = []
    """The links the submission left that point where it cannot read (`links.outside_links`),
    when its folders were nosymfollow for the tests."""
    written: Usage = Field(default_factory=Usage)
    """What the sandbox added to its writable folders, counted once pytest ended (at most a
    little past the caps: the count stops there)."""
    disk_free: int | None = None
    """Bytes free on the grading folder's file system when pytest ended (None: unknown)."""


class Grader(Protocol):
    """A grader as registered in `benchwright.registry.GRADERS` (`grade_checkpoint` is one)."""

    def __call__(self, problem: ProblemConfig, checkpoint: CheckpointConfig, snapshot: Path,
                 options: GradeOptions, progress: Progress = ..., /) -> GradeOutput:
        """Grade `snapshot` against `checkpoint`; nothing is written."""
        ...


def grader_of(options: GradeOptions) -> Grader:
    """The grader `options` name, from the registry."""
    from benchwright.registry import GRADERS

    found: Grader = GRADERS.get(options.grader)
    return found


def grade_checkpoint(
    problem: ProblemConfig,
    checkpoint: CheckpointConfig,
    snapshot: Path,
    options: GradeOptions,
    progress: Progress = lambda _msg: None,
) -> GradeOutput:
    """Grade `snapshot` against `checkpoint` and return the result (nothing is written)."""
    started = time.monotonic()
    _check_snapshot(problem, snapshot, options.require_entry_file)
    ws.check_tests_exist(problem, checkpoint)
    interpreter = resolve_python(options.python)
    prepared = _prepare(problem, checkpoint, snapshot, options.scratch_root)
    try:
        progress("building environments")
        envs = _environments(problem, snapshot, prepared.workspace, interpreter, options.runtime)
        key = _collection_key(problem, checkpoint, prepared, envs, options)
        progress("running pytest")
        ran = _run_pytest(problem, checkpoint, prepared, interpreter, envs, options)
        expected = _expected(problem, checkpoint, prepared, interpreter, envs, options, key, ran)
    finally:
        sc.remove_tree(prepared.scratch)
    evaluation = _evaluate(problem, checkpoint, ran, options, envs, time.monotonic() - started,
                           _Check(expected=expected, tests_root=_tests_dir(prepared),
                                  cwd=prepared.workspace))
    return GradeOutput(evaluation=evaluation, stdout=ran.stdout, stderr=ran.stderr,
                       report=ran.pipe.json_report)


def _check_snapshot(problem: ProblemConfig, snapshot: Path, require_entry_file: bool) -> None:
    if not snapshot.is_dir():
        raise WorkspaceError("workspace snapshot not found", path=snapshot,
                             hint="pass the folder that holds the submission's files")
    if require_entry_file and not (snapshot / problem.entry_filename).is_file():
        raise WorkspaceError(
            f"the entry file {problem.entry_filename} is missing", path=snapshot,
            hint=f"the problem runs `python {problem.entry_filename}` from the workspace root",
        )


def _prepare(problem: ProblemConfig, checkpoint: CheckpointConfig, snapshot: Path,
             root: Path | None) -> _Prepared:
    scratch = sc.new_scratch(root)
    try:
        workspace = scratch / "workspace"
        ws.copy_snapshot(snapshot, workspace)
        tests_dir = ws.copy_tests(problem, checkpoint, scratch)
        scbench_compat.adapt_tests(problem.path, tests_dir)
        asset_env = ws.copy_assets(problem, tests_dir)
        ws.write_pytest_ini(problem, scratch)
        anyio = wants_anyio(problem, checkpoint, tests_dir)
        for sub in ("tmp", "out"):
            (scratch / sub).mkdir()
        plugin_path = vc.plugin_tree(scratch / "plugin")
    except BaseException:
        sc.remove_tree(scratch)
        raise
    return _Prepared(scratch=scratch, workspace=workspace, tests=tests_dir, asset_env=asset_env,
                     plugin_path=plugin_path, anyio=anyio)


def wants_anyio(problem: ProblemConfig, checkpoint: CheckpointConfig, tests_dir: Path) -> bool:
    """Whether pytest loads anyio's plugin: when the tests as laid out (what pytest sees, links
    of the problem already copied as files) or the checkpoint's variables (`PYTEST_ADDOPTS`,
    `PYTEST_PLUGINS`) name anyio. Everywhere else `-p no:anyio` saves its start-up cost."""
    named = any("anyio" in value for value in problem.env_for(checkpoint).values())
    return named or ws.names_anyio(tests_dir)


class _Envs(BaseModel):
    test: BuiltEnv
    solution: BuiltEnv
    solution_error: str | None = None


def _environments(problem: ProblemConfig, snapshot: Path, workspace: Path,
                  interpreter: Interpreter, runtime: Runtime) -> _Envs:
    """Both environments; their builds run in the sandbox unless the runtime is the host's (in
    the runtime's container for podman/docker). The solution's build sees the submission's own
    folder (read-only), nothing else of it."""
    sandboxed = runtime.name in SANDBOXED
    builder = runtime if runtime.name in CONTAINER_RUNTIMES else None
    test_env = ensure_env("tests", interpreter, [*TEST_ENV_BASE, *problem.test_dependencies],
                          sandboxed=sandboxed, runtime=builder)
    # The submission's: a requirements.txt that is a link is not read (it could name a host file).
    text = (read_regular(workspace, "requirements.txt") or b"").decode(errors="replace")
    requirements = parse_requirements(text)
    try:
        return _Envs(test=test_env, solution=ensure_env(
            "solution", interpreter, requirements, sandboxed=sandboxed,
            source=snapshot.resolve(), runtime=builder))
    except EnvironmentBuildError as exc:
        _unless_outside(exc)
        # SCBench tolerates requirements that do not install; the submission runs without them.
        bare = ensure_env("solution", interpreter, [], sandboxed=sandboxed, runtime=builder)
        return _Envs(test=test_env, solution=bare, solution_error=exc.message)


def _unless_outside(exc: EnvironmentBuildError) -> None:
    """A build that failed for a reason outside the submission (an index refusing or silent, a
    full disk; `build_faults`) is the machine's failure, never charged to the submission."""
    from benchwright.sandbox.build_faults import outside_cause

    cause = outside_cause(exc.message, [cache_root()])
    if cause is not None:
        raise EnvironmentUnavailable(
            f"the submission's environment could not be built: {cause} ({exc.message})",
            hint="check the package index settings (UV_DEFAULT_INDEX, UV_INDEX_URL) and the "
                 "network, then resume the run") from None


def _info(env: BuiltEnv, error: str | None = None) -> EnvInfo:
    return EnvInfo(key=env.key, python_version=env.python_version, packages=env.packages,
                   reused=env.reused, error=error)


def entrypoint_command(problem: ProblemConfig) -> str:
    """How the tests start the submission; `python` is the solution environment's."""
    return f"python {problem.entry_filename}"


def pytest_args(problem: ProblemConfig, checkpoint: CheckpointConfig, report: Path,
                jail: Sequence[str] = (), *, anyio: bool, scratch: Path) -> list[str]:
    """pytest's arguments: SCBench's, plus the harness's config, root and tests folder, all in
    `scratch` (see `workspace`), so that pytest reads no config or conftest.py of the workspace
    (its working folder). `jail` is the launcher the submission's command is prefixed with (see
    `grading.jail`); without `anyio` (`wants_anyio`) the test environment's anyio plugin is not
    loaded."""
    timeout = problem.timeout_for(checkpoint)
    # Jailed, the launcher stands for `python`: `python-in-jail X.py` (see `jail.write_launcher`).
    entrypoint = shlex.join([*jail, problem.entry_filename] if jail
                            else shlex.split(entrypoint_command(problem)))
    tests = scratch / ws.TESTS_DIR
    return [
        # Only this config is read (pytest.toml, pyproject.toml, ... are not searched for); the
        # root names the node ids (`.evaluation_tests/test_checkpoint_1.py::...`); no
        # conftest.py above the tests folder is loaded.
        "-c", str(scratch / ws.PYTEST_INI), f"--rootdir={scratch}", f"--confcutdir={tests}",
        *([f"--timeout={int(timeout)}"] if timeout is not None else []),
        f"--entrypoint={entrypoint}",
        f"--checkpoint={checkpoint.name}",
        "--json-report", f"--json-report-file={report}",
        "--json-report-omit=streams", "--json-report-omit=log", "--json-report-omit=warnings",
        "-p", "no:cacheprovider",
        *([] if anyio else ["-p", "no:anyio"]),
        "-vv",
        str(tests),
    ]


def graded_pytest_args(problem: ProblemConfig, checkpoint: CheckpointConfig,
                       report: Path, reverse_files: bool = False,
                       jail: Sequence[str] = (), *, anyio: bool, scratch: Path) -> list[str]:
    """`pytest_args` with our verdict plugin first (see `verdict_plugin`), the jail's when the
    submission is jailed, and the plugin that reverses the order of the test files when asked."""
    reverse = ["-p", vc.REVERSE_PLUGIN] if reverse_files else []
    jailed = ["-p", vc.JAIL_PLUGIN] if jail else []
    return ["-p", vc.PLUGIN, *jailed, *reverse, *pytest_args(problem, checkpoint, report, jail,
                                                        anyio=anyio, scratch=scratch)]


def _run_pytest(
    problem: ProblemConfig,
    checkpoint: CheckpointConfig,
    prepared: _Prepared,
    interpreter: Interpreter,
    envs: _Envs,
    options: GradeOptions,
) -> _Ran:
    out = prepared.scratch / "out"
    env = _sandbox_env(problem, checkpoint, prepared, options, envs.solution.path,
                       interpreter.executable.parent)
    jail_command, jail_mounts = _jail(prepared, interpreter, envs, options, env)
    argv = [str(envs.test.python), "-P", "-m", "pytest",
            *graded_pytest_args(problem, checkpoint, out / "report.json",
                                options.reverse_files, jail_command,
                                anyio=prepared.anyio, scratch=prepared.scratch)]
    mounts = [*_mounts(prepared, interpreter, [envs.test.path, envs.solution.path]),
              *uv_mounts(), *jail_mounts]
    limits = options.limits
    channel = vc.Channel(max_bytes=limits.max_report_mb * MIB)
    env[vc.FD_ENV] = str(channel.write_fd)
    env[vc.MESSAGE_ENV] = str(limits.max_message_kb * 1024)
    env[vc.ROOTS_ENV] = _submission_roots(prepared, env["TMPDIR"], envs.solution.path, mounts)
    # pytest's output goes to pipes outside the sandbox's view, streamed and capped: only the
    # verdict pipe decides a verdict, and no amount of output grows the harness.
    stdout, stderr = CappedPipe(limits.max_output_mb * MIB), CappedPipe(limits.max_output_mb * MIB)
    before = usage([prepared.workspace])
    try:
        result = options.runtime.run(argv, cwd=prepared.workspace, env=env, mounts=mounts,
                                     limits=limits, stdout=stdout.write_fd,
                                     stderr=stderr.write_fd, pass_fds=(channel.write_fd,))
    finally:
        pipe = channel.received()
        _keep_jail_log(prepared, options)
        out_text, err_text = (_text(p.finish()) for p in (stdout, stderr))
    return _Ran(result=result, stdout=out_text, stderr=err_text, pipe=pipe,
                file_report=vc.read_report_file(out / "report.json", limits.max_report_mb * MIB),
                cut=OutputCut(stdout_bytes=stdout.cut, stderr_bytes=stderr.cut,
                              verdict_bytes=pipe.cut_bytes, **_message_cuts(pipe)),
                anyio=prepared.anyio, links=_left_links(prepared, interpreter, envs, options),
                written=_written(prepared, before, limits), disk_free=_free(prepared.scratch))


def _free(folder: Path) -> int | None:
    try:
        info = os.statvfs(folder)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


def links_refused(options: GradeOptions) -> bool:
    """Whether the tests never follow the submission's links: its folders are nosymfollow in
    the grading sandbox started by root, bubblewrap's or a container's (`sandbox.bwrap`,
    `sandbox.container`, `Mount.nosymfollow`)."""
    return options.runtime.name in ("bwrap", "podman", "docker") and os.geteuid() == 0


def _left_links(prepared: _Prepared, interpreter: Interpreter, envs: _Envs,
                options: GradeOptions) -> list[str]:
    """The links the submission left in its folders that point where it cannot read."""
    if not links_refused(options):
        return []
    workspace = str(prepared.workspace)
    readable = [workspace, "/tmp", str(interpreter.prefix), str(envs.solution.path), *lk.SYSTEM]
    return lk.outside_links([(prepared.workspace, workspace), (prepared.scratch / "tmp", "/tmp")],
                            readable, str(prepared.tests))


def _written(prepared: _Prepared, before: Usage, limits: Limits) -> Usage:
    """What the sandbox (the tests, the submission) added to its writable folders: walked by
    descriptor once pytest has ended, stopping just past the caps."""
    caps = Usage(entries=limits.max_write_files, bytes=limits.max_write_mb * MIB)
    stop = Usage(entries=before.entries + caps.entries, bytes=before.bytes + caps.bytes)
    folders = [prepared.workspace, prepared.scratch / "tmp", prepared.scratch / "out"]
    return usage(folders, stop).minus(before)


def _over_cap(written: Usage, limits: Limits) -> str | None:
    """Why what the sandbox wrote is over the caps; None when it is not."""
    if written.entries > limits.max_write_files:
        return f"more than {limits.max_write_files} files and folders (max_write_files)"
    if written.bytes > limits.max_write_mb * MIB:
        return f"more than {limits.max_write_mb} MiB (max_write_mb)"
    return None


def _submission_roots(prepared: _Prepared, tmp: str, solution: Path,
                      mounts: Sequence[Mount]) -> str:
    """The folders whose files pytest's process must never run (`submission_guard`): the
    workspace copy, the sandbox's temporary folder, the environment the submission's
    requirements built. What else the harness mounts read-only (the tests folder, the plugin,
    the tests' environment, the interpreter) is trusted, even where it sits under one of them
    (the tests folder inside the workspace, a scratch folder under /tmp)."""
    trusted = [m.inside for m in mounts if not m.writable and m.path != solution]
    return json.dumps({"roots": [str(prepared.workspace), tmp, str(solution)],
                       "trusted": [str(path) for path in trusted]})


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _message_cuts(pipe: vc.PipeReport) -> dict[str, int]:
    """What the plugin cut of the report's texts, as it said."""
    cut = (pipe.json_report or {}).get(vc.CUT_KEY)
    if not isinstance(cut, dict):
        return {}
    return {"messages": int(cut.get("texts") or 0),
            "message_characters": int(cut.get("characters") or 0)}


def jailed(options: GradeOptions) -> bool:
    """Whether the submission runs in the jail: always in the bubblewrap sandbox and in a
    container (nested bubblewrap; the grading image has it), never on the host
    (`--unsafe-no-sandbox`)."""
    return options.runtime.name in SANDBOXED


def _jail(prepared: _Prepared, interpreter: Interpreter, envs: _Envs,
          options: GradeOptions, env: Mapping[str, str]) -> tuple[list[str], list[Mount]]:
    """Set up the jail in the plugin tree: the launcher's command ([] when not jailed) and the
    mount bubblewrap needs when it lives outside /usr. `env` is pytest's environment."""
    if not jailed(options):
        return [], []
    inside_image = options.runtime.name in CONTAINER_RUNTIMES  # the image's own bubblewrap
    bwrap = Path("/usr/bin/bwrap") if inside_image else \
        Path(getattr(options.runtime, "bwrap", None) or "/usr/bin/bwrap").resolve()
    jail.write_launcher(prepared.plugin_path, str(envs.test.python))
    jail.write_config(prepared.plugin_path, bwrap=str(bwrap), workspace=prepared.workspace,
                      tests=prepared.tests, solution=envs.solution.path,
                      readonly=[interpreter.prefix, envs.solution.path], env=env,
                      tmp=env["TMPDIR"],
                      log=prepared.scratch / "out" / "jail.jsonl" if options.jail_log else None)
    return [jail.LAUNCHER], [] if inside_image or bwrap.is_relative_to("/usr") \
        else [Mount(path=bwrap)]


def _keep_jail_log(prepared: _Prepared, options: GradeOptions) -> None:
    """Append the sandbox's jail log to `options.jail_log` (a diagnostic: bounded, never
    followed through a link)."""
    if options.jail_log is None:
        return
    data = read_regular(prepared.scratch / "out", "jail.jsonl", limit=64 << 20) or b""
    with options.jail_log.open("ab") as log:
        log.write(data)


def _sandbox_env(
    problem: ProblemConfig, checkpoint: CheckpointConfig, prepared: _Prepared,
    options: GradeOptions, solution: Path, interpreter_bin: Path,
) -> dict[str, str]:
    tmp = "/tmp" if options.runtime.name in SANDBOXED else str(prepared.scratch / "tmp")
    path = [str(prepared.plugin_path), *_tests_pythonpath(problem.env_for(checkpoint).get(
        "PYTHONPATH", ""), prepared.tests)]
    return {
        **problem.env_for(checkpoint),
        **prepared.asset_env,
        # For pytest only: the plugin takes itself off before any test runs.
        "PYTHONPATH": os.pathsep.join(path),
        **_trusted_programs(solution, interpreter_bin, jailed(options), prepared.plugin_path),
        "HOME": tmp, "TMPDIR": tmp,
        "LANG": "C.UTF-8", "TZ": "UTC", "PYTHONHASHSEED": "0",
        # Tests may call `uv run` (SCBench's environments have uv): offline, cache in /tmp.
        "UV_CACHE_DIR": f"{tmp}/uv-cache", "UV_OFFLINE": "1", "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_PROGRESS": "1",
        **options.extra_env,
    }


def _tests_pythonpath(value: str, tests: Path) -> list[str]:
    """The problem's PYTHONPATH entries, a relative one taken from the tests folder: against
    pytest's working folder it would name the workspace, whose modules would then run unjailed in
    every Python the tests start (and in pytest itself)."""
    return [str(tests / entry) if not os.path.isabs(entry) else entry  # noqa: PTH117
            for entry in value.split(os.pathsep) if entry]


def _trusted_programs(solution: Path, interpreter_bin: Path, jailed: bool,
                      plugin: Path) -> dict[str, str]:
    """PATH of the programs the tests start, unjailed: nothing the submission or its environment
    built is on it (the jail puts the solution environment's `bin/` first for the jailed command
    alone). The interpreter's own folder comes first: a test's bare `python` (`uv run`'s too) is
    the same Python as before, without the submission's packages. No user site either.
    PYTHONSAFEPATH is not set: a test's own script must import its siblings (dynamic_buffer's
    `uv run run.py` imports the module the submission generated beside it; with it, 15 of 30
    reference cases failed). Without the jail (`--unsafe-no-sandbox`) everything runs on the
    host anyway, as it did: the solution's `bin/` first. Jailed, the jail's launcher folder
    (`jail.write_launcher`: the harness's, read-only) comes last."""
    system = f"/usr/local/bin:/usr/bin:/bin:{Path(uv_binary()).parent}"
    if not jailed:
        return {"PATH": f"{solution}/bin:{system}", "VIRTUAL_ENV": str(solution)}
    launchers = jail.launcher_path(plugin).parent
    return {"PATH": f"{interpreter_bin}:{system}:{launchers}", "PYTHONNOUSERSITE": "1"}


def uv_mounts() -> list[Mount]:
    """uv (and uvx beside it) read-only: the tests' only view of the folder they live in."""
    uv = Path(uv_binary())
    return [Mount(path=p) for p in (uv, uv.with_name("uvx")) if p.is_file()]


def _mounts(prepared: _Prepared, interpreter: Interpreter, envs: list[Path]) -> list[Mount]:
    return [
        Mount(path=interpreter.prefix),
        *(Mount(path=env) for env in envs),
        # The folders the submission writes (its workspace, the tests' tmp_path folders it is
        # handed): pytest and every process it starts outside the jail never follow a link in
        # them (the jail's own bubblewrap clears the flag: inside, its links work as ever).
        Mount(path=prepared.scratch / "tmp", writable=True, target=Path("/tmp"), nosymfollow=True),
        Mount(path=prepared.workspace, writable=True, nosymfollow=True),
        # Beside the workspace, read-only: the tests' folder is on pytest's sys.path, and nothing
        # the submission runs may write a module (or a conftest.py) there.
        Mount(path=prepared.tests),
        Mount(path=prepared.scratch / Path(ws.PYTEST_INI).parent),
        Mount(path=prepared.scratch / "out", writable=True),
        Mount(path=prepared.plugin_path),
    ]


def _evaluate(
    problem: ProblemConfig,
    checkpoint: CheckpointConfig,
    ran: _Ran,
    options: GradeOptions,
    envs: _Envs,
    total_s: float,
    check: _Check,
) -> CheckpointEvaluation:
    result, collected = ran.result, ran.pipe.collected
    status, reason = _status(result, ran, collected, options)
    graded = _graded(problem, checkpoint, ran, check, status)
    semantics = grading_semantics(problem.path)
    cases = pr.left_out(graded.cases, semantics)
    counts = pr.count_groups(cases)
    refused = lk.rule(ran.links, cases) if links_refused(options) else None
    return CheckpointEvaluation(
        problem=problem.name, problem_version=problem.version,
        checkpoint=checkpoint.name, checkpoint_version=checkpoint.version,
        status=status, infrastructure_reason=reason if status is not GradeStatus.TAMPERED else None,
        tampering_reason=reason if status is GradeStatus.TAMPERED else None,
        rules_fired=[*graded.rules, *([refused] if refused is not None else []),
                     *_rules(ran, options.limits)],
        memory_exceeded=result.memory_exceeded, output_cut=ran.cut,
        sandbox_killed_by=result.sandbox_killed_by
        if status is GradeStatus.INFRASTRUCTURE_FAILURE else None,
        pytest_exit_code=result.exit_code, pytest_collected=collected, semantics=semantics,
        counts=counts, verdicts=all_verdicts(counts, status is not GradeStatus.COMPLETED),
        tests=cases, duration_s=result.duration_s, total_duration_s=round(total_s, 3),
        grader=GraderInfo(
            benchwright_version=__version__, runtime=result.runtime,
            limits=_in_force(options.limits),
            entrypoint=entrypoint_command(problem), jailed=jailed(options),
            pytest_args=graded_pytest_args(
                problem, checkpoint, Path("report.json"), options.reverse_files,
                [jail.LAUNCHER] if jailed(options) else (),
                anyio=ran.anyio, scratch=Path("..")),
            test_env=_info(envs.test), solution_env=_info(envs.solution, envs.solution_error),
        ),
    )


def _in_force(limits: Limits) -> Limits:
    """The limits with the machine's default memory limit filled in, as they applied."""
    return limits.model_copy(update={"memory_mb": memory_limit_mb(limits)})


DISK_SLACK = 2**20
"""Less free space than this when pytest ended without its report: the disk filled up."""

# pytest's exit status when SIGKILL ended it (directly, or as a shell reports it)
_KILLED = (-signal.SIGKILL, 128 + signal.SIGKILL)


def _status(result: ExecResult, ran: _Ran, collected: int,
            options: GradeOptions) -> tuple[GradeStatus, str | None]:
    if ran.pipe.refused:  # the problem's error, whatever else happened: never a pass
        return GradeStatus.INFRASTRUCTURE_FAILURE, _refused_reason(ran.pipe.refused)
    over = _over_cap(ran.written, options.limits)
    if over is not None:  # the submission's doing (or its tests'): the checkpoint fails
        return GradeStatus.TAMPERED, (
            f"the tests and the submission added {over} to the grading sandbox's writable "
            "folders (workspace, /tmp); the checkpoint fails")
    if result.timed_out:
        return GradeStatus.WALL_CLOCK_TIMEOUT, (
            f"the checkpoint ran past its {result.duration_s:.0f} s wall-clock limit and was killed"
        )
    if result.memory_exceeded and (ran.pipe.summary is None or result.exit_code in _KILLED):
        return GradeStatus.MEMORY_LIMIT, (
            "the sandbox's memory limit was reached and the kernel killed pytest "
            f"(exit code {result.exit_code}); see --memory-mb")
    if result.sandbox_killed_by is not None:  # from outside: not the submission's doing
        return GradeStatus.INFRASTRUCTURE_FAILURE, (
            f"the grading sandbox was killed from outside by "
            f"{_signal_name(result.sandbox_killed_by)} (the OOM killer or an operator), not by "
            "the code inside; grade it again")
    if ran.pipe.cut_bytes:
        return GradeStatus.INFRASTRUCTURE_FAILURE, (
            f"pytest sent the harness more than {options.limits.max_report_mb} MiB of results "
            "(max_report_mb); raise it for a problem this big")
    forged = _tampering(result, ran)
    if forged is not None:
        _unless_disk_full(ran, options)
        return GradeStatus.TAMPERED, forged
    if not pr.is_infrastructure_failure(result.exit_code, collected):
        return GradeStatus.COMPLETED, None
    failures = pr.collection_failures(ran.pipe.json_report or {})
    if failures:
        return GradeStatus.INFRASTRUCTURE_FAILURE, "tests failed to collect: " + "; ".join(failures)
    return GradeStatus.INFRASTRUCTURE_FAILURE, (
        f"pytest exited with code {result.exit_code} after collecting {collected} tests"
    )


def _refused_reason(paths: list[str]) -> str:
    more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
    return (f"the tests ran the submission's file {paths[0]}{more} inside pytest's own process, "
            "where it could forge the verdict; the harness refused it: an error of the problem "
            "(its tests must start the submission only through the entry point)")


def _rules(ran: _Ran, limits: Limits) -> list[RuleFired]:
    """The guards of the grader that fired on this checkpoint."""
    rules = []
    over = _over_cap(ran.written, limits)
    if over is not None:
        rules.append(RuleFired(
            rule=GradingRule.CAP_EXCEEDED, items=["workspace", "/tmp"],
            detail=f"grading left {over} in the sandbox's writable folders "
                   f"(counted: {ran.written.entries} entries, {ran.written.bytes // MIB} MiB)"))
    if ran.pipe.refused:
        rules.append(RuleFired(
            rule=GradingRule.IMPORTED_SUBMISSION, items=ran.pipe.refused[:5],
            detail=f"the tests imported or executed {len(ran.pipe.refused)} file(s) of the "
                   "submission inside pytest; each was refused before it ran"))
    return rules


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} ({number})"
    except ValueError:
        return f"signal {number}"


def _unless_disk_full(ran: _Ran, options: GradeOptions) -> None:
    """A full disk cuts pytest's report as tampering would: the machine's failure, not the
    submission's (its writes are capped, max_write_mb). Raised as the write failure it is: the
    run stops with one line, and --resume redoes the checkpoint."""
    if ran.disk_free is not None and ran.disk_free < DISK_SLACK:
        raise DiskFull(OSError(errno.ENOSPC, "No space left on device"), DISK_SLACK,
                       str(options.scratch_root or "the grading folder"))


def _tampering(result: ExecResult, ran: _Ran) -> str | None:
    """Why the verdict cannot be trusted, or None.

    pytest that ends without its summary on the pipe was killed or interfered with, unless it
    stopped before any session (exit codes 2-5: bad options, no tests), which the infrastructure
    rules below report.
    """
    if ran.pipe.summary is None:
        if result.exit_code in pr.INFRA_EXIT_CODES:
            return None
        return (f"pytest ended with exit code {result.exit_code} without reporting its results "
                "to the harness (it was killed, or its report channel was interfered with)")
    return vc.tampering(result.exit_code, ran.pipe, ran.file_report)


class _Check(BaseModel):
    """What the grade compares the run with (`expected`), and where the problem's tests were."""

    expected: ex.Expected | None
    tests_root: Path
    cwd: Path


def _graded(problem: ProblemConfig, checkpoint: CheckpointConfig, ran: _Ran, check: _Check,
            status: GradeStatus) -> ex.Reconciled:
    """The cases the counts see: the run's, checked against the checkpoint's own collection
    when pytest ran to its end (a run cut short fails whatever its counts)."""
    custom: dict[str, Group] = {name: m.group for name, m in problem.markers.items()}
    report = ran.pipe.json_report or {}
    if status is not GradeStatus.COMPLETED or check.expected is None:
        return ex.Reconciled(cases=pr.test_cases(report, checkpoint.name, custom))
    return ex.reconcile(check.expected, report, checkpoint.name, custom, check.tests_root,
                        check.cwd)


def _tests_dir(prepared: _Prepared) -> Path:
    """The laid-out tests pytest runs."""
    return prepared.tests


def _collection_key(problem: ProblemConfig, checkpoint: CheckpointConfig, prepared: _Prepared,
                    envs: _Envs, options: GradeOptions) -> str:
    """The cache key of the checkpoint's own collection (`expected.cache_key`): taken before
    pytest runs, from the tests as laid out and what shapes what pytest collects."""
    recorded = graded_pytest_args(
        problem, checkpoint, Path("report.json"), False,
        [jail.LAUNCHER] if jailed(options) else (), anyio=prepared.anyio,
        scratch=Path(".."))  # as recorded: the real scratch folder would change every key
    # pytest's config (the problem's markers) is read through -c from beside the tests
    ini = (prepared.scratch / ws.PYTEST_INI).read_text(encoding="utf-8")
    shaping = [__version__, options.runtime.name, envs.test.key, checkpoint.name,
               sorted(problem.env_for(checkpoint).items()), _scratch_free(prepared), recorded,
               ini]
    return ex.cache_key(_tests_dir(prepared), shaping)


def _scratch_free(prepared: _Prepared) -> list[tuple[str, str]]:
    """The assets' variables with the scratch folder's path, new at every grading, taken out:
    in the key it made every grading of a problem with assets a new entry of the cache."""
    return sorted((name, value.replace(str(prepared.scratch), "<scratch>"))
                  for name, value in prepared.asset_env.items())


def _expected(problem: ProblemConfig, checkpoint: CheckpointConfig, prepared: _Prepared,
              interpreter: Interpreter, envs: _Envs, options: GradeOptions, key: str,
              ran: _Ran) -> ex.Expected | None:
    """The checkpoint's own collection: cached, else collected now (and cached when it worked);
    None when the run did not get to its end (nothing to compare)."""
    if ran.result.timed_out or ran.pipe.summary is None:
        return None
    cached = ex.load(key)
    if cached is not None:
        return cached
    found = _collect_pass(problem, checkpoint, prepared, interpreter, envs, options)
    if found.error is None:
        ex.store(key, found)
    return found


def _collect_pass(problem: ProblemConfig, checkpoint: CheckpointConfig, prepared: _Prepared,
                  interpreter: Interpreter, envs: _Envs, options: GradeOptions) -> ex.Expected:
    """pytest `--collect-only` with the grading's arguments, in the same runtime, over the
    checkpoint laid out as for grading (`_prepare`) from an empty snapshot: no file of the
    submission, no solution environment, no extra variable (`GradeOptions.extra_env`)."""
    empty = prepared.scratch / "empty"
    empty.mkdir()
    laid = _prepare(problem, checkpoint, empty, options.scratch_root)
    try:
        command = [jail.LAUNCHER] if jailed(options) else []
        argv = [str(envs.test.python), "-P", "-m", "pytest", *ex.collect_args(graded_pytest_args(
            problem, checkpoint, laid.scratch / "out" / "report.json", False, command,
            anyio=laid.anyio, scratch=laid.scratch))]
        env = _sandbox_env(problem, checkpoint, laid, replace(options, extra_env={}),
                           envs.test.path, interpreter.executable.parent)
        channel = vc.Channel(max_bytes=options.limits.max_report_mb * MIB)
        env[vc.FD_ENV] = str(channel.write_fd)
        try:
            result = options.runtime.run(
                argv, cwd=laid.workspace, env=env, limits=options.limits,
                mounts=[*_mounts(laid, interpreter, [envs.test.path]), *uv_mounts()],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(channel.write_fd,))
        finally:
            pipe = channel.received()
    finally:
        sc.remove_tree(laid.scratch)
    return ex.from_pipe(pipe, result.exit_code)
