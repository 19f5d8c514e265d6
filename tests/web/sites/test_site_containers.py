"""`benchwright web env status|start|reset|stop` for real: the docker CLI on podman's Docker API
(`podman system service`, DOCKER_HOST), a locally built image of the local suite's forum (site
`reddit`) with an env-ctrl endpoint (benchwright.web.local_suite.image), the site's readiness and
env-ctrl polling, a site that never gets healthy and a reset that times out.

Every test names its own container (and ports) in its own web config and removes it at the end;
nothing here looks at a container it did not start.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from benchwright.web.local_suite.image import site_image
from tests.helpers import run_cli
from tests.helpers.docker_api import docker_cli, podman_docker_api

pytestmark = [pytest.mark.container, pytest.mark.e2e]

NEVER = {"BENCHWRIGHT_SITE_READY_AFTER_S": "never"}
WIDE_S = "600"  # a start or reset that must succeed, on a busy machine
SHORT_S = "10"  # one that must fail: the timeout under test


@pytest.fixture(scope="module")
def docker_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    if docker_cli() is None:
        pytest.skip("no docker CLI (this machine kind ships one; else apt-get install docker.io)")
    with podman_docker_api(tmp_path_factory.mktemp("docker-api")) as env:
        yield {**os.environ, **env}


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    return {"good": site_image("podman").tag, "never": site_image("podman", env=NEVER).tag}


@dataclass
class Site:
    """One test's site: its container, ports and web configs."""

    name: str
    web: str
    ctrl: str
    folder: Path
    env: dict[str, str]

    def config(self, image: str) -> str:
        path = self.folder / f"env-{image.rpartition(':')[2]}.yaml"
        site = {"url": self.web, "env_ctrl_url": self.ctrl, "image": image,
                "container": self.name}
        path.write_text(yaml.safe_dump({"sites": {"reddit": site}}))
        return str(path)

    def cli(self, action: str, image: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return run_cli("web", "env", action, "--site", "reddit", "--config", self.config(image),
                       *extra, env=self.env)

    def docker(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["docker", *args], capture_output=True, text=True, env=self.env,
                              timeout=300, check=False)

    def container_id(self) -> str | None:
        done = self.docker("inspect", "--type", "container", "--format", "{{.Id}}", self.name)
        return done.stdout.strip() if done.returncode == 0 else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def site(docker_env: dict[str, str], tmp_path: Path) -> Iterator[Site]:
    name = f"bwtest_{uuid.uuid4().hex[:10]}_reddit"
    made = Site(name=name, web=f"http://127.0.0.1:{_free_port()}",
                ctrl=f"http://127.0.0.1:{_free_port()}", folder=tmp_path, env=docker_env)
    yield made
    made.docker("rm", "--force", name)


def _health(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 0, done.stderr
    [health] = json.loads(done.stdout)
    return dict(health)


def _waited(site: Site, action: str, image: str) -> dict[str, object]:
    """`web env start|reset` that must succeed (a wide timeout), its health as JSON."""
    return _health(site.cli(action, image, "--timeout", WIDE_S, "--json"))


def _post_titles(site: Site) -> str:
    with urllib.request.urlopen(f"{site.web}/f/books", timeout=30) as page:
        return page.read().decode()


def _submit_post(site: Site, title: str) -> None:
    form = urllib.parse.urlencode({"submission[forum]": "books", "submission[title]": title,
                                   "submission[body]": "x"}).encode()
    with urllib.request.urlopen(f"{site.web}/submit", data=form, timeout=30) as answer:
        assert answer.status == 200


def test_start_reset_stop_through_the_cli(site: Site, images: dict[str, str]) -> None:
    assert _health(site.cli("status", images["good"], "--json"))["state"] == "down"
    started = _waited(site, "start", images["good"])
    assert (started["state"], started["http_status"], started["url"]) == ("up", 200, site.web)
    label = site.docker("inspect", "--format", '{{index .Config.Labels "benchwright.web.site"}}',
                        site.name)
    assert label.stdout.strip() == "reddit"
    first = site.container_id()
    assert _waited(site, "start", images["good"])["state"] == "up"
    assert site.container_id() == first  # a running site is left alone
    _submit_post(site, "A post the reset takes away")
    assert "A post the reset takes away" in _post_titles(site)
    reset = _waited(site, "reset", images["good"])
    assert reset["state"] == "up" and site.container_id() not in (None, first)
    assert "A post the reset takes away" not in _post_titles(site)  # the seed state again
    with urllib.request.urlopen(f"{site.ctrl}/status", timeout=30) as answer:
        assert json.loads(answer.read())["success"] is True  # env-ctrl confirmed it
    stopped = site.cli("stop", images["good"])
    assert stopped.returncode == 0 and stopped.stdout.strip() == "stopped reddit"
    assert site.container_id() is None
    assert _health(site.cli("status", images["good"], "--json"))["state"] == "down"


def test_a_site_that_never_gets_healthy_is_a_clear_error(site: Site,
                                                          images: dict[str, str]) -> None:
    done = site.cli("start", images["never"], "--timeout", SHORT_S)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert f"start failed: site reddit was not ready after {SHORT_S} s" in line
    assert "site: no answer" in line and "web STARTING" in line
    assert f"its container {site.name} was removed" in line
    assert "env-ctrl serving on port 8877" in line  # its last log line
    assert site.container_id() is None


def test_a_reset_that_times_out_is_a_clear_error(site: Site, images: dict[str, str]) -> None:
    assert _waited(site, "start", images["good"])["state"] == "up"
    done = site.cli("reset", images["never"], "--timeout", SHORT_S)
    assert done.returncode == 3, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert f"reset failed: site reddit was not ready after {SHORT_S} s" in line
    assert "web STARTING" in line and f"its container {site.name} was removed" in line
    assert site.container_id() is None


def test_a_container_that_cannot_start_is_not_left_behind(site: Site,
                                                           images: dict[str, str]) -> None:
    port = int(site.web.rpartition(":")[2])
    with socket.socket() as taken:  # the site's port, held by someone else
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = site.cli("start", images["good"], "--timeout", WIDE_S)
    assert done.returncode == 3, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "docker run failed" in line and "address already in use" in line
    assert site.container_id() is None  # podman had created it: removed
