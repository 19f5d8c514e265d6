"""A tiny request/response layer over `http.server`: parsed requests, responses, a regex router.

Each local site is an `App` (a router plus in-memory state behind one lock); `serve_app` puts one
on a `ThreadingHTTPServer` bound to a free loopback port. `POST /__benchwright/reset` on any
server restores that app's seed state (for a suite run in another process).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

RESET_PATH = "/__benchwright/reset"
MAX_BODY = 1 << 20


@dataclass(frozen=True)
class Request:
    """One parsed HTTP request."""

    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    headers: dict[str, str]
    cookies: dict[str, str]


@dataclass
class Response:
    """What a handler returns."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


Handler = Callable[[Request, "re.Match[str]"], Response]


def html_response(body: str, status: int = 200) -> Response:
    """An HTML page."""
    return Response(status=status, body=body.encode("utf-8"))


def redirect(location: str, status: int = 302) -> Response:
    """A redirect (302, as the WebArena sites answer form posts)."""
    return Response(status=status, headers=[("Location", location)])


class Router:
    """Routes by method and a full-match regex on the path."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        """Register a handler; `pattern` must match the whole path."""
        self._routes.append((method, re.compile(pattern), handler))

    def dispatch(self, request: Request) -> Response | None:
        """The first matching handler's response, or None when no route matches."""
        method = "GET" if request.method == "HEAD" else request.method
        for route_method, pattern, handler in self._routes:
            match = pattern.fullmatch(request.path)
            if match and route_method == method:
                return handler(request, match)
        return None


class Resettable(Protocol):
    """In-memory site data."""

    def reset(self) -> None:
        """Restore the seed state."""


class App(Protocol):
    """One local site."""

    site: str
    """The WebArena site name it stands in for (`shopping`, `reddit` ...)."""
    base_path: str
    """The path prefix of its base URL (`/admin` for shopping_admin, else empty)."""

    @property
    def state(self) -> Resettable:
        """What a reset restores (the two shop sites share one store)."""

    def handle(self, request: Request) -> Response:
        """Answer one request."""


class _Handler(BaseHTTPRequestHandler):
    app: App
    lock: threading.Lock
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the browser's HAR is the request log."""

    def _serve(self) -> None:
        request = self._parse()
        with self.lock:
            if request.method == "POST" and request.path == RESET_PATH:
                self.app.state.reset()
                response = Response(status=204)
            else:
                response = self.app.handle(request)
        self._write(response)

    def _parse(self) -> Request:
        parts = urlsplit(self.path)
        length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        form = dict(parse_qsl(body, keep_blank_values=True)) if body else {}
        cookies = SimpleCookie(self.headers.get("Cookie") or "")
        return Request(method=self.command, path=parts.path or "/",
                       query=dict(parse_qsl(parts.query, keep_blank_values=True)), form=form,
                       headers={k.lower(): v for k, v in self.headers.items()},
                       cookies={k: m.value for k, m in cookies.items()})

    def _write(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)


def serve_app(app: App, host: str, lock: threading.Lock, port: int = 0) -> ThreadingHTTPServer:
    """A started server for the app on `port` (0: a free one), serving on a daemon thread.

    Requests are handled one at a time under `lock` (pass one lock to apps sharing state).
    """
    handler = type(f"{type(app).__name__}Handler", (_Handler,), {"app": app, "lock": lock})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name=f"local-suite-{app.site}",
                     daemon=True).start()
    return server
