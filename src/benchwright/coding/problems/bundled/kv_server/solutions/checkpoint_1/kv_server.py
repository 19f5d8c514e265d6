"""Reference solution for kv_server, checkpoint 1: an in-memory JSON key-value HTTP server."""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
KV_PREFIX = "/kv/"


class ApiError(Exception):
    def __init__(self, status: int, error: str) -> None:
        super().__init__(error)
        self.status = status
        self.error = error


class Store:
    """A thread-safe dictionary of JSON values."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, object] = {}

    def put(self, key: str, value: object) -> bool:
        """Store a value; True when the key is new."""
        with self._lock:
            created = key not in self._values
            self._values[key] = value
            return created

    def get(self, key: str) -> object:
        with self._lock:
            if key not in self._values:
                raise ApiError(404, "key_not_found")
            return self._values[key]

    def delete(self, key: str) -> None:
        with self._lock:
            if self._values.pop(key, _MISSING) is _MISSING:
                raise ApiError(404, "key_not_found")


_MISSING = object()


class Handler(BaseHTTPRequestHandler):
    store: Store  # set on the class built by make_handler
    server_version = "kv_server/1"

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # keep the output quiet

    def _dispatch(self, method: str) -> None:
        # Always consume the request body, so that closing the connection never resets it.
        length = int(self.headers.get("Content-Length") or 0)
        self.raw_body = self.rfile.read(length) if length > 0 else b""
        path = self.path.split("?", 1)[0]
        try:
            if path == "/health":
                if method != "GET":
                    raise ApiError(405, "method_not_allowed")
                self._send(200, {"status": "ok"})
            elif path.startswith(KV_PREFIX):
                self._key_route(method, path[len(KV_PREFIX):])
            else:
                raise ApiError(404, "not_found")
        except ApiError as exc:
            self._send(exc.status, {"error": exc.error})

    def _key_route(self, method: str, key: str) -> None:
        if method not in ("GET", "PUT", "DELETE"):
            raise ApiError(405, "method_not_allowed")
        if not KEY_RE.fullmatch(key):
            raise ApiError(400, "invalid_key")
        if method == "GET":
            self._send(200, {"key": key, "value": self.store.get(key)})
        elif method == "PUT":
            value = self._read_body()
            created = self.store.put(key, value)
            self._send(201 if created else 200, {"key": key, "value": value})
        else:
            self.store.delete(key)
            self._send(204, None)

    def _read_body(self) -> object:
        try:
            body = json.loads(self.raw_body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ApiError(400, "invalid_body") from exc
        if not isinstance(body, dict) or "value" not in body:
            raise ApiError(400, "invalid_body")
        return body["value"]

    def _send(self, status: int, payload: object) -> None:
        self.send_response(status, HTTPStatus(status).phrase)
        if status == 204:
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = json.dumps(payload).encode("utf-8")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def make_handler(store: Store) -> type[Handler]:
    return type("BoundHandler", (Handler,), {"store": store})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="In-memory JSON key-value server.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--address", default="127.0.0.1")
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer((args.address, args.port), make_handler(Store()))
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
