"""Network probes, as an attacker would make them, from an environment build and from an agent
given `--agent-network`: the allowed index or endpoint answers, nothing else on the host's
loopback or beyond does. Plus the egress proxy's own refusals, over real sockets."""

from __future__ import annotations

import ast
import contextlib
import json
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.coding.agents.base import AgentContext
from benchwright.coding.agents.command import CommandAgent
from benchwright.coding.agents.network import agent_allowlist, provider_endpoints
from benchwright.coding.agents.settings import AgentSettings
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import Limits, get_runtime
from benchwright.sandbox.egress.proxy import (
    EgressProxy,
    host_addresses,
    index_endpoints,
    local_index_folders,
)
from benchwright.sandbox.environments import ensure_env
from benchwright.sandbox.interpreters import resolve_python
from benchwright.testing.fake_llm import FakeLLMServer
from benchwright.testing.script import Script
from tests.helpers.evil_package import write_evil_package
from tests.helpers.runtimes import RUNTIME_PARAMS, runtime_for

pytestmark = pytest.mark.sandbox

# Shared by both probes: what an attacker inside tries. HOST_PORT is a listener on the host's
# loopback; the proxy is found through HTTPS_PROXY or the socket mounted at its usual place.
PROBE = '''
import os, socket, urllib.request

def direct(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return "open"
    except OSError as exc:
        return type(exc).__name__

def via_proxy(target):
    url = os.environ.get("HTTPS_PROXY", "")
    if not url:
        return "no-proxy"
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    try:
        conn = socket.create_connection((host, int(port)), timeout=10)
        conn.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
        status = conn.recv(100).split(b" ")[1].decode()
        conn.close()
        return status
    except (OSError, IndexError) as exc:
        return type(exc).__name__

def via_socket(target):
    try:
        conn = socket.socket(socket.AF_UNIX)
        conn.connect("/run/benchwright-egress/egress.sock")
        conn.sendall(f"CONNECT {target} HTTP/1.1\\r\\n\\r\\n".encode())
        status = conn.recv(100).split(b" ")[1].decode()
        conn.close()
        return status
    except (OSError, IndexError) as exc:
        return type(exc).__name__

results = {
    "direct_host_listener": direct(HOST_PORT),
    "proxy_host_listener": via_proxy(f"127.0.0.1:{HOST_PORT}"),
    "proxy_localhost_listener": via_proxy(f"localhost:{HOST_PORT}"),
    "socket_host_listener": via_socket(f"127.0.0.1:{HOST_PORT}"),
    "proxy_other_host": via_proxy("example.com:443"),
    "proxy_index_other_port": via_proxy("pypi.org:22"),
    "proxy_index": via_proxy("pypi.org:443"),
}
'''


class Listener:
    """A service on the host's loopback that nothing in a sandbox may reach; counts accepts."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _addr = self.server.accept()
                self.accepted += 1
                conn.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    made = Listener()
    yield made
    made.server.close()


@pytest.fixture(params=RUNTIME_PARAMS)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return runtime_for(request)


def test_environment_build_reaches_the_index_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: Listener, runtime: Runtime
) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "submission"
    payload = f"HOST_PORT = {listener.port}\n{PROBE}\nimport json\nLOOT = json.dumps(results)\n"
    write_evil_package(source / "evil", payload)
    env = ensure_env("solution", resolve_python(None),
                     ["six==1.16.0", f"evilpkg @ file://{source / 'evil'}"],
                     sandboxed=True, source=source,
                     runtime=runtime if runtime.name != "bwrap" else None)
    assert "six==1.16.0" in env.packages  # a normal requirement still installs
    loot = next(env.path.glob("lib/python*/site-packages/evilpkg.py")).read_text()
    results = json.loads(ast.literal_eval(loot.removeprefix("LOOT = ")))
    assert results["direct_host_listener"] != "open"
    for probe in ("proxy_host_listener", "proxy_localhost_listener", "socket_host_listener",
                  "proxy_other_host", "proxy_index_other_port"):
        assert results[probe] == "403", (probe, results)
    assert results["proxy_index"] == "200", results
    assert listener.accepted == 0


AGENT_PROBE = '''
import json, os, urllib.request
{probe}
def fetch(url, proxied):
    proxy = {{"http": os.environ["HTTP_PROXY"]}} if proxied else {{}}
    handlers = [urllib.request.ProxyHandler(proxy)]
    try:
        with urllib.request.build_opener(*handlers).open(url, timeout=10) as reply:
            return str(reply.status)
    except OSError as exc:
        return type(exc).__name__
results["endpoint_direct"] = fetch("{endpoint}/_fake/requests", proxied=False)
results["endpoint_proxied"] = fetch("{endpoint}/_fake/requests", proxied=True)
open("results.json", "w").write(json.dumps(results))
'''


def test_agent_network_reaches_its_endpoint_and_nothing_else(
    tmp_path: Path, listener: Listener, runtime: Runtime
) -> None:
    with FakeLLMServer(Script()) as fake:
        code = AGENT_PROBE.format(probe=f"HOST_PORT = {listener.port}\n{PROBE}",
                                  endpoint=fake.base_url)
        (tmp_path / "probe.py").write_text(code)
        workspace, artifacts = tmp_path / "ws", tmp_path / "artifacts"
        workspace.mkdir()
        artifacts.mkdir()
        shutil.copy(tmp_path / "probe.py", workspace / "probe.py")
        python = resolve_python(None)
        agent = CommandAgent("python probe.py", runtime, Limits(wall_clock_s=120), python,
                             network=True,
                             settings=AgentSettings(base_url=f"{fake.base_url}/v1"))
        (tmp_path / "prompt.txt").write_text("probe")
        ctx = AgentContext(problem="p", problem_dir=tmp_path, checkpoint="checkpoint_1",
                           trial=1, workspace=workspace, prompt="probe",
                           prompt_file=tmp_path / "prompt.txt", is_continuation=False,
                           artifacts_dir=artifacts)
        result = agent.act(ctx)
    assert result.status == "completed", (artifacts / "stderr.txt").read_text()
    results = json.loads((workspace / "results.json").read_text())
    assert results["endpoint_direct"] == "200" and results["endpoint_proxied"] == "200", results
    assert results["direct_host_listener"] != "open"
    for probe in ("proxy_host_listener", "proxy_localhost_listener", "socket_host_listener",
                  "proxy_other_host", "proxy_index_other_port", "proxy_index"):
        assert results[probe] == "403", (probe, results)
    assert listener.accepted == 0


def _connect_status(proxy: EgressProxy, target: str) -> str:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(proxy.socket_path))
        conn.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
        return conn.recv(100).split(b" ")[1].decode()


def _loopback_alias() -> str | None:
    """A host name other than `localhost` that resolves to loopback here (/etc/hosts)."""
    for name in ("vm", "runsc", socket.gethostname(), "ip6-localhost"):
        with contextlib.suppress(OSError):
            if socket.gethostbyname(name).startswith("127."):
                return name
    return None


def test_proxy_never_opens_the_host_even_for_an_allowlisted_name(listener: Listener) -> None:
    alias = _loopback_alias()
    own = [str(a) for a in host_addresses() if not a.is_loopback and a.version == 4]
    allow = [("pypi.org", 443), *((alias, listener.port) for _ in [alias] if alias)]
    with EgressProxy(allow) as proxy:
        assert _connect_status(proxy, f"127.0.0.1:{listener.port}") == "403"
        assert _connect_status(proxy, f"[::1]:{listener.port}") == "403"
        assert _connect_status(proxy, "169.254.169.254:80") == "403"
        for address in own:  # the listener is on loopback only, but 0.0.0.0 ones answer here
            assert _connect_status(proxy, f"{address}:{listener.port}") == "403"
        if alias is not None:  # allowlisted, but DNS says loopback: never connected
            assert _connect_status(proxy, f"{alias}:{listener.port}") == "502"
        assert f"127.0.0.1:{listener.port}" in proxy.refused
    assert listener.accepted == 0


def test_proxy_answers_garbage_with_400() -> None:
    with EgressProxy([]) as proxy, socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(proxy.socket_path))
        conn.sendall(b"GET /relative HTTP/1.1\r\n\r\n")
        assert conn.recv(100).startswith(b"HTTP/1.1 400")
    assert sys.platform.startswith("linux")


class Upstream:
    """The user's own proxy on loopback: answers CONNECT with 200, then echoes."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.asked: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _addr = self.server.accept()
            with conn:
                self.asked.append(conn.recv(200).split(b"\r\n")[0])
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
                conn.sendall(conn.recv(100))


def test_proxy_chains_to_the_users_proxy_and_still_allowlists() -> None:
    upstream = Upstream()
    try:
        with EgressProxy([("pypi.org", 443)], upstream=("127.0.0.1", upstream.port)) as proxy:
            assert _connect_status(proxy, "example.com:443") == "403"
            with socket.socket(socket.AF_UNIX) as conn:
                conn.connect(str(proxy.socket_path))
                conn.sendall(b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
                assert conn.recv(100).startswith(b"HTTP/1.1 200")
                conn.sendall(b"hello")
                assert conn.recv(100) == b"hello"
    finally:
        upstream.server.close()
    assert upstream.asked == [b"CONNECT pypi.org:443 HTTP/1.1"]


def test_index_settings_decide_the_build_allowlist(tmp_path: Path) -> None:
    environ = {"UV_INDEX_URL": "https://mirror.example:8443/simple",
               "UV_EXTRA_INDEX_URL": f"file://{tmp_path} http://other.example/simple",
               "UV_FIND_LINKS": str(tmp_path / "missing"), "HOME": "/root"}
    assert index_endpoints(environ) == [("pypi.org", 443), ("files.pythonhosted.org", 443),
                                        ("mirror.example", 8443), ("other.example", 80)]
    assert local_index_folders(environ) == [tmp_path]


def test_plain_http_through_the_proxy_is_one_request_per_connection() -> None:
    """The bytes after a proxied request are relayed as they come, so the connection must end
    with the response: a second request on it would reach the server unjudged."""
    with FakeLLMServer(Script()) as fake, EgressProxy([("127.0.0.1", fake.port)]) as proxy, \
            socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(proxy.socket_path))
        conn.sendall(f"GET {fake.base_url}/_fake/requests HTTP/1.1\r\nHost: x\r\n"
                     "Connection: keep-alive\r\n\r\n".encode())
        conn.settimeout(10)
        reply = b""
        while chunk := conn.recv(65536):  # ends: the server closed after one response
            reply += chunk
    assert reply.startswith(b"HTTP/1.") and b" 200 " in reply.split(b"\r\n")[0]


def test_agent_allowlists_name_the_endpoint_or_the_provider_and_nothing_more() -> None:
    fallback = provider_endpoints(["ANTHROPIC_API_KEY"])
    assert fallback == [("api.anthropic.com", 443)]
    assert agent_allowlist(["http://127.0.0.1:8123/v1"], fallback) == [("127.0.0.1", 8123)]
    assert agent_allowlist([None], fallback) == [("api.anthropic.com", 443)]
    assert agent_allowlist([None]) == []
    with_indexes = agent_allowlist(["https://llm.example/v1"], package_indexes=True)
    assert with_indexes[0] == ("llm.example", 443) and ("pypi.org", 443) in with_indexes
    assert set(provider_endpoints(["LLM_API_KEY"])) == {
        ("api.anthropic.com", 443), ("api.openai.com", 443),
        ("generativelanguage.googleapis.com", 443)}


def test_mini_commands_with_agent_network_reach_the_indexes_only(
    tmp_path: Path, listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchwright.coding.agents.mini import MiniAgent

    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unit-test-key")
    turns = [{"text": "probe", "tool_calls": [
        {"name": "bash", "arguments": {"command": "python probe.py"}}]}, {"text": "done"}]
    with FakeLLMServer(Script.model_validate({"turns": turns})) as fake:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        (workspace / "probe.py").write_text(AGENT_PROBE.format(
            probe=f"HOST_PORT = {listener.port}\n{PROBE}", endpoint=fake.base_url))
        (tmp_path / "agent").mkdir()
        agent = MiniAgent("fake", AgentSettings(base_url=f"{fake.base_url}/v1"), get_runtime(),
                          Limits(), resolve_python(None), network=True)
        ctx = AgentContext(problem="p", problem_dir=tmp_path, checkpoint="checkpoint_1",
                           trial=1, workspace=workspace, prompt="probe",
                           prompt_file=tmp_path / "p.txt", is_continuation=False,
                           artifacts_dir=tmp_path / "agent")
        assert agent.act(ctx).status == "completed"
    results = json.loads((workspace / "results.json").read_text())
    # The model is called by the harness: the commands never reach its endpoint.
    assert results["endpoint_direct"] not in ("200", "403")
    assert results["endpoint_proxied"] == "HTTPError", results  # the proxy's 403
    assert results["proxy_index"] == "200", results
    for probe in ("proxy_host_listener", "proxy_localhost_listener", "socket_host_listener",
                  "proxy_other_host", "proxy_index_other_port"):
        assert results[probe] == "403", (probe, results)
    assert results["direct_host_listener"] != "open" and listener.accepted == 0
