"""The runtimes the sandbox's guarantees are tested on: bubblewrap, podman, and the docker CLI on
podman's Docker API (tests/security, tests/sandbox parametrize over `RUNTIME_PARAMS`).

    @pytest.fixture(scope="module", params=RUNTIME_PARAMS)
    def runtime(request: pytest.FixtureRequest) -> Runtime:
        return runtime_for(request)

A container runtime runs on the default grading image (built once per machine, then reused);
docker's runs through the session's `docker_api` fixture (tests/conftest.py).
"""

from __future__ import annotations

import shutil

import pytest

from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import BwrapRuntime

RUNTIME_PARAMS = [
    pytest.param("bwrap", id="bwrap"),
    pytest.param("podman", marks=pytest.mark.container, id="podman"),
    pytest.param("docker", marks=pytest.mark.container, id="docker"),
]
CONTAINER_PARAMS = RUNTIME_PARAMS[1:]


def runtime_for(request: pytest.FixtureRequest) -> Runtime:
    """The runtime a parametrized fixture's `request.param` names."""
    return make_runtime(request.param, request)


def make_runtime(name: str, request: pytest.FixtureRequest | None = None) -> Runtime:
    """bwrap, podman or docker (docker needs `request`, for the session's Docker API)."""
    if name == "bwrap":
        return BwrapRuntime()
    from benchwright.sandbox.container import DockerRuntime, PodmanRuntime

    if name == "docker":
        assert request is not None, "docker runs through the docker_api fixture"
        if shutil.which("docker") is None:
            pytest.skip("no docker CLI here (this machine kind ships one in /usr/local/bin)")
        request.getfixturevalue("docker_api")
        return DockerRuntime()
    return PodmanRuntime()
