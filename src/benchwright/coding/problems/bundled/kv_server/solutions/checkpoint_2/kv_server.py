"""Reference solution for kv_server, checkpoint 2: versions, conditional writes, TTLs and listing."""

from __future__ import annotations

import argparse
import bisect
import json
import math
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

KEY_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
KV_PREFIX = "/kv/"
MAX_LIMIT = 1000


class ApiError(Exception):
    def __init__(self, status: int, error: str, **extra: object) -> None:
        super().__init__(error)
        self.status = status
        self.payload = {"error": error, **extra}


@dataclass
class Entry:
    value: object
    version: int
    expires_at: float | None  # time.monotonic() deadline, None when permanent

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def describe(self, key: str, now: float) -> dict:
        expires_in = None if self.expires_at is None else max(self.expires_at - now, 1e-6)
        return {"key": key, "value": self.value, "version": self.version, "expires_in": expires_in}


@dataclass(frozen=True)
class PutRequest:
    value: object
    ttl: float | None
    if_version: int | None


class Store:
    """Thread-safe keys with versions and expiry; expired entries are dropped lazily."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}

    def _live(self, key: str, now: float) -> Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expired(now):
            del self._entries[key]
            return None
        return entry

    def put(self, key: str, request: PutRequest) -> tuple[bool, dict]:
        with self._lock:
            now = time.monotonic()
            current = self._live(key, now)
            current_version = current.version if current else 0
            if request.if_version is not None and request.if_version != current_version:
                raise ApiError(409, "version_conflict", current_version=current_version)
            expires_at = None if request.ttl is None else now + request.ttl
            entry = Entry(request.value, current_version + 1, expires_at)
            self._entries[key] = entry
            return current is None, entry.describe(key, now)

    def get(self, key: str) -> dict:
        with self._lock:
            now = time.monotonic()
            entry = self._live(key, now)
            if entry is None:
                raise ApiError(404, "key_not_found")
            return entry.describe(key, now)

    def delete(self, key: str) -> None:
        with self._lock:
            if self._live(key, time.monotonic()) is None:
                raise ApiError(404, "key_not_found")
            del self._entries[key]

    def list(self, prefix: str, limit: int) -> dict:
        with self._lock:
            now = time.monotonic()
            keys = sorted(key for key in list(self._entries) if self._live(key, now) is not None)
        start = bisect.bisect_left(keys, prefix)
        matching = []
        for key in keys[start:]:
            if not key.startswith(prefix):
                break
            matching.append(key)
        return {"keys": matching[:limit], "truncated": len(matching) > limit}


def parse_put_body(raw: bytes) -> PutRequest:
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, "invalid_body") from exc
    if not isinstance(body, dict) or "value" not in body:
        raise ApiError(400, "invalid_body")
    ttl = body.get("ttl")
    if ttl is not None and (
        isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl < math.inf
    ):
        raise ApiError(400, "invalid_body")
    if_version = body.get("if_version")
    if if_version is not None and (
        isinstance(if_version, bool) or not isinstance(if_version, int) or if_version < 0
    ):
        raise ApiError(400, "invalid_body")
    return PutRequest(body["value"], None if ttl is None else float(ttl), if_version)


def parse_limit(values: list[str] | None) -> int:
    if not values:
        return MAX_LIMIT
    text = values[0].strip()
    if not re.fullmatch(r"\d+", text) or not 1 <= int(text) <= MAX_LIMIT:
        raise ApiError(400, "invalid_query")
    return int(text)


class Handler(BaseHTTPRequestHandler):
    store: Store  # set on the class built by make_handler
    server_version = "kv_server/2"

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
        path, _, query = self.path.partition("?")
        try:
            if path == "/health":
                self._require(method, "GET")
                self._send(200, {"status": "ok"})
            elif path == "/kv":
                self._require(method, "GET")
                params = parse_qs(query, keep_blank_values=True)
                prefix = (params.get("prefix") or [""])[0]
                self._send(200, self.store.list(prefix, parse_limit(params.get("limit"))))
            elif path.startswith(KV_PREFIX):
                self._key_route(method, path[len(KV_PREFIX):])
            else:
                raise ApiError(404, "not_found")
        except ApiError as exc:
            self._send(exc.status, exc.payload)

    @staticmethod
    def _require(method: str, *allowed: str) -> None:
        if method not in allowed:
            raise ApiError(405, "method_not_allowed")

    def _key_route(self, method: str, key: str) -> None:
        self._require(method, "GET", "PUT", "DELETE")
        if not KEY_RE.fullmatch(key):
            raise ApiError(400, "invalid_key")
        if method == "GET":
            self._send(200, self.store.get(key))
        elif method == "PUT":
            created, entry = self.store.put(key, parse_put_body(self.raw_body))
            self._send(201 if created else 200, entry)
        else:
            self.store.delete(key)
            self._send(204, None)

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
