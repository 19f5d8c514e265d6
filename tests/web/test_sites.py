"""Site health checks against a local HTTP server; container control needs a Docker engine."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from benchwright.errors import InfrastructureError, PrerequisiteError, UserInputError
from benchwright.web.config import Site, SiteConfig, WebEnvConfig
from benchwright.web.sites import (
    Docker,
    SiteState,
    check_site,
    container_name,
    ctrl_url,
    reset_site,
    run_args,
    site_status,
    start_site,
    stop_site,
    wait_ready,
)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        routes = {"/": (200, b"<html>ok</html>"), "/admin": (302, b""),
                  "/broken": (500, b"oops"), "/status": (200, b'{"success": true}'),
                  "/forbidden": (403, b"no")}
        code, body = routes.get(self.path, (404, b"missing"))
        self.send_response(code)
        if code == 302:
            self.send_header("Location", "/")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(**urls: str) -> WebEnvConfig:
    return WebEnvConfig(sites={Site(k): SiteConfig(urls=[v]) for k, v in urls.items()})


def test_status_reports_up_down_and_latency(server: str) -> None:
    down = f"http://127.0.0.1:{_closed_port()}"
    config = _config(shopping=server, shopping_admin=f"{server}/admin", reddit=down,
                     gitlab=f"{server}/broken", map=f"{server}/forbidden")
    results = {r.site: r for r in site_status(config, timeout_s=2.0)}
    assert list(results) == [Site.SHOPPING, Site.SHOPPING_ADMIN, Site.REDDIT, Site.GITLAB,
                             Site.MAP]
    shop = results[Site.SHOPPING]
    assert (shop.state, shop.http_status) == (SiteState.UP, 200)
    assert shop.latency_ms is not None and 0 <= shop.latency_ms < 2000
    assert results[Site.SHOPPING_ADMIN].state is SiteState.UP  # redirect followed to /
    assert results[Site.MAP].state is SiteState.UP and results[Site.MAP].http_status == 403
    assert results[Site.GITLAB].state is SiteState.DOWN
    assert results[Site.GITLAB].http_status == 500
    reddit = results[Site.REDDIT]
    assert reddit.state is SiteState.DOWN and reddit.http_status is None
    assert "no answer" in str(reddit.detail)
    only = site_status(config, [Site.SHOPPING])
    assert [r.site for r in only] == [Site.SHOPPING]


def test_status_defaults_to_the_official_local_ports() -> None:
    results = site_status(WebEnvConfig(), timeout_s=0.2)
    assert {r.url for r in results} >= {"http://localhost:7770", "http://localhost:7780/admin",
                                        "http://localhost:9999", "http://localhost:8023"}


def test_wait_ready_polls_env_ctrl_and_the_site(server: str) -> None:
    health = wait_ready(Site.SHOPPING, server, server, timeout_s=5, interval_s=0.01)
    assert health.state is SiteState.UP
    naps: list[float] = []
    with pytest.raises(InfrastructureError, match="not ready after 0 s"):
        wait_ready(Site.SHOPPING, f"{server}/broken", server, timeout_s=0, interval_s=0.01,
                   sleep=naps.append)
    check = check_site(Site.SHOPPING, f"{server}/broken")
    assert check.detail == "HTTP 500"


def test_docker_arguments_follow_the_config(tmp_path: Path) -> None:
    config = WebEnvConfig(sites={
        Site.SHOPPING_ADMIN: SiteConfig(urls=["http://127.0.0.1:17780/admin"]),
        Site.WIKIPEDIA: SiteConfig(urls=["http://127.0.0.1:8888"], data_dir=tmp_path)})
    args = run_args(config, Site.SHOPPING_ADMIN)
    assert args[:4] == ["run", "--detach", "--name", "webarena_verified_shopping_admin"]
    assert "17780:80" in args and "7781:8877" in args
    assert "WA_ENV_CTRL_EXTERNAL_SITE_URL=http://127.0.0.1:17780" in args
    assert args[-1] == "am1n3e/webarena-verified-shopping_admin"
    wiki = run_args(config, Site.WIKIPEDIA)
    assert f"{tmp_path.resolve()}:/data" in wiki and "8889:8874" in wiki
    assert ctrl_url(config, Site.SHOPPING_ADMIN) == "http://127.0.0.1:7781"
    assert any("map_tile_db" in a for a in run_args(WebEnvConfig(), Site.MAP))
    with pytest.raises(UserInputError, match="data_dir"):
        run_args(WebEnvConfig(), Site.WIKIPEDIA)
    with pytest.raises(UserInputError, match="no official container"):
        run_args(WebEnvConfig(), Site.HOMEPAGE)


def test_without_an_engine_control_is_a_prerequisite_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    for action in (lambda: start_site(WebEnvConfig(), Site.SHOPPING),
                   lambda: stop_site(WebEnvConfig(), Site.SHOPPING),
                   lambda: reset_site(WebEnvConfig(), Site.SHOPPING)):
        with pytest.raises(PrerequisiteError, match=r"no Docker engine answers.*Cannot connect"):
            action()
    with pytest.raises(PrerequisiteError, match="not installed"):
        Docker("no-such-docker-binary").require_engine()


def _engine_answers() -> bool:
    docker = shutil.which("docker")
    if docker is None:
        return False
    done = subprocess.run([docker, "info"], capture_output=True, check=False, timeout=30)
    return done.returncode == 0


NO_ENGINE = ("no Docker engine answers here (no docker CLI, or `docker info` fails); "
             "start/stop/reset are tested where one runs")
needs_engine = pytest.mark.skipif(not _engine_answers(), reason=NO_ENGINE)


@needs_engine
def test_start_reset_stop_a_real_site() -> None:  # pragma: no cover - needs Docker and images
    config = WebEnvConfig()
    health = start_site(config, Site.SHOPPING, timeout_s=600)
    assert health.state is SiteState.UP
    assert reset_site(config, Site.SHOPPING, timeout_s=600).state is SiteState.UP
    stop_site(config, Site.SHOPPING)
    assert not Docker().is_running(container_name(Site.SHOPPING))
