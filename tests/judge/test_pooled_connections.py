"""The judge-count flake (tests/judge/test_judge.py saw 43 model calls for 42 requests under load,
with a ConnectionResetError in the fake LLM server): httpcore's pool closes an idle connection
whose keep-alive expired without a lock (`HTTP11Connection.close`), after deciding so under the
pool's lock. A request assigned that connection just before (its thread not yet scheduled, as on
a loaded machine) activates it, sends, and has the socket closed under it: the server answered,
the client saw a dropped connection and asked again. The judge's clients keep idle connections
without expiry, so the pool never closes one under a request; this test plays the interleaving."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from httpcore._sync import http11  # the pool's internals: the race lives there

from benchwright.judge.models import JudgeSettings
from benchwright.judge.providers import make_client
from benchwright.testing import FakeLLMServer, Script

# a request that failed in the other thread must fail the test too
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
REPLY = {"text": json.dumps({"flags": []}), "usage": {"input_tokens": 10, "output_tokens": 1}}


def _ask(client: Any) -> None:
    client.ask("prefix", "criteria", {"type": "object"})


def test_a_connection_is_never_closed_under_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeLLMServer(Script.model_validate({"rules": [{"match": [],
                                                             "replies": [REPLY]}]})).start()
    try:
        client = make_client(JudgeSettings(model="m", base_url=f"{server.base_url}/v1",
                                           api_key_env="K"), {"K": "k"})
        _ask(client)  # one pooled connection, idle now
        closing, sent = threading.Event(), threading.Event()
        shift = [0.0]
        real_monotonic = time.monotonic
        monkeypatch.setattr(http11.time, "monotonic", lambda: real_monotonic() + shift[0])
        handle, close = http11.HTTP11Connection.handle_request, http11.HTTP11Connection.close
        send_body = http11.HTTP11Connection._send_request_body
        other: list[threading.Thread] = []

        def late_handle(self: Any, request: Any) -> Any:
            if threading.current_thread() is threading.main_thread() and not other:
                # assigned the idle connection; before it runs, time passes (the keep-alive
                # expires) and another request goes through the pool
                shift[0] = 3600.0
                other.append(threading.Thread(target=_ask, args=(client,)))
                other[0].start()
                closing.wait(2)  # the pool's close of it, if it closes it at all
            return handle(self, request)

        def late_close(self: Any) -> None:
            if threading.current_thread() is not threading.main_thread():
                closing.set()
                sent.wait(5)  # the closer is descheduled until the request went out
            close(self)

        def signalled_send(self: Any, request: Any) -> None:
            send_body(self, request)
            sent.set()

        monkeypatch.setattr(http11.HTTP11Connection, "handle_request", late_handle)
        monkeypatch.setattr(http11.HTTP11Connection, "close", late_close)
        monkeypatch.setattr(http11.HTTP11Connection, "_send_request_body", signalled_send)
        _ask(client)  # raised a dropped connection (the server had answered) before the fix
        other[0].join(10)
        assert len(server.model_calls) == 3
    finally:
        server.stop()
