"""podman's Docker API for tests: `podman system service` on a socket of the caller's own, so the
docker CLI (DOCKER_HOST=unix://SOCKET) drives podman as it drives Docker's engine.

    with podman_docker_api(tmp_path) as env:      # {"DOCKER_HOST": ..., "CONTAINERS_CONF": ...}
        subprocess.run(["docker", "ps"], env={**os.environ, **env})

The service reads the containers.conf of docs/runtimes.md (podman's default ulimits exceed
Debian 12's hard limits; runc, cgroupfs), is stopped when the block ends (by its own pid) or
when the test process dies (even by kill -9), and touches no container: callers name theirs and
remove them.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.tiers import starts

CONTAINERS_CONF = """\
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
"""
READY_TIMEOUT_S = 120.0
PR_SET_PDEATHSIG = 1


def docker_cli() -> str | None:
    """The docker CLI on PATH (this machine kind ships a static one; `apt-get install docker.io`
    gives one too, its daemon left unstarted)."""
    return shutil.which("docker")


@starts("container")
@contextlib.contextmanager
def podman_docker_api(folder: Path) -> Iterator[dict[str, str]]:
    """Serve podman's Docker API on `folder`/podman.sock for the block; yields the variables a
    docker CLI (and podman itself) needs to use it."""
    conf = folder / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    env = {"DOCKER_HOST": f"unix://{folder / 'podman.sock'}", "CONTAINERS_CONF": str(conf)}
    with (folder / "podman-service.log").open("wb") as log:
        service = subprocess.Popen(["podman", "system", "service", "--time=0", env["DOCKER_HOST"]],
                                   env={**os.environ, **env}, stdout=log, stderr=log,
                                   # conmon writes its `oom` marker into the service's folder
                                   cwd=folder, start_new_session=True,
                                   preexec_fn=_die_with_parent)
    try:
        _wait_answering(env, service)
        yield env
    finally:
        service.terminate()
        try:
            service.wait(timeout=60)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait(timeout=60)


def _die_with_parent() -> None:
    """SIGTERM when the test process dies, even by kill -9: no service left behind."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _wait_answering(env: dict[str, str], service: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if service.poll() is not None:
            raise RuntimeError(f"podman system service exited with {service.returncode}")
        if _pings(env["DOCKER_HOST"].removeprefix("unix://")):
            return
        time.sleep(0.2)
    raise RuntimeError(f"podman's Docker API did not answer within {READY_TIMEOUT_S:.0f} s")


def _pings(path: str) -> bool:
    """Docker's `GET /_ping` on the socket answers OK."""
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(path)
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
            return sock.recv(4096).endswith(b"OK")
    except OSError:
        return False
