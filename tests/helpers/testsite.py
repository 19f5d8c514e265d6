"""A tiny web site on loopback for the browser tests: links, a form POST, a redirect, cookies,
a second tab (target=_blank), and a login form."""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

USER, PASSWORD, SESSION = "alice", "s3cret", "sess-42"

PAGES = {
    "/": ("<h1>Home</h1><a id=go href='/form'>Go to form</a> "
          "<a id=hop href='/redirect?from=home'>Redirect me</a> "
          "<a id=newtab href='/tab' target=_blank>Open tab</a> <img src='/pixel.gif'>"),
    "/form": ("<h1>Order</h1><form method=post action='/submit'>"
              "<input name=q id=q><button id=send>Send</button></form>"),
    "/landing": "<h1>Landed</h1><p>after a redirect</p>",
    "/tab": "<h1>Second tab</h1>",
    "/login": ("<form method=post action='/login'><input name=username id=username>"
               "<input name=password id=password type=password>"
               "<button id=signin>Sign in</button></form>"),
}
GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00"
       b"\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")


class Handler(BaseHTTPRequestHandler):
    server: SiteServer

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append(("GET", self.path, dict(self.headers)))
        path = urlsplit(self.path).path
        if path == "/redirect":
            return self._send(302, b"", [("Location", "/landing")])
        if path == "/pixel.gif":
            return self._send(200, GIF, [("Content-Type", "image/gif")])
        if path == "/whoami":
            return self._page(f"<p id=cookie>{html.escape(self.headers.get('Cookie', ''))}</p>")
        if path == "/account":
            return self._account()
        if path == "/done":
            return self._page(f"<h1>Thanks</h1><p>{html.escape(self.server.last_q)}</p>")
        if path not in PAGES:
            return self._send(404, b"not found", [("Content-Type", "text/plain")])
        cookies = [("Set-Cookie", "seen=1; Path=/; HttpOnly")] if path == "/" else []
        return self._page(PAGES[path], cookies)

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(size).decode()
        self.server.seen.append(("POST", self.path, dict(self.headers)))
        form = {k: v[0] for k, v in parse_qs(body).items()}
        if self.path == "/login":
            if form.get("username") == USER and form.get("password") == PASSWORD:
                return self._send(303, b"", [("Location", "/account"),
                                             ("Set-Cookie", f"session={SESSION}; Path=/")])
            return self._send(303, b"", [("Location", "/login")])
        self.server.last_q = form.get("q", "")
        return self._send(303, b"", [("Location", "/done")])

    def _account(self) -> None:
        if f"session={SESSION}" in self.headers.get("Cookie", ""):
            return self._page(f"<h1>Account</h1><p>Signed in as {USER}</p>")
        return self._send(302, b"", [("Location", "/login")])

    def _page(self, body: str, headers: list[tuple[str, str]] | None = None) -> None:
        doc = f"<!doctype html><html><body>{body}</body></html>".encode()
        self._send(200, doc, [("Content-Type", "text/html; charset=utf-8"), *(headers or [])])

    def _send(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.last_q = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def serve() -> SiteServer:
    server = SiteServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    import sys
    import time

    site = serve()
    print(site.url, flush=True)
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 3600)
