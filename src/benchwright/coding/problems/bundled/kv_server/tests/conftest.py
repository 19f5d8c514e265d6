"""benchwright example problem kv_server: shared pytest configuration.

The submission is started as a subprocess from the current working directory (the
workspace root) with `--port <free port> --address 127.0.0.1`, polled on GET /health
until it answers 200, and stopped (its whole process group) in fixture teardown.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

START_TIMEOUT = 8.0
REQUEST_TIMEOUT = 5.0
STOP_TIMEOUT = 3.0
NO_BODY = object()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--entrypoint", action="store", required=True,
                     help="command that runs the submission, e.g. 'python kv_server.py'")
    parser.addoption("--checkpoint", action="store", required=True,
                     help="name of the checkpoint being graded, e.g. checkpoint_2")


@pytest.fixture(scope="session")
def entrypoint_argv(request: pytest.FixtureRequest) -> list[str]:
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture(scope="session")
def checkpoint_name(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--checkpoint")


class Response:
    def __init__(self, status: int, headers, text: str) -> None:
        self.status = status
        self.headers = headers
        self.text = text

    @property
    def json(self):
        return json.loads(self.text)

    def __repr__(self) -> str:
        return f"<Response {self.status} {self.text[:200]!r}>"


class Client:
    """A tiny JSON HTTP client on urllib (standard library only)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def request(self, method: str, path: str, body=NO_BODY, raw: bytes | None = None,
                headers: dict[str, str] | None = None) -> Response:
        data = raw
        all_headers = dict(headers or {})
        if body is not NO_BODY:
            data = json.dumps(body).encode("utf-8")
        if data is not None:
            all_headers.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=all_headers)
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT) as resp:
                return Response(resp.status, resp.headers, resp.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            with err:
                return Response(err.code, err.headers, err.read().decode("utf-8"))

    def get(self, path: str, **kw) -> Response:
        return self.request("GET", path, **kw)

    def put(self, path: str, body=NO_BODY, **kw) -> Response:
        return self.request("PUT", path, body, **kw)

    def post(self, path: str, body=NO_BODY, **kw) -> Response:
        return self.request("POST", path, body, **kw)

    def delete(self, path: str, **kw) -> Response:
        return self.request("DELETE", path, **kw)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """One running submission process."""

    def __init__(self, argv: list[str], log_path: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.client = Client(self.base_url)
        self.log_path = log_path
        self._log = open(log_path, "wb")
        # A new session makes the process group easy to stop as a whole
        # (wrappers such as `uv run` start the server as a child process).
        self.proc = subprocess.Popen(
            argv + ["--port", str(self.port), "--address", "127.0.0.1"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early with code {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=0.5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server did not answer GET /health within {START_TIMEOUT}s:\n{self.log()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(timeout=STOP_TIMEOUT)
        # Children left behind by a wrapper die with the group.
        self._signal(signal.SIGKILL)
        self._log.close()

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture(scope="module")
def server_launcher(entrypoint_argv, tmp_path_factory):
    """launch(*extra_args, wait=True) starts another server; all are stopped at module end."""
    started: list[Server] = []
    log_dir = tmp_path_factory.mktemp("server_logs")

    def launch(*extra_args: str, wait: bool = True) -> Server:
        server = Server(entrypoint_argv + list(extra_args), log_dir / f"server_{len(started)}.log")
        started.append(server)
        if wait:
            server.wait_ready()
        return server

    yield launch
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def server_args() -> list[str]:
    """Extra command-line arguments of the shared server; a test module may override this."""
    return []


@pytest.fixture(scope="module")
def server(server_launcher, server_args) -> Server:
    """One server shared by the tests of a module."""
    return server_launcher(*server_args)


@pytest.fixture(scope="module")
def api(server) -> Client:
    return server.client


_key_numbers = itertools.count(1)


@pytest.fixture
def new_key():
    """new_key(prefix='k') gives a key no other test uses, so tests can share one server."""

    def make(prefix: str = "k") -> str:
        return f"{prefix}{next(_key_numbers)}"

    return make
