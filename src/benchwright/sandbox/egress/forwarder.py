"""Run inside a sandbox (standard library only): its one way out, to the egress proxy.

Usage: python -I -S forwarder.py SOCKET PROXY_PORT [PORT=HOST:PORT ...] -- COMMAND...

It listens on 127.0.0.1:PROXY_PORT inside the sandbox's own network namespace and carries each
connection, byte for byte, over the unix socket SOCKET (bind-mounted from the host) to the egress
proxy, so clients set HTTP(S)_PROXY to it. Each PORT=HOST:PORT also listens on 127.0.0.1:PORT and
asks the proxy for a tunnel to HOST:PORT, so a loopback endpoint (an LLM server on the host's
127.0.0.1) keeps its URL inside. Then it runs COMMAND and exits with its status. It holds no
privilege: everything it carries is judged by the proxy, outside.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _carry(client: socket.socket, path: str, target: str | None) -> None:
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as proxy:
        try:
            proxy.connect(path)
            if target is not None and not _open_tunnel(proxy, target):
                return
        except OSError:
            return
        back = threading.Thread(target=_pump, args=(proxy, client), daemon=True)
        back.start()
        _pump(client, proxy)
        back.join()


def _open_tunnel(proxy: socket.socket, target: str) -> bool:
    proxy.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = proxy.recv(1)  # byte by byte: nothing after the head may be consumed here
        if not chunk:
            return False
        head += chunk
    return head.split(b" ")[1:2] == [b"200"]


def _listen(port: int, path: str, target: str | None) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)

    def accept() -> None:
        while True:
            client, _addr = server.accept()
            threading.Thread(target=_carry, args=(client, path, target), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def main(argv: list[str]) -> int:
    split = argv.index("--")
    path, proxy_port, tunnels = argv[0], int(argv[1]), argv[2:split]
    _listen(proxy_port, path, None)
    for spec in tunnels:
        port, _eq, target = spec.partition("=")
        try:
            _listen(int(port), path, target)
        except OSError as exc:  # a port below 1024: reachable through the proxy variables only
            print(f"benchwright: cannot listen for {target} on 127.0.0.1:{port}: {exc}",
                  file=sys.stderr)
    return subprocess.call(argv[split + 1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
