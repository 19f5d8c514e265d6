"""A sandbox's network, when it gets one: the egress proxy outside, the forwarder inside.

`bridged(allow, python)` starts an `EgressProxy` for the allowlist and yields a `Bridge` that says
how to run a command so that its only way out is that proxy: the sandbox keeps its private network
namespace (loopback only, so no host service is reachable), the forwarder script and the proxy's
unix socket are mounted read-only, the command runs under the forwarder, and HTTP(S)_PROXY point
at it. A loopback endpoint on the allowlist (a local LLM server) is also listened for at the same
address inside, so its URL works unchanged.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchwright.sandbox.bwrap import Mount
from benchwright.sandbox.egress.proxy import EgressProxy, Endpoint, upstream_proxy

INSIDE = Path("/run/benchwright-egress")
FORWARDER = Path(__file__).with_name("forwarder.py")
_PROXY_PORTS = (3128, 3129, 3130)
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                   "all_proxy", "NO_PROXY", "no_proxy")


@dataclass(frozen=True)
class Bridge:
    """How to run one sandboxed command behind a running egress proxy."""

    proxy: EgressProxy
    """The proxy, outside the sandbox."""
    python: Path
    """The interpreter that runs the forwarder (visible inside the sandbox)."""
    tunnels: tuple[Endpoint, ...]
    """Loopback endpoints also listened for inside, at their own port."""

    @property
    def port(self) -> int:
        """The proxy's port on the sandbox's loopback."""
        used = {port for _host, port in self.tunnels}
        return next(p for p in _PROXY_PORTS if p not in used)

    def mounts(self) -> list[Mount]:
        """The proxy's socket and the forwarder, read-only."""
        return [Mount(path=self.proxy.socket_path, target=INSIDE / "egress.sock"),
                Mount(path=FORWARDER, target=INSIDE / "forwarder.py")]

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """`argv` run under the forwarder."""
        tunnels = [f"{port}={host}:{port}" for host, port in self.tunnels]
        return [str(self.python), "-I", "-S", str(INSIDE / "forwarder.py"),
                str(INSIDE / "egress.sock"), str(self.port), *tunnels, "--", *argv]

    def env(self) -> dict[str, str]:
        """Proxy settings for the command (they replace any the harness has)."""
        url = f"http://127.0.0.1:{self.port}"
        proxies = {name: url for name in PROXY_VARIABLES if "no_proxy" not in name.lower()}
        # Loopback endpoints are listened for inside: clients reach them there, unproxied.
        direct = ",".join(sorted({host for host, port in self.tunnels if port >= 1024}))
        bypass = {"NO_PROXY": direct, "no_proxy": direct} if direct else {}
        return proxies | bypass | {"NODE_USE_ENV_PROXY": "1"}  # Node's fetch needs it


@contextmanager
def bridged(allow: Iterable[Endpoint], python: Path) -> Iterator[Bridge]:
    """A proxy for `allow` for as long as the block runs."""
    allowed = list(dict.fromkeys(allow))
    with EgressProxy(allowed, upstream=upstream_proxy()) as proxy:
        yield Bridge(proxy=proxy, python=python,
                     tunnels=tuple(e for e in allowed if _is_loopback(e[0])))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def without_proxy_settings(env: dict[str, str]) -> dict[str, str]:
    """`env` without the harness's own proxy settings (the egress proxy chains to them)."""
    return {k: v for k, v in env.items() if k not in PROXY_VARIABLES}
