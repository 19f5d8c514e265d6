"""The loopback proxy in front of an agent's model endpoint: it records every call into the
cassette, or answers every call from it.

One proxy serves one attempt (or trial, or judging); the harness opens a conversation before
the agent's turn (`begin`) and closes it after (`end`): recording writes the conversation's file
then, replaying returns the first divergence, if any. The agent is pointed at `url_for(its base
URL)`: the proxy's loopback address with the endpoint's own path, so requests reach the
endpoint under the same path. Credentials pass through to the endpoint and are never written.
"""

from __future__ import annotations

import gzip
import http.client
import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from benchwright.errors import ReplayDivergence, UserInputError
from benchwright.files.redaction import SECRET_PARAM, Redactor
from benchwright.llm.cassette import (
    conversation_rel,
    read_conversation,
    start_cassette,
    utc_stamp,
    write_conversation,
)
from benchwright.llm.matching import Normaliser, first_difference
from benchwright.llm.models import (
    ConversationHeader,
    Exchange,
    LlmTraffic,
    StreamEvent,
    TrafficMode,
)
from benchwright.llm.replay_keys import DIVERGED
from benchwright.llm.wire_events import payloads_of, split_events, usage_of

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
                        "host", "content-length", "accept-encoding"})
KEPT_REQUEST_HEADERS = frozenset({"content-type", "accept", "anthropic-version",
                                  "anthropic-beta", "openai-beta"})
KEPT_RESPONSE_HEADERS = frozenset({"content-type", "retry-after"})
UPSTREAM_TIMEOUT_S = 900.0
IN_FLIGHT_WAIT_S = 30.0


class Conversation:
    """One conversation's state: what was recorded so far, or what is left to replay."""

    def __init__(self, header: ConversationHeader, recorded: list[Exchange] | None,
                 recorded_paths: dict[str, str] | None = None) -> None:
        self.header, self.recorded = header, recorded
        self.exchanges: list[Exchange] = []
        self.used: set[int] = set()
        self.requests = 0
        self.divergence: ReplayDivergence | None = None
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.in_flight = 0
        self.now = Normaliser(header.paths)
        then = Normaliser(recorded_paths if recorded_paths is not None else header.paths)
        self.expected = [then.request(e.method, e.path, e.request) for e in recorded or []]

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1
            self.idle.notify_all()

    def settle(self, timeout: float = IN_FLIGHT_WAIT_S) -> None:
        """Wait for requests still being answered (a client may read the last byte of a
        response before its handler has kept the exchange)."""
        with self.lock:
            self.idle.wait_for(lambda: self.in_flight == 0, timeout)

    def add(self, exchange: Exchange) -> None:
        with self.lock:
            self.exchanges.append(exchange.model_copy(update={"index": len(self.exchanges)}))

    def next_index(self) -> int:
        with self.lock:
            self.requests += 1
            return self.requests - 1

    def match(self, method: str, path: str, body: Any) -> Exchange | ReplayDivergence:
        """The first unused recorded exchange equal to this request, else the divergence."""
        got = self.now.request(method, path, body)
        with self.lock:
            index = self.requests
            self.requests += 1
            for number, expected in enumerate(self.expected):
                if number not in self.used and expected == got:
                    self.used.add(number)
                    assert self.recorded is not None
                    return self.recorded[number]
            divergence = self._divergence(index, got)
            self.divergence = self.divergence or divergence
            return divergence

    def _divergence(self, index: int, got: dict[str, Any]) -> ReplayDivergence:
        left = [n for n in range(len(self.expected)) if n not in self.used]
        where = f"{DIVERGED} in {self.header.key}: request {index}"
        hint = "the run no longer makes the calls recorded (a changed spec, prompt, agent, " \
               "model or tool output); record it again with --llm-record"
        if not left:
            return ReplayDivergence(f"{where} is one more than the {len(self.expected)} "
                                    "recorded", hint=hint)
        same_path = [n for n in left if self.expected[n]["path"] == got["path"]]
        nearest = (same_path or left)[0]
        diff = first_difference(self.expected[nearest], got)
        assert diff is not None
        return ReplayDivergence(f"{where} differs from recorded request {nearest} at "
                                f"{diff.field}: recorded {diff.recorded!r}, got {diff.got!r}",
                                hint=hint)


class LlmProxy:
    """The proxy of one attempt; a context manager (`start` and `stop` otherwise)."""

    def __init__(self, traffic: LlmTraffic, upstream: str | None, agent: str,
                 model: str | None = None) -> None:
        self.traffic, self.agent, self.model = traffic, agent, model
        self.upstream = _origin(upstream) if upstream else None
        if traffic.mode is TrafficMode.RECORD:
            if self.upstream is None:
                raise UserInputError(f"--llm-record needs the {agent} agent's endpoint",
                                     hint="give --base-url (the endpoint to record)")
            start_cassette(traffic.cassette)
        self.redactor = Redactor.from_environ(urls={"BASE_URL": upstream})
        self.current: Conversation | None = None
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.proxy = self
        self._thread: threading.Thread | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url_for(self, base_url: str | None) -> str:
        """The URL to give the agent instead of `base_url` (its path kept)."""
        return self.root + (urlsplit(base_url).path.rstrip("/") if base_url else "")

    def start(self) -> LlmProxy:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="llm-proxy")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
        self._httpd.server_close()

    def __enter__(self) -> LlmProxy:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def begin(self, key: str, paths: dict[str, str] | None = None) -> None:
        """Open conversation `key`; `paths` names its own folders (placeholder -> path)."""
        header = ConversationHeader(key=key, agent=self.agent, model=self.model,
                                    upstream=self.upstream or "", paths=paths or {},
                                    started=utc_stamp())
        if self.traffic.mode is TrafficMode.RECORD:
            self.current = Conversation(header, None)
            return
        found = read_conversation(self.traffic.cassette, conversation_rel(key))
        if found is None:  # nothing recorded: every request diverges
            self.current = Conversation(header, [])
            return
        self.current = Conversation(header, found[1], found[0].paths)

    @contextmanager
    def session(self, key: str, paths: Mapping[str, Path | str]
                ) -> Iterator[list[ReplayDivergence]]:
        """Conversation `key` for the length of the block (its folders: placeholder -> path);
        the list it gives holds the replay's divergence once the block ends (empty: none)."""
        diverged: list[ReplayDivergence] = []
        self.begin(key, {mark: str(path) for mark, path in paths.items()})
        try:
            yield diverged
        finally:
            found = self.end()
            if found is not None:
                diverged.append(found)

    def end(self) -> ReplayDivergence | None:
        """Close the conversation: recording writes it; replaying gives its divergence."""
        conversation, self.current = self.current, None
        if conversation is None:
            return None
        conversation.settle()
        if self.traffic.mode is TrafficMode.RECORD:
            header = conversation.header.model_copy(update={"upstream": self.upstream or ""})
            write_conversation(self.traffic.cassette, header, conversation.exchanges,
                               self.redactor)
            return None
        return conversation.divergence


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: LlmProxy


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the cassette is the log."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        raw = self._raw_body()
        conversation = self.server.proxy.current
        if conversation is None:
            self._send(503, _json({"error": {"message": "benchwright's LLM proxy: no "
                                             "conversation is open"}}), {})
            return
        body = _parsed(raw, self.headers.get("content-encoding", ""))
        conversation.enter()
        try:
            if self.server.proxy.traffic.mode is TrafficMode.RECORD:
                self._forward(conversation, raw, body)
            else:
                self._replay(conversation, body)
        finally:
            conversation.leave()

    # recording -----------------------------------------------------------------------------
    def _forward(self, conversation: Conversation, raw: bytes, body: Any) -> None:
        started = time.monotonic()
        exchange = self._exchange(conversation, started, body)
        try:
            response = self._upstream(raw)
        except OSError as exc:
            payload = {"error": {"message": f"benchwright's LLM proxy: the endpoint could not "
                                            f"be reached ({exc.strerror or exc})"}}
            self._send(502, _json(payload), {"content-type": "application/json"})
            conversation.add(_finished(exchange, 502, {}, payload, None, started))
            return
        headers = {k.lower(): v for k, v in response.getheaders()
                   if k.lower() not in HOP_BY_HOP | {"content-encoding"}}
        if _streams(response):
            events = self._relay_stream(response, started)
            conversation.add(_finished(exchange, response.status, headers, None, events,
                                       started))
        else:
            data = response.read()
            self._send(response.status, data, headers)
            conversation.add(_finished(exchange, response.status, headers, _parsed(data, ""),
                                       None, started))

    def _exchange(self, conversation: Conversation, started: float, body: Any) -> Exchange:
        return Exchange(index=conversation.next_index(), method=self.command,
                        path=_redacted_query(self.path),
                        request_headers={k.lower(): v for k, v in self.headers.items()
                                         if k.lower() in KEPT_REQUEST_HEADERS},
                        request=body, status=0,
                        started=round(started - conversation.started, 6))

    def _upstream(self, raw: bytes) -> http.client.HTTPResponse:
        upstream = urlsplit(self.server.proxy.upstream or "")
        kind = http.client.HTTPSConnection if upstream.scheme == "https" else \
            http.client.HTTPConnection
        connection = kind(upstream.hostname or "", upstream.port, timeout=UPSTREAM_TIMEOUT_S)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers |= {"Host": upstream.netloc, "Accept-Encoding": "identity",
                    "Content-Length": str(len(raw))}
        connection.request(self.command, self.path, body=raw or None, headers=headers)
        return connection.getresponse()

    def _relay_stream(self, response: http.client.HTTPResponse,
                      started: float) -> list[StreamEvent]:
        self._open_stream(response.status, {k.lower(): v for k, v in response.getheaders()
                                            if k.lower() in KEPT_RESPONSE_HEADERS})
        sse = "event-stream" in (response.getheader("content-type") or "")
        events: list[StreamEvent] = []
        pending = b""
        while chunk := response.read1(65536):
            self._chunk(chunk)
            now = round(time.monotonic() - started, 6)
            whole, pending = split_events(pending + chunk, sse)
            events += [StreamEvent(t=now, data=e.decode("utf-8", "replace")) for e in whole]
        if pending:
            events.append(StreamEvent(t=round(time.monotonic() - started, 6),
                                      data=pending.decode("utf-8", "replace")))
        self._end_stream()
        return events

    # replaying -----------------------------------------------------------------------------
    def _replay(self, conversation: Conversation, body: Any) -> None:
        found = conversation.match(self.command, self.path, body)
        if isinstance(found, ReplayDivergence):
            self._send(400, _json(_error_body(self.path, found.one_line())),
                       {"content-type": "application/json",
                        "x-benchwright-replay": "diverged"})
        elif found.events is not None:
            self._open_stream(found.status, _no_wait(found.response_headers))
            for event in found.events:
                self._chunk(event.data.encode("utf-8"))
            self._end_stream()
        else:
            data = found.response if isinstance(found.response, str) or found.response is None \
                else json.dumps(found.response)
            self._send(found.status, (data or "").encode("utf-8"),
                       _no_wait(found.response_headers))

    # the wire ------------------------------------------------------------------------------
    def _raw_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in {**headers, "content-length": str(len(payload))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _open_stream(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in {**headers, "transfer-encoding": "chunked"}.items():
            if name != "content-length":
                self.send_header(name, value)
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _finished(exchange: Exchange, status: int, headers: dict[str, str], response: Any,
              events: list[StreamEvent] | None, started: float) -> Exchange:
    """The exchange with its response, timing and the usage it reported."""
    tokens, model = usage_of(exchange.path, exchange.request, payloads_of(response, events))
    return exchange.model_copy(update={
        "status": status, "response": response, "events": events,
        "response_headers": {k: v for k, v in headers.items() if k in KEPT_RESPONSE_HEADERS},
        "duration_s": round(time.monotonic() - started, 6), "model": model,
        "input_tokens": tokens.input_tokens, "output_tokens": tokens.output_tokens,
        "cost_usd": tokens.cost_usd})


def _no_wait(headers: dict[str, str]) -> dict[str, str]:
    """A recorded 429's retry-after made 0: a replay spends no time waiting on a provider."""
    return {k: "0" if k == "retry-after" else v for k, v in headers.items()}


def _streams(response: http.client.HTTPResponse) -> bool:
    kind = response.getheader("content-type") or ""
    return "event-stream" in kind or (response.getheader("content-length") is None
                                      and response.chunked)


def _parsed(raw: bytes, encoding: str) -> Any:
    if "gzip" in encoding.lower():
        try:
            raw = gzip.decompress(raw)
        except OSError:
            return None
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _json(data: Any) -> bytes:
    return json.dumps(data).encode()


def _error_body(path: str, message: str) -> dict[str, Any]:
    from benchwright.testing.routes import dialect_of

    dialect = dialect_of(path)
    body = dialect.error(400, message) if dialect is not None else {"error": {"message": message}}
    if isinstance(body.get("error"), dict) and "code" in body["error"]:
        body["error"]["code"] = "replay_diverged"
    return body


def _origin(url: str) -> str:
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}"


def _redacted_query(path: str) -> str:
    parts = urlsplit(path)
    if not parts.query:
        return path
    query = [(k, "<redacted>" if SECRET_PARAM.search(k) else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return f"{parts.path}?{urlencode(query)}"

