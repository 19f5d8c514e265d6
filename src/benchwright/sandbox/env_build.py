"""Build one environment inside the bubblewrap sandbox: requirements are untrusted code.

Installing a requirement can run its build backend, so `uv venv`, `uv pip install` and
`uv pip freeze` (which may start the environment's python, and so its .pth files) run sandboxed,
as a fresh unprivileged uid, seeing only: the environment's folder (writable), a private /tmp
that is also uv's cache (so a build can poison no cache another build or the harness uses), the
interpreter, uv, the certificates, local index folders and the paths of the submission its
requirements name (read-only; `benchwright.sandbox.localpaths`, which the cache key covers).
Only the install gets a network, and only to the package indexes, through the egress proxy.
Afterwards the folder is handed back to the harness's user, so no later sandbox can change it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from benchwright.errors import EnvironmentBuildError
from benchwright.files.owned_temp import OwnedTemp
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import BwrapRuntime, Limits, Mount, reclaim_tree
from benchwright.sandbox.egress.bridge import Bridge, bridged, without_proxy_settings
from benchwright.sandbox.egress.proxy import index_endpoints, local_index_folders
from benchwright.sandbox.interpreters import Interpreter

# Environment variables of the harness a build keeps (index settings, certificates).
_KEPT_PREFIXES = ("UV_",)
_KEPT = ("SSL_CERT_FILE", "SSL_CERT_DIR")
# Set by us, never taken from the harness: they name the harness's own folders.
_DROPPED = ("UV_CACHE_DIR", "UV_PYTHON_INSTALL_DIR", "UV_TOOL_DIR", "UV_CONFIG_FILE")
# One sandbox for the three steps (each start costs ~0.1-0.2 s); only freeze writes to stdout.
_SCRIPT = """
"$1" venv --quiet --python "$2" "$3" || exit 10
if [ -s /tmp/requirements.in ]; then
  "$1" pip install --quiet ${4:+--compile-bytecode} --python "$3/bin/python" \\
    -r /tmp/requirements.in || exit 11
  # A submission's environment: bytecode by the base interpreter without `site` (so no .pth
  # runs); else each jailed start, the environment read-only, compiles every import anew.
  [ -n "$4" ] || "$2" -S -m compileall -q "$3/lib" >/dev/null 2>&1 || true
fi
"$1" pip freeze --python "$3/bin/python" || exit 12
"""
_STEPS = {10: "venv", 11: "pip", 12: "pip"}
BUILD_LIMITS = Limits(wall_clock_s=1800.0, memory_mb=16384, max_processes=512,
                      max_file_mb=4096)


class SandboxedBuild:
    """One build: a private scratch folder, the mounts, the environment, the three steps."""

    def __init__(self, path: Path, interpreter: Interpreter, source: Path | None = None,
                 named: Sequence[str] = (), runtime: Runtime | None = None,
                 compiled: bool = False) -> None:
        """`named`: the paths of the submission's folder `source` its requirements name
        (`localpaths.named_paths`); the build sees those and nothing else of it. `runtime`: a
        container runtime to build in (None: bubblewrap). `compiled`: install with bytecode."""
        self.path, self.interpreter, self.compiled = path, interpreter, compiled
        self.source = source if named else None
        self.visible = [source / rel for rel in named] if source is not None else []
        self.runtime: Runtime = runtime or BwrapRuntime()
        self._owned = OwnedTemp("benchwright-envbuild-")  # a kill -9: the next start's sweep
        self.scratch = self._owned.path
        for sub in ("tmp", "out"):
            (self.scratch / sub).mkdir()

    def run(self, uv: str, requirements: Sequence[str]) -> list[str]:
        """Build the environment; returns `uv pip freeze`'s lines."""
        try:
            self.path.mkdir(parents=True)
            (self.scratch / "tmp" / "requirements.in").write_text(
                "".join(f"{line}\n" for line in requirements))
            argv = ["/bin/sh", "-c", _SCRIPT, "build", uv, str(self.interpreter.executable),
                    str(self.path), "1" if self.compiled else ""]
            if not requirements:  # nothing to download: no network at all
                return self._run(argv, uv, None).splitlines()
            with bridged(index_endpoints(), self.interpreter.executable) as bridge:
                return self._run(argv, uv, bridge).splitlines()
        finally:
            reclaim_tree(self.path)
            self._owned.close()

    def _run(self, argv: list[str], uv: str, bridge: Bridge | None) -> str:
        out, err = self.scratch / "out" / "stdout", self.scratch / "out" / "stderr"
        env = self._env() | (bridge.env() if bridge else {})
        mounts = self._mounts(uv) + (bridge.mounts() if bridge else [])
        with out.open("wb") as stdout, err.open("wb") as stderr:
            result = self.runtime.run(bridge.wrap(argv) if bridge else argv, cwd=self._cwd(),
                                      env=env, mounts=mounts, limits=BUILD_LIMITS,
                                      stdout=stdout, stderr=stderr)
        if result.exit_code != 0 or result.timed_out:
            step = _STEPS.get(result.exit_code, "pip")
            raise EnvironmentBuildError(
                f"uv {step} failed: {_tail(err) or 'no output'}",
                hint="check the requirements and that the package index is reachable")
        return _head(out, BUILD_LIMITS.max_output_mb * 1024 * 1024)

    def _own_etc(self) -> bool:
        """The runtime's /etc is an image's, not the host's."""
        return self.runtime.name != "bwrap"

    def _cwd(self) -> Path:
        """The submission's folder when some of it is visible (relative paths resolve there)."""
        return self.source if self.source is not None else Path("/tmp")

    def _env(self) -> dict[str, str]:
        kept = {k: v for k, v in os.environ.items()
                if (k.startswith(_KEPT_PREFIXES) or k in _KEPT) and k not in _DROPPED}
        return without_proxy_settings(kept) | {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
            "UV_CACHE_DIR": "/tmp/uv-cache", "UV_PYTHON_DOWNLOADS": "never",
            "UV_NO_PROGRESS": "1", "UV_LINK_MODE": "copy", "LANG": "C.UTF-8"}

    def _mounts(self, uv: str) -> list[Mount]:
        mounts = [Mount(path=self.interpreter.prefix), Mount(path=Path(uv)),
                  Mount(path=self.path, writable=True),
                  Mount(path=self.scratch / "tmp", writable=True, target=Path("/tmp")),
                  *(Mount(path=folder) for folder in local_index_folders()),
                  *(Mount(path=Path(p)) for p in _certificates(self._own_etc()))]
        return mounts + [Mount(path=p) for p in self.visible]


def _certificates(etc_too: bool) -> list[str]:
    """Certificate files or folders named by the harness that the sandbox's /etc/ssl does not
    hold: outside /etc for bubblewrap (which binds the host's /etc/ssl); all of them in a
    container, whose image has its own (the index is reached with the harness's trust)."""
    named = (os.environ.get(k, "") for k in _KEPT)
    return [p for p in named if p.startswith("/") and (etc_too or not p.startswith("/etc/"))
            and Path(p).exists()]


def _head(path: Path, limit: int) -> str:
    """At most `limit` bytes from the start of what the build wrote (it may write any amount)."""
    with path.open("rb") as file:
        return file.read(limit).decode(errors="replace")


def _tail(path: Path, limit: int = 64 * 1024) -> str:
    """The last three lines of what the build wrote, reading no more than its last `limit`."""
    if not path.is_file():
        return ""
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - limit))
        lines = file.read(limit).decode(errors="replace").strip().splitlines()
    return " | ".join(lines[-3:])
