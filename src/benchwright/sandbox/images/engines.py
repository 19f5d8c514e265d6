"""The container engine: podman, or the docker CLI (Docker's daemon, or podman's Docker API
through DOCKER_HOST). Found and checked once per process; a missing or unreachable one is a
PrerequisiteError (one line, how to install it, exit 2)."""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from benchwright.errors import PrerequisiteError

ENGINES = ("podman", "docker")
INSTALL = {
    "podman": "install it with `sudo apt-get install -y podman runc` (docs/runtimes.md)",
    "docker": "install Docker (Docker Desktop on macOS), or point DOCKER_HOST at podman's "
              "Docker API (`podman system service unix:///run/podman.sock`; docs/runtimes.md)",
}
_PROBE_TIMEOUT_S = 60.0


class Engine(BaseModel):
    """A container engine's command line."""

    model_config = ConfigDict(frozen=True)

    name: str
    """`podman` or `docker`."""
    binary: str
    """Its executable."""
    server: str
    """What answers it: the engine's (server) version as it reports it."""
    podman_api: bool = False
    """The docker CLI talks to podman's Docker API (`podman system service`), not dockerd."""

    def command(self, *args: str) -> list[str]:
        """The argv of `ENGINE ARGS...`."""
        return [self.binary, *args]

    def call(self, args: Sequence[str], *, stdin: bytes | None = None,
             timeout: float = 600.0) -> subprocess.CompletedProcess[bytes]:
        """Run `ENGINE ARGS...` and wait (output captured; the caller checks the status)."""
        return subprocess.run(self.command(*args), input=stdin, capture_output=True,
                              timeout=timeout, check=False)

    def text(self, args: Sequence[str]) -> str | None:
        """Standard output of `ENGINE ARGS...`, stripped; None when it fails."""
        done = self.call(args)
        return done.stdout.decode(errors="replace").strip() if done.returncode == 0 else None

    def image_id(self, ref: str) -> str | None:
        """The image's id (`sha256:...`) when the engine's store holds it; None otherwise."""
        found = self.text(["image", "inspect", "--format", "{{.Id}}", ref])
        if not found:
            return None
        return found if found.startswith("sha256:") else f"sha256:{found}"

    def label(self, ref: str, name: str) -> str | None:
        """A label of a stored image, None when it has none (or the image is missing)."""
        found = self.text(["image", "inspect", "--format",
                           f'{{{{index .Config.Labels "{name}"}}}}', ref])
        return found if found and found != "<no value>" else None


def check_engine_name(name: str) -> str:
    """The engine's name, or a PrerequisiteError naming the known ones."""
    if name not in ENGINES:
        raise PrerequisiteError(f"unknown container engine {name!r}",
                                hint=f"use one of: {', '.join(ENGINES)}")
    return name


@functools.cache
def find_engine(name: str) -> Engine:
    """The engine `name`, installed and answering; a PrerequisiteError otherwise."""
    check_engine_name(name)
    binary = shutil.which(name)
    if binary is None:
        raise PrerequisiteError(f"{name} is not installed, so containers cannot run here",
                                hint=INSTALL[name])
    components = "|{{range .Server.Components}}{{.Name}};{{end}}" if name == "docker" else ""
    probe = ["version", "--format", "{{.Server.Version}}" + components]
    try:
        done = subprocess.run([binary, *probe], capture_output=True, text=True,
                              timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PrerequisiteError(f"{name} does not answer: {exc}", hint=INSTALL[name]) from None
    if done.returncode != 0 or not done.stdout.strip():
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise PrerequisiteError(f"{name} cannot reach its engine: {detail}", hint=INSTALL[name])
    version, _, parts = done.stdout.strip().partition("|")
    return Engine(name=name, binary=binary, server=version, podman_api="Podman" in parts)
