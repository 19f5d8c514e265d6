"""The viewer's server: the standard library's ThreadingHTTPServer on loopback, GET only.

It answers three kinds of path and nothing else: `/` (the page), `/static/<name>` for the
files `assets.static_files` names, and `/data/<key>.js` for the read model's keys. No path
is ever joined to a folder, so no request can reach a file that is not one of these (a
`..`, an encoded one, or any other path is 404). Any method but GET and HEAD is 405. Every
answer carries a strict Content-Security-Policy (scripts from the viewer itself only), and a
request whose Host is not the viewer's own is refused (a web page elsewhere cannot read the
runs through DNS rebinding). docs/view.md says why the standard library.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchwright.errors import UserInputError
from benchwright.view.assets import INDEX, STATIC, content_type, static_files
from benchwright.view.read_model import ReadModel

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")
"""Scripts only from the viewer's own files; plotly sets inline styles, nothing else is let in."""
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
NOT_ALLOWED = ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND")


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or name)."""
    return host in LOOPBACK or host.startswith("127.")


class ViewServer(ThreadingHTTPServer):
    """The server, holding the read model and the files it serves."""

    daemon_threads = True

    def __init__(self, host: str, port: int, model: ReadModel) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), ViewHandler)
        self.model = model
        self.static = static_files()
        self.index = (STATIC / INDEX).read_bytes()
        self.loopback = is_loopback(host)

    @property
    def url(self) -> str:
        """Where the viewer is."""
        host, port = self.host, self.server_address[1]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"

    @property
    def host(self) -> str:
        """The address listened on."""
        host = self.server_address[0]
        return host.decode() if isinstance(host, bytes) else str(host)

    def allowed_hosts(self) -> set[str]:
        """Host header values a loopback viewer answers."""
        port = self.server_address[1]
        return {f"{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]", self.host)}


class ViewHandler(BaseHTTPRequestHandler):
    """One request."""

    server: ViewServer
    server_version = "benchwright-view"

    def version_string(self) -> str:
        """The Server header: no Python version."""
        return self.server_version

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _not_allowed(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"only GET\n", "text/plain; charset=utf-8",
                   head=False, extra={"Allow": "GET, HEAD"})

    def _answer(self, head: bool) -> None:
        if self.server.loopback and self.headers.get("Host", "") not in self.server.allowed_hosts():
            self._send(HTTPStatus.FORBIDDEN, b"unknown host\n", "text/plain; charset=utf-8", head)
            return
        try:
            found = self._route(urlsplit(self.path).path)
        except Exception as exc:  # a page that cannot be built must not take the server down
            print(f"benchwright view: {self.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, b"this page could not be built\n",
                       "text/plain; charset=utf-8", head)
            return
        if found is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8", head)
            return
        body, kind, cache = found
        self._send(HTTPStatus.OK, body, kind, head, extra={"Cache-Control": cache})

    def _route(self, path: str) -> tuple[bytes, str, str] | None:
        if path in ("/", "/index.html"):
            return self.server.index, content_type(INDEX), "no-cache"
        if path.startswith("/static/") and path[8:] in self.server.static:
            name = path[8:]
            return self.server.static[name].read_bytes(), content_type(name), "max-age=3600"
        if path.startswith("/data/") and path.endswith(".js"):
            body = self.server.model.file(path[6:-3])
            return (body, content_type("data.js"), "no-store") if body is not None else None
        return None

    def _send(self, status: HTTPStatus, body: bytes, kind: str, head: bool,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        headers = {"Content-Type": kind, "Content-Length": str(len(body)),
                   "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                   "Referrer-Policy": "no-referrer", "Cross-Origin-Resource-Policy": "same-origin",
                   "X-Frame-Options": "DENY", **(extra or {})}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a viewer's terminal shows its URL, not every request."""


def _reject_method(handler: ViewHandler) -> None:
    handler._not_allowed()


for _method in NOT_ALLOWED:
    setattr(ViewHandler, f"do_{_method}", _reject_method)


def one_blas_thread() -> None:
    """numpy's BLAS on one thread: the reports' bootstrap intervals are many small products,
    which several BLAS threads make slower, several times so on a busy machine (docs/view.md)."""
    import numpy  # noqa: F401  (loads the BLAS library whose threads are limited)

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the `view` extra brings it; without it the viewer is only slower
        return
    threadpool_limits(limits=1, user_api="blas")


def start(folders: list[Path], host: str = "127.0.0.1", port: int = 0) -> ViewServer:
    """A server for the runs under `folders`, bound but not serving yet."""
    one_blas_thread()
    model = ReadModel(folders)
    try:
        return ViewServer(host, port, model)
    except OSError as exc:
        raise UserInputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                             hint="pick another --port (0: a free one) or --host") from None


def serve_in_thread(server: ViewServer) -> Callable[[], None]:
    """Serve in a background thread; returns the function that stops it (tests, bench)."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join()

    return stop


def serve_forever(server: ViewServer, open_browser: bool) -> None:
    """Serve until Ctrl-C; print the URL first (and open it in a browser when asked)."""
    print(f"benchwright view: {server.url}  (Ctrl-C to stop)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
