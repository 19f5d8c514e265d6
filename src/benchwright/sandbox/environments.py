"""Python environments built with uv and cached by the hash of what went into them.

An environment is keyed by the interpreter, the exact requirement lines and the content of every
local path they name in the submission's folder (`./pkg`, `.`, `-e .`, `file:` URLs; walked
without following a link, `localpaths`), so grading the same requirements again installs nothing
(and starts no sandbox and no proxy), and no submission gets an environment another one shaped.
The build sees only those paths of the submission. A finished environment records a fingerprint
of its files; one whose files changed since is rebuilt, never reused. A finished environment
carries a marker file, written by the harness; a half-built one (a crash, a kill -9) has none and
is rebuilt. A file lock keeps two graders from building the same environment at once.
Requirements are untrusted code (a build backend runs at install), so builds run in the sandbox
(`env_build`); only `--unsafe-no-sandbox` builds on the host.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from benchwright.errors import (
    EnvironmentBuildError,
    PrerequisiteError,
    install_command,
)
from benchwright.files.atomic import write_text_atomic
from benchwright.protocols import Runtime
from benchwright.sandbox import caches, localpaths
from benchwright.sandbox.bwrap import require_bwrap
from benchwright.sandbox.caches import cache_base
from benchwright.sandbox.interpreters import Interpreter

MARKER = caches.ENV_MARKER
# 3: benchwright's own environments (test, evaluator, agents) come with their bytecode. Every
# grading starts pytest from the read-only test environment: without .pyc files each start
# compiled pytest and its plugins anew (~0.3 s CPU; 13% of an oracle run's CPU).
ENV_FORMAT = 3
# Passed through to uv so that mirrors and proxies configured by the user keep working.
_UV_PASSTHROUGH = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE", "UV_CACHE_DIR")


class BuiltEnv(BaseModel):
    """A ready environment."""

    path: Path
    """The environment's folder (a virtualenv)."""
    key: str
    """The content hash it is cached under."""
    python_version: str
    """The interpreter's version."""
    requirements: list[str]
    """The requirement lines it was built from."""
    packages: list[str]
    """What is installed, as `uv pip freeze` prints it."""
    reused: bool = False
    """True when it came from the cache and nothing was installed."""
    fingerprint: str | None = None
    """Of its files as built (`localpaths.fingerprint`): a changed environment is not reused."""

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.path / "bin" / "python"


def cache_root() -> Path:
    """Where environments live: `cache_base()/envs`."""
    return cache_base() / "envs"


def env_key(interpreter: Interpreter, requirements: Sequence[str],
            local: str | None = None) -> str:
    """The content hash of an environment (`local`: the digest of the local paths it names)."""
    parts: list[object] = [ENV_FORMAT, interpreter.version, str(interpreter.executable),
                           list(requirements)]
    payload = json.dumps(parts if local is None else [*parts, local])
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def ensure_env(label: str, interpreter: Interpreter, requirements: Sequence[str], *,
               sandboxed: bool | None = None, source: Path | None = None,
               runtime: Runtime | None = None) -> BuiltEnv:
    """The environment for these requirements, built on first use and reused after.

    `sandboxed`: build in the bubblewrap sandbox (True), on the host (False: only for
    `--unsafe-no-sandbox`), or in the sandbox when bubblewrap works here (None: for
    benchwright's own pinned requirements). `source`: the submission's folder; the local paths
    the requirements name in it are keyed by content and visible read-only to the build.
    `runtime`: the container runtime a sandboxed build runs in (None: bubblewrap); its image
    is part of the key, so an environment built in one image is never used in another.
    Bytecode is compiled at install, except in a submission's environment (`source` given):
    uv compiles with the environment's own python, whose start would run the packages' .pth
    files during the build, which pip (SCBench's installer) never does; there the base
    interpreter compiles it after the install, without `site` (no .pth runs). Without bytecode
    every jailed start recompiled each import (the environment is read-only there): a FastAPI
    server took 3-4 s to start, past a test's 5 s under load.
    """
    named = localpaths.named_paths(requirements, source) if source is not None else []
    local = localpaths.digest(source, named) if source is not None and named else None
    if source is not None:  # a submission's: bytecode since format "pyc" (see env_build)
        local = f"pyc:{local}"
    image = getattr(runtime, "image", None)
    key = env_key(interpreter, requirements, local if image is None else f"{local}@{image}")
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{label}-{key}"
    with file_lock(root / f"{label}-{key}.lock"):
        reused = _reusable(path)
        if reused is not None:
            caches.hold(path)  # under the build lock: `benchwright cache prune` takes it too
            return reused
        if sandboxed is None:
            sandboxed = _bwrap_works()
        compiled = source is None  # not a submission's (see above)
        if not sandboxed:
            built = _build(path, key, interpreter, list(requirements), compiled)
        else:
            built = _build_sandboxed(path, key, interpreter, list(requirements), source, named,
                                     runtime, compiled)
        caches.hold(path)
    caches.enforce_env_cap(cache_base())
    return built


def _reusable(path: Path) -> BuiltEnv | None:
    """The cached environment at `path` if it is finished and its files are as built."""
    if not (path / MARKER).is_file():
        return None
    try:
        built = BuiltEnv.model_validate_json((path / MARKER).read_text())
    except ValueError:
        return None
    now = localpaths.fingerprint(path, MARKER)
    if built.fingerprint is None:
        # Built by a version without fingerprints, under a key that named no local path (lines
        # that name one have new keys): adopted as it is now, rather than pulled from under a
        # grading that may be using it.
        built = built.model_copy(update={"fingerprint": now})
        write_text_atomic(path / MARKER, built.model_dump_json(indent=2))
    elif built.fingerprint != now:
        return None  # changed since it was built: rebuilt, never reused
    return built.model_copy(update={"reused": True})


def parse_requirements(text: str) -> list[str]:
    """Requirement lines without comments and blank lines, in file order."""
    lines = (line.split(" #")[0].strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _bwrap_works() -> bool:
    try:
        require_bwrap()
    except PrerequisiteError:
        return False
    return True


def _build_sandboxed(path: Path, key: str, interpreter: Interpreter, requirements: list[str],
                     source: Path | None, named: list[str],
                     runtime: Runtime | None = None, compiled: bool = False) -> BuiltEnv:
    from benchwright.sandbox.env_build import SandboxedBuild

    shutil.rmtree(path, ignore_errors=True)
    try:
        build = SandboxedBuild(path, interpreter, source, named, runtime=runtime,
                               compiled=compiled)
        frozen = build.run(uv_binary(), requirements)
    except EnvironmentBuildError:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return _finish(path, key, interpreter, requirements, frozen)


def _finish(path: Path, key: str, interpreter: Interpreter, requirements: list[str],
            frozen: list[str]) -> BuiltEnv:
    marker = path / MARKER
    if marker.is_dir() and not marker.is_symlink():  # whatever a build left under its name
        shutil.rmtree(marker)
    marker.unlink(missing_ok=True)
    built = BuiltEnv(path=path, key=key, python_version=interpreter.version,
                     requirements=requirements, packages=frozen,
                     fingerprint=localpaths.fingerprint(path, MARKER))
    write_text_atomic(path / MARKER, built.model_dump_json(indent=2))
    return built


def _build(path: Path, key: str, interpreter: Interpreter, requirements: list[str],
           compiled: bool) -> BuiltEnv:
    """The unsandboxed build (`--unsafe-no-sandbox`): uv on the host, which sees everything."""
    shutil.rmtree(path, ignore_errors=True)
    _uv(["venv", "--quiet", "--python", str(interpreter.executable), str(path)])
    if requirements:
        req_file = path / "requirements.in"
        req_file.write_text("\n".join(requirements) + "\n")
        try:
            _uv(["pip", "install", "--quiet", *(["--compile-bytecode"] if compiled else []),
                 "--python", str(path / "bin/python"), "-r", str(req_file)])
            if not compiled:  # as the sandboxed build does (env_build's script)
                subprocess.run([str(interpreter.executable), "-S", "-m", "compileall", "-q",
                                str(path / "lib")], capture_output=True, check=False)
        except EnvironmentBuildError:
            shutil.rmtree(path, ignore_errors=True)
            raise
    frozen = _uv(["pip", "freeze", "--python", str(path / "bin/python")]).splitlines()
    return _finish(path, key, interpreter, requirements, frozen)


def _uv(args: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if k in _UV_PASSTHROUGH or k.startswith("UV_")}
    env |= {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(Path.home()),
            "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}
    proc = subprocess.run([uv_binary(), *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise EnvironmentBuildError(
            f"uv {args[0]} failed: {' | '.join(detail[-3:]) or 'no output'}",
            hint="check the requirements and that the package index is reachable",
        )
    return proc.stdout


def uv_binary() -> str:
    """The uv executable shipped with the `uv` package, else the one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv")
    if found is None:
        # uv is one of benchwright's own dependencies: its install was broken or trimmed
        raise PrerequisiteError("uv is not installed",
                                hint=f"reinstall benchwright: {install_command(None)}")
    return found


@contextmanager
def file_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `lock_path` (created if missing) while inside."""
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
