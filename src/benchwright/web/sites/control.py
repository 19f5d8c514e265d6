"""The WebArena sites: health checks over HTTP, and containers driven through the docker CLI.

`site_status` needs nothing but the network. `start_site`, `stop_site` and `reset_site` drive the
official images (`am1n3e/webarena-verified-<site>`, or the config's `image`) with the `docker`
binary (Docker's engine, or podman's Docker API through DOCKER_HOST), in containers named as the
official CLI names them (`webarena_verified_<site>`, or the config's `container`) and labelled
`benchwright.web.site=<site>`, and poll the image's env-ctrl endpoint (`GET /status`) and the site
itself until both answer. A reset recreates the container. A container this call created that
never gets ready is removed, and the error names the timeout, what was not ready and the
container's last log line. Without a Docker engine they raise a PrerequisiteError that says so.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from benchwright.errors import InfrastructureError, PrerequisiteError, UserInputError
from benchwright.web.sites.config import Site, WebEnvConfig

HTTP_TIMEOUT_S: Final = 3.0
READY_TIMEOUT_S: Final = 120.0
POLL_INTERVAL_S: Final = 2.0
DOCKER_TIMEOUT_S: Final = 120.0
IMAGE_PREFIX: Final = "am1n3e/webarena-verified-"
CONTAINER_PREFIX: Final = "webarena_verified_"
SITE_LABEL: Final = "benchwright.web.site"


class SiteState(StrEnum):
    """What a health check found."""

    UP = "up"
    DOWN = "down"


class SiteHealth(BaseModel):
    """One site's health check."""

    site: Site
    """The site."""
    url: str
    """The URL that was checked."""
    state: SiteState
    """up when it answered with a status below 500."""
    http_status: int | None = None
    """The HTTP status it answered with."""
    latency_ms: float | None = None
    """Time to the response headers."""
    detail: str | None = None
    """Why it is down."""


class ContainerSpec(BaseModel):
    """How the official image of a site is run."""

    model_config = ConfigDict(frozen=True)

    web_port: int
    """Host port of the site."""
    ctrl_port: int
    """Host port of the env-ctrl endpoint."""
    container_port: int = 80
    """The site's port inside the container."""
    container_ctrl_port: int = 8877
    """env-ctrl's port inside the container."""
    url_path: str = ""
    """Path appended to the site's base URL (shopping_admin: /admin)."""
    data_mount: str | None = None
    """Where the site's data folder is bind-mounted (wikipedia), if it needs one."""
    volumes: dict[str, str] = Field(default_factory=dict)
    """Named volumes prepared beforehand (map) -> mount point."""


_MAP_VOLUMES = {
    "webarena_verified_map_tile_db": "/data/database",
    "webarena_verified_map_routing_car": "/data/routing/car",
    "webarena_verified_map_routing_bike": "/data/routing/bike",
    "webarena_verified_map_routing_foot": "/data/routing/foot",
    "webarena_verified_map_nominatim_db": "/data/nominatim/postgres",
    "webarena_verified_map_nominatim_flatnode": "/data/nominatim/flatnode",
    "webarena_verified_map_website_db": "/var/lib/postgresql/14/main",
    "webarena_verified_map_tiles": "/data/tiles",
    "webarena_verified_map_style": "/data/style",
}
CONTAINERS: dict[Site, ContainerSpec] = {
    Site.SHOPPING: ContainerSpec(web_port=7770, ctrl_port=7771),
    Site.SHOPPING_ADMIN: ContainerSpec(web_port=7780, ctrl_port=7781, url_path="/admin"),
    Site.REDDIT: ContainerSpec(web_port=9999, ctrl_port=9998),
    Site.GITLAB: ContainerSpec(web_port=8023, ctrl_port=8024, container_port=8023),
    Site.WIKIPEDIA: ContainerSpec(web_port=8888, ctrl_port=8889, container_port=8080,
                                  container_ctrl_port=8874, data_mount="/data"),
    Site.MAP: ContainerSpec(web_port=3000, ctrl_port=3001, container_port=8080,
                            volumes=_MAP_VOLUMES),
}


def site_url(config: WebEnvConfig, site: Site) -> str:
    """The configured URL, else the official container's local default."""
    configured = config.site(site).url
    if configured is not None:
        return configured
    spec = _spec(site)
    return f"http://localhost:{spec.web_port}{spec.url_path}"


def ctrl_url(config: WebEnvConfig, site: Site) -> str:
    """The env-ctrl endpoint: configured, else the site's host on the env-ctrl port."""
    configured = config.site(site).env_ctrl_url
    if configured is not None:
        return configured.rstrip("/")
    host = urlsplit(site_url(config, site)).hostname or "localhost"
    return f"http://{host}:{_spec(site).ctrl_port}"


def _spec(site: Site) -> ContainerSpec:
    if site not in CONTAINERS:
        raise UserInputError(f"site {site} has no official container",
                             hint=f"pick one of {', '.join(CONTAINERS)}")
    return CONTAINERS[site]


def status_targets(config: WebEnvConfig, sites: Iterable[Site] | None = None) -> list[Site]:
    """The given sites, else the configured ones, else every site with a container."""
    chosen = list(sites) if sites is not None else config.configured()
    return chosen or list(CONTAINERS)


def site_status(config: WebEnvConfig, sites: Iterable[Site] | None = None,
                timeout_s: float = HTTP_TIMEOUT_S) -> list[SiteHealth]:
    """Health-check each site over HTTP."""
    return [check_site(site, site_url(config, site), timeout_s)
            for site in status_targets(config, sites)]


def check_site(site: Site, url: str, timeout_s: float = HTTP_TIMEOUT_S) -> SiteHealth:
    """GET the URL: up when it answers below 500 (a login redirect or a 403 is up)."""
    start = time.perf_counter()
    status, detail = _http_status(url, timeout_s)
    latency = round(1000 * (time.perf_counter() - start), 1)
    up = status is not None and status < 500
    return SiteHealth(site=site, url=url, state=SiteState.UP if up else SiteState.DOWN,
                      http_status=status, latency_ms=latency if status is not None else None,
                      detail=None if up else detail or f"HTTP {status}")


def _http_status(url: str, timeout_s: float) -> tuple[int | None, str | None]:
    request = urllib.request.Request(url, method="GET", headers={"Accept": "text/html"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return int(response.status), None
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return None, f"no answer: {getattr(reason, 'strerror', None) or reason}"


def ctrl_ready(url: str, timeout_s: float = HTTP_TIMEOUT_S) -> bool:
    """True when env-ctrl's `GET /status` reports success."""
    return ctrl_status(url, timeout_s)[0]


def ctrl_status(url: str, timeout_s: float = HTTP_TIMEOUT_S) -> tuple[bool, str]:
    """env-ctrl's `GET /status`: whether it reports success, and what it says in a few words
    (`web STARTING`, or why it gave no answer)."""
    try:
        with urllib.request.urlopen(f"{url}/status", timeout=timeout_s) as response:
            answer = json.loads(response.read(2**20).decode("utf-8"))
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, f"no answer: {getattr(reason, 'strerror', None) or reason}"
    except ValueError:
        return False, "not JSON"
    if not isinstance(answer, dict):
        return False, "not a JSON object"
    ok = answer.get("success") is True
    return ok, _services(answer) or ("success" if ok else "success false")


def _services(answer: dict[str, object]) -> str:
    """`web STARTING, db RUNNING` from the official answer's details.value.services."""
    details = answer.get("details")
    value = details.get("value") if isinstance(details, dict) else None
    services = value.get("services") if isinstance(value, dict) else None
    if not isinstance(services, dict):
        return str(answer.get("message") or "")[:200]
    return ", ".join(f"{name} {state}" for name, state in list(services.items())[:10])[:200]


def wait_ready(site: Site, url: str, ctrl: str, timeout_s: float = READY_TIMEOUT_S,
               interval_s: float = POLL_INTERVAL_S,
               sleep: Callable[[float], None] = time.sleep) -> SiteHealth:
    """Poll env-ctrl and the site until both answer; InfrastructureError after the timeout,
    naming what was not ready at the last look."""
    deadline = time.monotonic() + timeout_s
    while True:
        health = check_site(site, url)
        ready, said = ctrl_status(ctrl)
        if health.state is SiteState.UP and ready:
            return health
        if time.monotonic() >= deadline:
            why = f"site: {health.detail}" if health.state is SiteState.DOWN else "site up"
            raise InfrastructureError(f"site {site} was not ready after {timeout_s:.0f} s "
                                      f"({why}; env-ctrl {ctrl}: {said})",
                                      hint="wait longer (--timeout), or look at the container's "
                                      "logs (`docker logs NAME`)")
        sleep(interval_s)


def container_name(config: WebEnvConfig, site: Site) -> str:
    """The container's name: configured, else as the official CLI names it."""
    return config.site(site).container or f"{CONTAINER_PREFIX}{site.value}"


def image_name(config: WebEnvConfig, site: Site) -> str:
    """The site's image: configured, else the official one."""
    return config.site(site).image or f"{IMAGE_PREFIX}{site.value}"


class Docker:
    """The docker CLI; every call needs a running engine."""

    def __init__(self, binary: str = "docker") -> None:
        self.binary = binary

    def require_engine(self) -> None:
        """PrerequisiteError unless the docker CLI is installed and an engine answers."""
        path = shutil.which(self.binary)
        if path is None:
            raise PrerequisiteError("the docker CLI is not installed; starting, stopping and "
                                    "resetting sites needs it (with Docker or podman behind it)",
                                    hint="install Docker, or podman and a docker CLI "
                                    "(docs/web.md 'On podman')")
        proc = self._call(["info", "--format", "{{.ServerVersion}}"], timeout_s=30)
        if proc.returncode != 0 or not proc.stdout.strip():
            last = _said(proc.stderr)
            raise PrerequisiteError(f"no Docker engine answers (`docker info` failed: {last})",
                                    hint="start the Docker daemon, or serve podman's Docker "
                                    "API and set DOCKER_HOST (docs/web.md 'On podman')")

    def run(self, args: list[str], timeout_s: float = DOCKER_TIMEOUT_S) -> str:
        """`docker ARGS`; InfrastructureError when it fails."""
        proc = self._call(args, timeout_s)
        if proc.returncode != 0:
            raise InfrastructureError(f"docker {args[0]} failed: {_said(proc.stderr)}",
                                      hint="see `docker ps -a` and `docker logs`")
        return proc.stdout

    def is_running(self, name: str) -> bool:
        """True when the container exists and runs."""
        proc = self._call(["inspect", "--format", "{{.State.Running}}", name], DOCKER_TIMEOUT_S)
        return proc.returncode == 0 and proc.stdout.strip() == "true"

    def last_log_line(self, name: str) -> str | None:
        """The container's last line of output (stdout or stderr), if any."""
        proc = self._call(["logs", "--tail", "20", name], DOCKER_TIMEOUT_S)
        lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
        return lines[-1].strip()[:300] if proc.returncode == 0 and lines else None

    def _call(self, args: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run([self.binary, *args], capture_output=True, text=True,
                                  timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise InfrastructureError(f"docker {args[0]} did not finish within {timeout_s:.0f} s",
                                      hint="is the Docker engine overloaded?") from None
        except OSError as exc:
            raise PrerequisiteError(f"cannot run the docker CLI: {exc}",
                                    hint="install Docker") from None


def _said(stderr: str) -> str:
    """The docker CLI's last line that says something (not `Run 'docker run --help' ...`)."""
    lines = [line.strip() for line in stderr.splitlines()
             if line.strip() and not line.startswith("Run '")]
    return lines[-1][:300] if lines else "no output"


def start_site(config: WebEnvConfig, site: Site, timeout_s: float = READY_TIMEOUT_S,
               docker: Docker | None = None) -> SiteHealth:
    """Start the site's container unless it runs already, then wait until it is ready (a
    container started here that never gets ready is removed)."""
    docker = docker or Docker()
    docker.require_engine()
    if docker.is_running(container_name(config, site)):
        return wait_ready(site, site_url(config, site), ctrl_url(config, site), timeout_s)
    _recreate(config, site, docker)
    return _wait_or_remove(config, site, docker, timeout_s, "start")


def reset_site(config: WebEnvConfig, site: Site, timeout_s: float = READY_TIMEOUT_S,
               docker: Docker | None = None) -> SiteHealth:
    """Recreate the site's container from its image (its initial state), and wait for it (one
    that never gets ready is removed)."""
    docker = docker or Docker()
    docker.require_engine()
    _recreate(config, site, docker)
    return _wait_or_remove(config, site, docker, timeout_s, "reset")


def stop_site(config: WebEnvConfig, site: Site, docker: Docker | None = None) -> None:
    """Remove the site's container (named volumes stay)."""
    docker = docker or Docker()
    docker.require_engine()
    _spec(site)
    docker.run(["rm", "--force", container_name(config, site)])


def _recreate(config: WebEnvConfig, site: Site, docker: Docker) -> None:
    name = container_name(config, site)
    docker.run(["rm", "--force", name])
    try:
        docker.run(run_args(config, site))
    except InfrastructureError:
        _remove_quietly(docker, name)  # created but not started (a port in use): not left behind
        raise


def _wait_or_remove(config: WebEnvConfig, site: Site, docker: Docker, timeout_s: float,
                    what: str) -> SiteHealth:
    try:
        return wait_ready(site, site_url(config, site), ctrl_url(config, site), timeout_s)
    except InfrastructureError as exc:
        name = container_name(config, site)
        last = docker.last_log_line(name)
        _remove_quietly(docker, name)
        said = f"; its last log line: {last!r}" if last else ""
        raise InfrastructureError(f"{what} failed: {exc.message}; its container {name} was "
                                  f"removed{said}", hint="wait longer (--timeout), or run its "
                                  f"image by hand to see why (`docker run --rm "
                                  f"{image_name(config, site)}`)") from None


def _remove_quietly(docker: Docker, name: str) -> None:
    with contextlib.suppress(InfrastructureError):
        docker.run(["rm", "--force", name])


def run_args(config: WebEnvConfig, site: Site) -> list[str]:
    """`docker run` arguments for the site's image."""
    spec = _spec(site)
    base = urlsplit(site_url(config, site))
    web_port = base.port or spec.web_port
    ctrl_port = urlsplit(ctrl_url(config, site)).port or spec.ctrl_port
    args = ["run", "--detach", "--name", container_name(config, site),
            "--label", f"{SITE_LABEL}={site.value}",
            "--publish", f"{web_port}:{spec.container_port}",
            "--publish", f"{ctrl_port}:{spec.container_ctrl_port}",
            "--env", f"WA_ENV_CTRL_EXTERNAL_SITE_URL={base.scheme}://{base.netloc}"]
    for volume, mount in spec.volumes.items():
        args += ["--volume", f"{volume}:{mount}"]
    if spec.data_mount is not None:
        args += ["--volume", f"{_data_dir(config, site)}:{spec.data_mount}"]
    return [*args, image_name(config, site)]


def _data_dir(config: WebEnvConfig, site: Site) -> Path:
    data_dir = config.site(site).data_dir
    if data_dir is None or not data_dir.is_dir():
        raise UserInputError(f"site {site} needs its data folder (data_dir) in the web config",
                             path=data_dir, hint="download it with `webarena-verified env setup` "
                             f"and set sites.{site}.data_dir")
    return data_dir.resolve()
