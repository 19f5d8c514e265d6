"""Site health checks against a local HTTP server, and the docker arguments and errors of container
control (the containers themselves: tests/web/test_site_containers.py, on podman's Docker API)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchwright.errors import InfrastructureError, PrerequisiteError, UserInputError
from benchwright.web.sites.config import Site, SiteConfig, WebEnvConfig
from benchwright.web.sites.control import (
    Docker,
    SiteState,
    check_site,
    container_name,
    ctrl_status,
    ctrl_url,
    reset_site,
    run_args,
    site_status,
    start_site,
    stop_site,
    wait_ready,
)

_STARTING = (b'{"success": false, "message": "", "details": {"value": {"services": '
             b'{"web": "STARTING", "db": "RUNNING"}}, "exec_logs": []}}')


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        routes = {"/": (200, b"<html>ok</html>"), "/admin": (302, b""),
                  "/broken": (500, b"oops"), "/status": (200, b'{"success": true}'),
                  "/forbidden": (403, b"no"), "/starting/status": (200, _STARTING)}
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


def test_a_site_not_ready_names_what_env_ctrl_said(server: str) -> None:
    assert ctrl_status(f"{server}/starting") == (False, "web STARTING, db RUNNING")
    assert ctrl_status(server) == (True, "success")  # no services named
    with pytest.raises(InfrastructureError, match=r"site up; env-ctrl .*/starting: web STARTING"):
        wait_ready(Site.REDDIT, server, f"{server}/starting", timeout_s=0, sleep=lambda _s: None)
    with pytest.raises(InfrastructureError, match=r"site: HTTP 500; env-ctrl .*: HTTP 404"):
        wait_ready(Site.REDDIT, f"{server}/broken", f"{server}/none", timeout_s=0)
    closed = f"http://127.0.0.1:{_closed_port()}"
    assert ctrl_status(closed)[1].startswith("no answer")


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


def test_the_config_names_the_image_and_the_container() -> None:
    config = WebEnvConfig(sites={Site.REDDIT: SiteConfig(
        urls=["http://127.0.0.1:19999"], env_ctrl_url="http://127.0.0.1:19998",
        image="localhost/benchwright-site-reddit:0123456789ab", container="bw_test_reddit")})
    args = run_args(config, Site.REDDIT)
    assert args[:4] == ["run", "--detach", "--name", "bw_test_reddit"]
    assert "benchwright.web.site=reddit" in args and args[-1].endswith("reddit:0123456789ab")
    assert "19999:80" in args and "19998:8877" in args
    assert container_name(WebEnvConfig(), Site.REDDIT) == "webarena_verified_reddit"
    for bad in ({"container": "--rm"}, {"container": "a b"}, {"image": "--privileged"},
                {"image": "img\n--rm"}):
        with pytest.raises(ValidationError):
            SiteConfig.model_validate({"url": "http://127.0.0.1:1", **bad})


def test_without_an_engine_control_is_a_prerequisite_error(tmp_path: Path) -> None:
    fake = tmp_path / "engineless-cli"  # a docker CLI with no engine behind it
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    fake.chmod(0o755)
    docker = Docker(str(fake))
    for action in (lambda: start_site(WebEnvConfig(), Site.SHOPPING, docker=docker),
                   lambda: stop_site(WebEnvConfig(), Site.SHOPPING, docker=docker),
                   lambda: reset_site(WebEnvConfig(), Site.SHOPPING, docker=docker)):
        with pytest.raises(PrerequisiteError, match=r"no Docker engine answers.*Cannot connect"):
            action()
    with pytest.raises(PrerequisiteError, match="not installed"):
        Docker("no-such-docker-binary").require_engine()
