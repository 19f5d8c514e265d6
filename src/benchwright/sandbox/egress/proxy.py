"""The egress proxy: the only way out of a sandbox that is given "the network".

A sandbox that may reach the outside runs in its own network namespace (loopback only); a forwarder
inside it (`forwarder.py`) carries each connection over a unix socket to this proxy, which
runs in the harness, outside the sandbox. The proxy speaks HTTP: `CONNECT host:port` and
plain-HTTP requests in absolute form. It connects only to the allowlisted host:port pairs, answers
403 to everything else, and never connects to an address of this machine, loopback or a private
range, whatever DNS says, unless the allowlist names that address literally (a loopback LLM
endpoint that IS the configured one). When the harness itself has HTTPS_PROXY/HTTP_PROXY set, the
proxy chains to it, so a user's proxy keeps working (the address check is then the upstream's).
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import os
import socket
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

# The forwarder is standard-library only (it runs inside the sandbox); both ends pump alike.
from benchwright.files.owned_temp import OwnedTemp
from benchwright.sandbox.egress.forwarder import _pump

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Endpoint = tuple[str, int]
DEFAULT_INDEXES: tuple[Endpoint, ...] = (("pypi.org", 443), ("files.pythonhosted.org", 443))
# Index settings of uv and pip whose hosts a build may reach (file:// ones are local folders).
INDEX_VARIABLES = ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL",
                   "UV_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")
_PRIVATE = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16",
    "fc00::/7", "fe80::/10"))
_HEAD_LIMIT = 64 * 1024
_CONNECT_TIMEOUT_S = 30.0


def endpoint_of_url(url: str) -> Endpoint | None:
    """host:port of an http(s) URL; None for other schemes (file://) and malformed URLs."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


def configured_index_urls(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every index URL the user configured for uv or pip (several per variable allowed)."""
    environ = os.environ if environ is None else environ
    return [url for name in INDEX_VARIABLES for url in environ.get(name, "").split()]


def index_endpoints(environ: Mapping[str, str] | None = None) -> list[Endpoint]:
    """What a package install may reach: PyPI, plus the hosts of configured http(s) indexes."""
    found = [endpoint_of_url(url) for url in configured_index_urls(environ)]
    return list(dict.fromkeys([*DEFAULT_INDEXES, *(e for e in found if e is not None)]))


def local_index_folders(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The file:// indexes and plain-path find-links that exist, to be mounted read-only."""
    folders: list[Path] = []
    for url in configured_index_urls(environ):
        path = Path(urlsplit(url).path) if url.startswith("file://") else Path(url)
        if path.is_absolute() and path.is_dir():
            folders.append(path)
    return folders


def upstream_proxy(environ: Mapping[str, str] | None = None) -> Endpoint | None:
    """The harness's own proxy (HTTPS_PROXY first), to chain to."""
    environ = os.environ if environ is None else environ
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        if environ.get(name):
            return endpoint_of_url(environ[name])
    return None


def host_addresses() -> set[Address]:
    """This machine's own addresses (a service listening on 0.0.0.0 answers on each)."""
    found: set[Address] = set()
    with contextlib.suppress(OSError):
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
        for before, line in itertools.pairwise(lines):
            if "host LOCAL" in line:
                found.add(ipaddress.ip_address(before.split()[-1]))
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            raw = line.split()[0]
            found.add(ipaddress.ip_address(":".join(raw[i:i + 4] for i in range(0, 32, 4))))
    return found


def is_forbidden(address: Address, own: set[Address]) -> bool:
    """Whether the proxy refuses to connect to `address` unless the allowlist names it."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (address in own or address.is_loopback or address.is_unspecified
            or address.is_multicast or address.is_link_local
            or any(address in net for net in _PRIVATE if net.version == address.version))


class Policy:
    """Which host:port pairs the proxy may open, and to which addresses."""

    def __init__(self, allow: Iterable[Endpoint]) -> None:
        self.allow = {(host.lower().strip("[]"), port) for host, port in allow}
        self.own = host_addresses()

    def allows(self, host: str, port: int) -> bool:
        """Whether host:port is on the allowlist."""
        return (host.lower().strip("[]"), port) in self.allow

    def addresses(self, host: str, port: int) -> list[Address]:
        """The addresses host:port may be reached at: forbidden ones only if named literally."""
        literal = _literal(host) or (("127.0.0.1", "::1") if host == "localhost" else None)
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        picked: list[Address] = []
        for *_info, sockaddr in infos:
            address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
            if not is_forbidden(address, self.own) or (literal and str(address) in literal):
                picked.append(address)
        return picked


def _literal(host: str) -> tuple[str] | None:
    with contextlib.suppress(ValueError):
        return (str(ipaddress.ip_address(host.strip("[]"))),)
    return None


class EgressProxy:
    """An allowlisting HTTP proxy on a unix socket in a private folder; a context manager."""

    def __init__(self, allow: Iterable[Endpoint], upstream: Endpoint | None = None) -> None:
        self.policy = Policy(allow)
        self.upstream = upstream
        self._owned = OwnedTemp("benchwright-egress-")  # a kill -9: the next start's sweep
        self.folder = self._owned.path
        self.socket_path = self.folder / "egress.sock"
        self.refused: list[str] = []
        """host:port pairs asked for and refused, in order."""
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._live: set[socket.socket] = set()
        self._lock = threading.Lock()

    def __enter__(self) -> EgressProxy:
        self._server.bind(str(self.socket_path))
        # The folder (0700) keeps host users out; the socket itself must admit the sandbox's uid.
        self.socket_path.chmod(0o666)
        self._server.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with self._lock:  # tunnels a sandbox left open end with it, threads included
            for conn in self._live:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._owned.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _addr = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_tracked, args=(client,), daemon=True).start()

    def _serve_tracked(self, client: socket.socket) -> None:
        with self._lock:
            self._live.add(client)
        try:
            self._serve(client)
        except OSError:  # either side went away mid-way: nothing to answer to
            pass
        finally:
            with self._lock:
                self._live.discard(client)

    def _serve(self, client: socket.socket) -> None:
        with client:
            try:
                head, rest = _read_head(client)
                target, forward = _parse_request(head)
            except (OSError, ValueError):
                return _answer(client, 400, "Bad Request")
            if not self.policy.allows(*target):
                self.refused.append(f"{target[0]}:{target[1]}")
                return _answer(client, 403, "Forbidden")
            upstream = self._open(*target)
            if upstream is None:
                return _answer(client, 502, "Bad Gateway")
            with self._lock:
                self._live.add(upstream)
            with upstream:
                if forward is None:
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                else:
                    upstream.sendall(forward)
                if rest:
                    upstream.sendall(rest)
                _relay(client, upstream)
            with self._lock:
                self._live.discard(upstream)
        return None

    def _open(self, host: str, port: int) -> socket.socket | None:
        """A connection to host:port: through the user's proxy, else straight to a vetted
        address (never re-resolved, so DNS cannot switch it after the check)."""
        if self.upstream is not None and _literal(host) is None and host != "localhost":
            return _tunnel(self.upstream, host, port)
        try:
            addresses = self.policy.addresses(host, port)
        except OSError:
            return None
        for address in addresses:
            with contextlib.suppress(OSError):
                return socket.create_connection((str(address), port), _CONNECT_TIMEOUT_S)
        return None


def _read_head(conn: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk or len(data) > _HEAD_LIMIT:
            raise ValueError("incomplete request head")
        data += chunk
    head, _sep, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _parse_request(head: bytes) -> tuple[Endpoint, bytes | None]:
    """(target, what to send upstream): None for CONNECT, else the request in origin form."""
    first, _sep, headers = head.partition(b"\r\n")
    method, uri, version = first.decode("latin-1").split(" ")
    if method == "CONNECT":
        host, _colon, port = uri.rpartition(":")
        return (host.strip("[]"), int(port)), None
    parts = urlsplit(uri)
    target = endpoint_of_url(uri)
    if parts.scheme != "http" or target is None:
        raise ValueError("only CONNECT and absolute http:// requests are proxied")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return target, f"{method} {path} {version}\r\n".encode("latin-1") + _closing(headers)


def _closing(headers: bytes) -> bytes:
    """The headers with `Connection: close`: the bytes after this request are relayed as they
    come, so the next request must come on a new connection, to be read (and judged) afresh."""
    hop = (b"connection:", b"proxy-connection:", b"keep-alive:")
    lines = [ln for ln in headers.split(b"\r\n") if ln and not ln.lower().startswith(hop)]
    return b"\r\n".join([*lines, b"Connection: close", b"", b""])


def _tunnel(proxy: Endpoint, host: str, port: int) -> socket.socket | None:
    try:
        conn = socket.create_connection(proxy, _CONNECT_TIMEOUT_S)
        conn.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        head, _rest = _read_head(conn)
    except (OSError, ValueError):
        return None
    if head.split(b" ")[1:2] != [b"200"]:
        conn.close()
        return None
    return conn


def _answer(client: socket.socket, code: int, reason: str) -> None:
    with contextlib.suppress(OSError):
        client.sendall(f"HTTP/1.1 {code} {reason}\r\nContent-Length: 0\r\n"
                       "Connection: close\r\n\r\n".encode())


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until both sides are done."""
    other = threading.Thread(target=_pump, args=(b, a), daemon=True)
    other.start()
    _pump(a, b)
    other.join()
