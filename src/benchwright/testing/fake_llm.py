"""A fake LLM server on loopback that speaks the providers' wire protocols, for offline tests.

Each protocol is mounted at its usual path under `base_url` (which has no `/v1`):

- `POST /v1/chat/completions`: OpenAI Chat Completions (`stream`, `stream_options.include_usage`);
- `POST /v1/responses`: OpenAI Responses (`stream`);
- `POST /v1/messages`: Anthropic Messages (`stream`), and `/v1/messages/count_tokens`;
- `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (`?alt=sse`) and
  `:countTokens`: Gemini (also under `/v1/`);
- `GET /v1/models`, for clients that probe.

Every model call takes the next turn of the `Script` (or a fault, see `benchwright.testing.script`),
or the reply of the first rule its text matches; a reply waits the script's `latency_s` first.
Every request is recorded; header values that carry credentials are kept only as a hash prefix.
Control routes for a server in another process: `GET /_fake/requests`, `POST /_fake/clear_faults`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import BaseModel

from benchwright.testing.conductor import Conductor, Decision
from benchwright.testing.routes import Call, route
from benchwright.testing.script import Fault, FaultKind, Script
from benchwright.testing.wire import (
    MALFORMED_JSON,
    estimate_tokens,
    make_reply,
    request_text,
)

_SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie", re.IGNORECASE)
_SECRET_QUERY = {"key", "api_key", "apikey", "token", "access_token"}
class RecordedRequest(BaseModel):
    """One request the server received."""

    method: str
    """The HTTP method."""
    path: str
    """The path and query (credential query values redacted)."""
    headers: dict[str, str]
    """The headers, lower-cased names; credential values as `<redacted:sha8>`."""
    body: Any = None
    """The JSON body, or None when there was none (or it was not JSON)."""
    turn: int | None = None
    """The script turn (from 0) the call took or faulted on; None for side calls."""
    fault: FaultKind | None = None
    """The fault injected, if any."""


class FakeLLMServer:
    """The server; use as a context manager, or `start()` and `stop()`."""

    def __init__(self, script: Script, port: int = 0, host: str = "127.0.0.1") -> None:
        self.conductor = Conductor(script)
        self.requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`, without `/v1`."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> FakeLLMServer:
        """Serve from a background thread."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="fake-llm")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve from this thread until interrupted."""
        self._httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving, wake any stall, and release the port."""
        self.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def clear_faults(self) -> None:
        """Lift `fault_all` and every scripted fault not yet spent."""
        self.conductor.clear_faults()

    def set_fault_all(self, fault: Fault | FaultKind | None) -> None:
        """Fail every model call from now on (None lifts it)."""
        self.conductor.set_fault_all(Fault(kind=fault) if isinstance(fault, FaultKind) else fault)

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    @property
    def model_calls(self) -> list[RecordedRequest]:
        """The recorded requests that asked a model for a reply."""
        return [r for r in self.requests if r.method == "POST" and "count" not in r.path.lower()]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLMServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes; with Nagle's algorithm on, the body waits for the
    # client's delayed ACK of the headers (40 ms on Linux), a latency no provider has
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: every request is in `FakeLLMServer.requests`."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/_fake/requests":
            self._json(200, [r.model_dump(mode="json") for r in self.server.fake.requests])
            return
        self._record(None)
        if path in ("/v1/models", "/v1beta/models"):
            self._json(200, {"object": "list", "data": [
                {"id": "fake", "object": "model", "created": 0, "owned_by": "benchwright"}],
                "models": [{"name": "models/fake"}]})
        else:
            self._json(404, {"error": {"message": f"fake-llm: no route GET {path}"}})

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        if path == "/_fake/clear_faults":
            self.server.fake.clear_faults()
            self._json(200, {"cleared": True})
            return
        if path.endswith(("/count_tokens", ":countTokens")):
            self._record(body)
            tokens = estimate_tokens(json.dumps(body))
            self._json(200, {"input_tokens": tokens, "totalTokens": tokens})
            return
        call = route(path, self.path, body)
        if call is None or not isinstance(body, dict):
            self._record(body)
            self._json(404 if call is None else 400,
                       {"error": {"message": f"fake-llm: no route POST {path} with a JSON body"}})
            return
        self._answer(call, body)

    def _answer(self, call: Call, body: dict[str, Any]) -> None:
        conductor = self.server.fake.conductor
        decision = conductor.decide(call.dialect.declares_tools(body), request_text(body))
        self._record(body, decision)
        latency = decision.turn.latency_s if decision.turn is not None else None
        self.server.fake.stopping.wait(conductor.script.latency_s if latency is None else latency)
        if decision.fault is not None:
            self._fault(call, decision.fault)
        elif decision.turn is None:
            turns = len(self.server.fake.conductor.script.turns)
            message = f"fake-llm: the script's {turns} turns are all used"
            self._json(400, call.dialect.error(400, message))
        else:
            number = decision.number if decision.number is not None else -1
            reply = make_reply(decision.turn, number + 1, call.model, body, int(time.time()))
            if call.stream:
                self._stream(_frames(call, reply, body))
            else:
                self._json(200, call.dialect.reply(reply))

    def _fault(self, call: Call, fault: Fault) -> None:
        if fault.kind is FaultKind.HTTP_429:
            message = "fake-llm: rate limit reached (injected 429)"
            self._json(429, call.dialect.error(429, message),
                       {"retry-after": f"{fault.retry_after:g}"})
        elif fault.kind is FaultKind.HTTP_500:
            self._json(500, call.dialect.error(500, "fake-llm: injected internal error"))
        elif fault.kind is FaultKind.MALFORMED:
            if call.stream:
                self._stream(iter([MALFORMED_JSON.join([b"data: ", b"\n\n"])]))
            else:
                self._send(200, MALFORMED_JSON, {"content-type": "application/json"})
        else:
            self.server.fake.stopping.wait(fault.seconds)
            self.close_connection = True

    def _body(self) -> Any:
        raw = self._raw_body()
        if self.headers.get("content-encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        try:
            return json.loads(raw) if raw else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None

    def _raw_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            return b"".join(_read_chunks(self.rfile))
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _record(self, body: Any, decision: Decision | None = None) -> None:
        self.server.fake.record(RecordedRequest(
            method=self.command, path=_redact_query(self.path),
            headers={k.lower(): _redact_header(k, v) for k, v in self.headers.items()},
            body=body, turn=decision.number if decision else None,
            fault=decision.fault.kind if decision and decision.fault else None))

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(),
                   {"content-type": "application/json", **(headers or {})})

    def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in {**headers, "content-length": str(len(payload)),
                            "x-request-id": f"req_fake{len(self.server.fake.requests)}"}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, frames: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for frame in frames:
            self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


def _frames(call: Call, reply: Any, body: dict[str, Any]) -> Iterator[bytes]:
    if call.sse:
        return call.dialect.stream(reply, body)
    chunks = [json.loads(f.decode().removeprefix("data: ")) for f in
              call.dialect.stream(reply, body)]
    return iter([json.dumps(chunks).encode()])


def _read_chunks(stream: Any) -> Iterator[bytes]:
    while True:
        size = int(stream.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            stream.readline()
            return
        yield stream.read(size)
        stream.readline()


def _redact_header(name: str, value: str) -> str:
    if not _SECRET_HEADER.search(name):
        return value
    return f"<redacted:{hashlib.sha256(value.encode()).hexdigest()[:8]}>"


def _redact_query(path: str) -> str:
    parts = urlsplit(path)
    if not parts.query:
        return path
    query = [(k, "<redacted>" if k.lower() in _SECRET_QUERY else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return f"{parts.path}?{urlencode(query)}"
