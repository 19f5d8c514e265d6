"""A Chrome DevTools Protocol connection of our own: one websocket, many handlers per event.

browser-use's CDP client (cdp-use) keeps one handler per CDP method, so registering a handler
there replaces browser-use's own. The recorder and the trial set-up talk to the browser through
this separate connection instead; Chromium serves any number of clients on its browser endpoint.
Handlers run synchronously in arrival order (the HAR depends on event order); slow work is
scheduled as tasks by the handler itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from benchwright.errors import InfrastructureError
from benchwright.web.browser.imports import missing_web

try:
    from websockets.exceptions import ConnectionClosed
except ImportError:  # pragma: no cover - the web extra is missing
    # the whole install (the extra, then browser-use): not one missing module after another
    raise missing_web("the web track's browser trials need websockets") from None

EventHandler = Callable[[dict[str, Any], str | None], None]
"""Called with the event's params and the flat session id it came from (None: the browser)."""

MAX_MESSAGE_BYTES = 512 * 1024 * 1024
log = logging.getLogger(__name__)


class CdpCommandError(InfrastructureError):
    """The browser refused a CDP command (or the connection closed before it answered)."""


class CdpConnection:
    """One websocket to the browser endpoint, with flat sessions for its targets."""

    def __init__(self, websocket: Any) -> None:
        self._ws = websocket
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[str, list[EventHandler]] = defaultdict(list)
        self._reader = asyncio.create_task(self._read_loop())

    @classmethod
    async def open(cls, ws_url: str) -> CdpConnection:
        """Connect to `ws://127.0.0.1:PORT/devtools/browser/ID`."""
        from websockets.asyncio.client import connect

        websocket = await connect(ws_url, max_size=MAX_MESSAGE_BYTES, ping_interval=None,
                                  open_timeout=10)
        return cls(websocket)

    def on(self, method: str, handler: EventHandler) -> None:
        """Call `handler` for every `method` event (e.g. `Network.requestWillBeSent`)."""
        self._handlers[method].append(handler)

    async def send(self, method: str, params: dict[str, Any] | None = None,
                   session_id: str | None = None, timeout: float = 15.0) -> dict[str, Any]:
        """Send a command and wait for its result; a protocol error raises CdpCommandError."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        try:
            await self._ws.send(json.dumps(message))
            return await asyncio.wait_for(future, timeout)
        except (TimeoutError, OSError, ConnectionClosed) as exc:
            raise CdpCommandError(f"{method}: no answer from the browser ({exc!r})") from None
        finally:
            self._pending.pop(message["id"], None)

    async def close(self) -> None:
        """Close the websocket; pending commands fail."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
        with contextlib.suppress(Exception):
            await self._ws.close()
        self._fail_pending("connection closed")

    async def _read_loop(self) -> None:
        try:
            async for raw in self._ws:
                self._dispatch(json.loads(raw))
        except Exception as exc:  # the browser went away: pending commands must not hang
            self._fail_pending(f"connection lost: {exc!r}")
            return
        self._fail_pending("connection closed by the browser")

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            self._resolve(message)
            return
        method = message.get("method", "")
        for handler in self._handlers.get(method, ()):
            try:
                handler(message.get("params", {}), message.get("sessionId"))
            except Exception:  # one broken handler must not stop the others or the reader
                log.exception("CDP handler for %s failed", method)

    def _resolve(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["id"])
        if future is None or future.done():
            return
        if "error" in message:
            error = message["error"]
            future.set_exception(CdpCommandError(f"CDP error {error.get('code')}: "
                                                 f"{error.get('message')}"))
        else:
            future.set_result(message.get("result", {}))

    def _fail_pending(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(CdpCommandError(reason))
