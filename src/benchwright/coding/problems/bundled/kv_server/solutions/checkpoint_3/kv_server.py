"""Reference solution for kv_server, checkpoint 3: persistence, atomic batches, JSON DELETE answers."""

from __future__ import annotations

import argparse
import bisect
import json
import math
import os
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
MAX_BATCH = 100
FILE_FORMAT = "kv_server-data/1"


class ApiError(Exception):
    def __init__(self, status: int, error: str, **extra: object) -> None:
        super().__init__(error)
        self.status = status
        self.payload = {"error": error, **extra}

    def at(self, index: int) -> ApiError:
        self.payload["index"] = index
        return self


class DataFileError(Exception):
    """The data file exists but cannot be used."""


@dataclass(frozen=True)
class Entry:
    value: object
    version: int
    expires_at: float | None  # Unix time (time.time()), None when permanent

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def describe(self, key: str, now: float) -> dict:
        expires_in = None if self.expires_at is None else max(self.expires_at - now, 1e-6)
        return {"key": key, "value": self.value, "version": self.version, "expires_in": expires_in}


@dataclass(frozen=True)
class PutOp:
    key: str
    value: object
    ttl: float | None
    if_version: int | None


@dataclass(frozen=True)
class DeleteOp:
    key: str


class Store:
    """Thread-safe keys with versions and expiry, saved to a JSON file after every change."""

    def __init__(self, path: str) -> None:
        self._lock = threading.Lock()
        self._path = path
        self._entries = self._load()

    # --- persistence -----------------------------------------------------

    def _load(self) -> dict[str, Entry]:
        try:
            with open(self._path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise DataFileError(f"cannot read data file {self._path}: {exc}") from exc
        try:
            if data.get("format") != FILE_FORMAT:
                raise ValueError("unknown format")
            now = time.time()
            entries = {}
            for key, item in data["keys"].items():
                entry = Entry(item["value"], int(item["version"]), item["expires_at"])
                if not KEY_RE.fullmatch(key) or entry.version < 1:
                    raise ValueError(f"bad entry {key!r}")
                if not entry.expired(now):
                    entries[key] = entry
            return entries
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise DataFileError(f"data file {self._path} is not a kv_server data file: {exc}") from exc

    def _save(self, entries: dict[str, Entry]) -> None:
        data = {
            "format": FILE_FORMAT,
            "keys": {
                key: {"value": e.value, "version": e.version, "expires_at": e.expires_at}
                for key, e in entries.items()
            },
        }
        temporary = f"{self._path}.tmp-{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._path)

    # --- operations --------------------------------------------------------

    @staticmethod
    def _live(entries: dict[str, Entry], key: str, now: float) -> Entry | None:
        entry = entries.get(key)
        if entry is not None and entry.expired(now):
            del entries[key]
            return None
        return entry

    @classmethod
    def _apply(cls, entries: dict[str, Entry], op: PutOp | DeleteOp, now: float) -> dict:
        current = cls._live(entries, op.key, now)
        if isinstance(op, DeleteOp):
            if current is None:
                raise ApiError(404, "key_not_found")
            del entries[op.key]
            return {"key": op.key, "version": current.version}
        current_version = current.version if current else 0
        if op.if_version is not None and op.if_version != current_version:
            raise ApiError(409, "version_conflict", current_version=current_version)
        expires_at = None if op.ttl is None else now + op.ttl
        entry = Entry(op.value, current_version + 1, expires_at)
        entries[op.key] = entry
        return {**entry.describe(op.key, now), "created": current is None}

    def apply(self, ops: list[PutOp | DeleteOp], batch: bool = False) -> list[dict]:
        """Apply ops in order, all or none, and save the result before returning.

        In a batch, an error names the index of the operation that failed.
        """
        with self._lock:
            now = time.time()
            working = dict(self._entries)
            results = []
            for index, op in enumerate(ops):
                try:
                    results.append(self._apply(working, op, now))
                except ApiError as exc:
                    raise exc.at(index) if batch else exc
            self._save(working)
            self._entries = working
            return results

    def get(self, key: str) -> dict:
        with self._lock:
            now = time.time()
            entry = self._live(self._entries, key, now)
            if entry is None:
                raise ApiError(404, "key_not_found")
            return entry.describe(key, now)

    def list(self, prefix: str, limit: int) -> dict:
        with self._lock:
            now = time.time()
            keys = sorted(k for k in list(self._entries) if self._live(self._entries, k, now))
        start = bisect.bisect_left(keys, prefix)
        matching = []
        for key in keys[start:]:
            if not key.startswith(prefix):
                break
            matching.append(key)
        return {"keys": matching[:limit], "truncated": len(matching) > limit}


# --- request parsing ------------------------------------------------------


def parse_json(raw: bytes) -> object:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, "invalid_body") from exc


def parse_put(key: str, body: object) -> PutOp:
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
    return PutOp(key, body["value"], None if ttl is None else float(ttl), if_version)


def check_key(key: object) -> str:
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        raise ApiError(400, "invalid_key")
    return key


def parse_batch(body: object) -> list[PutOp | DeleteOp]:
    if not isinstance(body, dict) or not isinstance(body.get("ops"), list):
        raise ApiError(400, "invalid_body")
    items = body["ops"]
    if not 1 <= len(items) <= MAX_BATCH:
        raise ApiError(400, "invalid_body")
    ops: list[PutOp | DeleteOp] = []
    for index, item in enumerate(items):
        try:
            if not isinstance(item, dict) or item.get("op") not in ("put", "delete"):
                raise ApiError(400, "invalid_body")
            key = check_key(item.get("key"))
            ops.append(parse_put(key, item) if item["op"] == "put" else DeleteOp(key))
        except ApiError as exc:
            raise exc.at(index) from None
    return ops


def parse_limit(values: list[str] | None) -> int:
    if not values:
        return MAX_LIMIT
    text = values[0].strip()
    if not re.fullmatch(r"\d+", text) or not 1 <= int(text) <= MAX_LIMIT:
        raise ApiError(400, "invalid_query")
    return int(text)


# --- HTTP -----------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    store: Store  # set on the class built by make_handler
    server_version = "kv_server/3"

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
            elif path == "/batch":
                self._require(method, "POST")
                self._batch()
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
        check_key(key)
        if method == "GET":
            self._send(200, self.store.get(key))
        elif method == "PUT":
            [result] = self.store.apply([parse_put(key, parse_json(self.raw_body))])
            created = result.pop("created")
            self._send(201 if created else 200, result)
        else:
            [result] = self.store.apply([DeleteOp(key)])
            self._send(200, {**result, "deleted": True})

    def _batch(self) -> None:
        ops = parse_batch(parse_json(self.raw_body))
        results = self.store.apply(ops, batch=True)
        answers = []
        for op, result in zip(ops, results):
            if isinstance(op, PutOp):
                answers.append({"op": "put", "key": op.key, "version": result["version"],
                                "created": result["created"]})
            else:
                answers.append({"op": "delete", "key": op.key, "version": result["version"]})
        self._send(200, {"results": answers})

    def _send(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status, HTTPStatus(status).phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def make_handler(store: Store) -> type[Handler]:
    return type("BoundHandler", (Handler,), {"store": store})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="JSON key-value server with a data file.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--data-file", default="kv_data.json")
    args = parser.parse_args(argv)
    try:
        store = Store(args.data_file)
    except DataFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    server = ThreadingHTTPServer((args.address, args.port), make_handler(store))
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
