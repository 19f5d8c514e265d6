"""One local-suite site in a container, with an env-ctrl endpoint like the official WebArena
images'.

    python -m benchwright.web.local_suite.site_container     # inside the site image

The forum (site `reddit`) serves on port 80 and env-ctrl on 8877, as in the official images. It runs
on the standard library alone: the site image (`benchwright.web.local_suite.image`) holds this file
and the forum's own modules under empty package files, nothing else of benchwright.

env-ctrl answers as the official one does (webarena-verified's environment_control):
- `GET /status`: 200 and `{"success", "message", "details": {"value": {"services": {name: STATE}},
  "exec_logs": [...]}}`; success when every service is RUNNING or HEALTHY (the site is HEALTHY
  once it answers its own GET / below 500 over loopback; STARTING before, STOPPED after a stop);
- `POST /init` (records the site's external URL), `POST /stop`, `POST /start[?wait=1]`: the same
  JSON, 200 on success, 500 when the operation failed;
- `GET /`: a small HTML page; anything else 404 `{"success": false, "error": "Not found"}`.

Its environment: WA_ENV_CTRL_PORT (8877), WA_ENV_CTRL_EXTERNAL_SITE_URL (what /init records
when given no `base_url`), BENCHWRIGHT_SITE_PORT (80) and BENCHWRIGHT_SITE_READY_AFTER_S: seconds
before the site starts serving (default 1), or `never` (it never does: how the tests of a site
that never gets healthy make one). A stop and a start keep the site's data; a new container is
the only reset (as with the official images).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from benchwright.web.local_suite.forum import ForumSite
from benchwright.web.local_suite.routing import serve_app

CTRL_PORT = 8877
SITE_PORT = 80
READY_AFTER_S = 1.0
START_WAIT_S = 60.0
OK_STATES = ("RUNNING", "HEALTHY")


class WebService:
    """The site's HTTP server: started after a delay, stopped and started again on request."""

    def __init__(self, port: int, ready_after_s: float | None) -> None:
        self.app = ForumSite()
        self.port = port
        self.ready_after_s = ready_after_s
        self.stopped = False
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    def start_later(self) -> None:
        """Start serving after the configured delay (never, for `never`)."""
        if self.ready_after_s is not None:
            timer = threading.Timer(self.ready_after_s, self.start)
            timer.daemon = True
            timer.start()

    def start(self) -> bool:
        """Serve now (False when this service never starts)."""
        with self._lock:
            self.stopped = False
            if self.ready_after_s is None:
                return False
            if self._server is None:
                self._server = serve_app(self.app, "0.0.0.0", threading.Lock(), self.port)
                self.port = int(self._server.server_address[1])  # port 0: the one it got
                print(f"site {self.app.site} serving on port {self.port}", flush=True)
            return True

    def stop(self) -> None:
        """Stop serving (the data stays)."""
        with self._lock:
            self.stopped = True
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            print(f"site {self.app.site} stopped", flush=True)

    def state(self) -> str:
        """HEALTHY, UNHEALTHY, STARTING or STOPPED."""
        if self._server is None:
            return "STOPPED" if self.stopped else "STARTING"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=3) as answer:
                return "HEALTHY" if answer.status < 500 else "UNHEALTHY"
        except urllib.error.HTTPError as exc:
            return "HEALTHY" if exc.code < 500 else "UNHEALTHY"
        except OSError:
            return "UNHEALTHY"


class EnvCtrl:
    """What the env-ctrl endpoint does, answered as the official one answers."""

    def __init__(self, web: WebService, site_url: str) -> None:
        self.web = web
        self.site_url = site_url

    def status(self) -> dict[str, Any]:
        """The services' states; success when all are up."""
        services = {"web": self.web.state(), "env-ctrl": "RUNNING"}
        return result(all(s in OK_STATES for s in services.values()), {"services": services})

    def init(self, base_url: str | None) -> dict[str, Any]:
        """Record the site's external URL."""
        self.site_url = base_url or self.site_url
        return result(True, {"message": f"site URL set to {self.site_url or '(none)'}"},
                      log=("init", 0, self.site_url))

    def start(self, wait: bool) -> dict[str, Any]:
        """Start the site; with `wait`, until it is healthy (60 s at most)."""
        started = self.web.start()
        deadline = time.monotonic() + START_WAIT_S
        while started and wait and self.web.state() not in OK_STATES:
            if time.monotonic() >= deadline:
                started = False
                break
            time.sleep(0.5)
        return result(started, None, log=("start", 0 if started else 1, self.web.state()))

    def stop(self) -> dict[str, Any]:
        """Stop the site."""
        self.web.stop()
        return result(True, None, log=("stop", 0, self.web.state()))


def result(success: bool, value: Any, log: tuple[str, int, str] | None = None) -> dict[str, Any]:
    """The official result shape: success, message, details (value, exec_logs)."""
    message = value.pop("message", "") if isinstance(value, dict) else ""
    logs = [] if log is None else [{"command": log[0], "returncode": log[1], "stdout": log[2],
                                    "stderr": ""}]
    return {"success": success, "message": message,
            "details": {"value": value, "exec_logs": logs}}


class CtrlHandler(BaseHTTPRequestHandler):
    """The env-ctrl HTTP endpoint."""

    ctrl: EnvCtrl

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/status":
            self._json(self.ctrl.status())
        elif path == "/":
            self._html(_dashboard(self.ctrl))
        else:
            self._json({"success": False, "error": "Not found"}, 404)

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        actions = {"/init": lambda: self.ctrl.init(query.get("base_url")),
                   "/start": lambda: self.ctrl.start(query.get("wait") == "1"),
                   "/stop": self.ctrl.stop}
        action = actions.get(parts.path)
        if action is None:
            self._json({"success": False, "error": "Not found"}, 404)
            return
        answer = action()
        self._json(answer, 200 if answer["success"] else 500)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: `docker logs` keeps the site's own lines."""

    def _json(self, data: dict[str, Any], status: int = 200) -> None:
        self._send(json.dumps(data, indent=2).encode(), "application/json", status)

    def _html(self, text: str) -> None:
        self._send(text.encode(), "text/html; charset=utf-8", 200)

    def _send(self, body: bytes, content_type: str, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _dashboard(ctrl: EnvCtrl) -> str:
    ready = ctrl.status()["success"]
    return (f"<!DOCTYPE html><html><head><title>env-ctrl: reddit</title></head><body>"
            f"<h1>env-ctrl: reddit</h1><p id=\"status\">{'Ready' if ready else 'Not Ready'}</p>"
            f"</body></html>")


def ready_after(raw: str | None) -> float | None:
    """BENCHWRIGHT_SITE_READY_AFTER_S: seconds, or None for `never`."""
    if raw is None or not raw.strip():
        return READY_AFTER_S
    return None if raw.strip() == "never" else max(0.0, float(raw))


def main() -> int:
    """Serve env-ctrl and (after the delay) the site until SIGTERM."""
    env = os.environ
    web = WebService(int(env.get("BENCHWRIGHT_SITE_PORT", SITE_PORT)),
                     ready_after(env.get("BENCHWRIGHT_SITE_READY_AFTER_S")))
    handler = type("Handler", (CtrlHandler,),
                   {"ctrl": EnvCtrl(web, env.get("WA_ENV_CTRL_EXTERNAL_SITE_URL", ""))})
    server = ThreadingHTTPServer(("0.0.0.0", int(env.get("WA_ENV_CTRL_PORT", CTRL_PORT))),
                                 handler)
    server.daemon_threads = True
    # PID 1 in a container ignores SIGTERM unless it handles it: `docker stop` would wait 10 s.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"env-ctrl serving on port {server.server_address[1]}", flush=True)
    web.start_later()
    server.serve_forever()
    web.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
