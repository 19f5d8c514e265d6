"""The network recorder: every http(s) exchange of every tab, as HAR 1.2, on our own CDP connection.

It opens a second websocket to the browser (browser-use keeps its own), auto-attaches to every
page, frame and worker with `waitForDebuggerOnStart` so a new tab's first request is seen, enables
the Network domain there and resumes the target. Nothing of browser-use is patched or replaced,
so browser-use's navigation and download handling keep working at full speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.web.browser.cdp import CdpCommandError, CdpConnection
from benchwright.web.browser.exchange import Body, Exchange, RequestChain
from benchwright.web.browser.har import har_entry
from benchwright.web.browser.har_writer import HarWriter
from benchwright.web.browser.trial_models import RecorderSettings

NETWORK_TARGETS = frozenset({"page", "iframe", "worker", "shared_worker", "service_worker"})
FRAME_TARGETS = frozenset({"page", "iframe"})
"""Targets whose navigations are watched for pages the browser's policy refused."""
TEXT_MIME_MARKERS = ("text/", "json", "xml", "javascript", "x-www-form-urlencoded")
Key = tuple[str | None, str]


@dataclass
class _Pending:
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    post_data: dict[int, asyncio.Task[None]] = field(default_factory=dict)


REFUSED_ERROR = "net::ERR_NAME_NOT_RESOLVED"
"""How Chromium fails a request to a host its resolver rule refuses."""
MAX_REFUSED = 20
MAX_URL = 500


class NetworkRecorder:
    """Records one trial's traffic into a HarWriter; `start()` it before the first navigation."""

    def __init__(self, connection: CdpConnection, writer: HarWriter,
                 settings: RecorderSettings, extra_headers: dict[str, str] | None = None) -> None:
        self.connection = connection
        self.writer = writer
        self.settings = settings
        self.extra_headers = extra_headers or {}
        self._chains: dict[Key, RequestChain] = {}
        self._pending = _Pending()
        self.origins: set[str] = set()
        self.refused: list[str] = []
        """Pages the harness refused to open, each once, in order, the first MAX_REFUSED: their
        host is not a site's (the resolver maps every other name to NOTFOUND, launch.py), or
        they are no http(s) page (`file:`, `chrome:`, ...: the policy, confinement.py)."""
        for method, handler in self._handlers().items():
            connection.on(method, handler)

    @classmethod
    async def start(cls, ws_url: str, har_path: Path, settings: RecorderSettings | None = None,
                    extra_headers: dict[str, str] | None = None) -> NetworkRecorder:
        """Connect, attach to every existing and future target, and begin recording."""
        settings = settings or RecorderSettings()
        connection = await CdpConnection.open(ws_url)
        version = await connection.send("Browser.getVersion")
        writer = HarWriter(har_path, settings.flush_interval_s, version.get("product", ""))
        recorder = cls(connection, writer, settings, extra_headers)
        await connection.send("Target.setAutoAttach", {
            "autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True})
        return recorder

    async def stop(self, grace_s: float = 2.0) -> None:
        """Finish pending body fetches, write unfinished requests, close the file."""
        if self._pending.tasks:
            await asyncio.wait(set(self._pending.tasks), timeout=grace_s)
        for chain in list(self._chains.values()):
            for hop in chain.hops:
                hop.error = hop.error or "unfinished when the trial ended"
                self._write(hop)
        self._chains.clear()
        self.writer.close()
        await self.connection.close()  # commands still waiting fail now; collect their tasks
        await asyncio.gather(*self._pending.tasks, return_exceptions=True)

    def _handlers(self) -> dict[str, Any]:
        return {
            "Target.attachedToTarget": self._on_attached,
            "Target.detachedFromTarget": self._on_detached,
            "Network.requestWillBeSent": self._on_request,
            "Network.requestWillBeSentExtraInfo": self._on_request_extra,
            "Network.responseReceived": self._on_response,
            "Network.responseReceivedExtraInfo": self._on_response_extra,
            "Network.loadingFinished": self._on_finished,
            "Network.loadingFailed": self._on_failed,
            "Page.frameNavigated": self._on_navigated,
        }

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._pending.tasks.add(task)
        task.add_done_callback(self._pending.tasks.discard)
        return task

    # targets

    def _on_attached(self, params: dict[str, Any], _parent: str | None) -> None:
        session = params["sessionId"]
        kind = params.get("targetInfo", {}).get("type", "")
        self._spawn(self._prepare(session, kind in NETWORK_TARGETS, kind in FRAME_TARGETS))

    async def _prepare(self, session: str, record: bool, frames: bool) -> None:
        # A target waiting for the debugger answers only after it resumes, so every command is
        # sent at once, in order (the session runs them in order), and awaited together.
        commands: list[tuple[str, dict[str, Any]]] = []
        if record:
            commands.append(("Network.enable",
                             {"maxPostDataSize": self.settings.max_post_data_bytes}))
            if self.extra_headers:
                commands.append(("Network.setExtraHTTPHeaders", {"headers": self.extra_headers}))
            if self.settings.disable_cache:
                commands.append(("Network.setCacheDisabled", {"cacheDisabled": True}))
            commands.append(("Target.setAutoAttach", {"autoAttach": True, "flatten": True,
                                                      "waitForDebuggerOnStart": True}))
        if frames:  # a page the policy refused never sends a request: its error page says it
            commands.append(("Page.enable", {}))
        commands.append(("Runtime.runIfWaitingForDebugger", {}))
        await asyncio.gather(*(self.connection.send(m, p, session_id=session)
                               for m, p in commands), return_exceptions=True)

    def _on_detached(self, params: dict[str, Any], _parent: str | None) -> None:
        session = params.get("sessionId")
        for key in [k for k in self._chains if k[0] == session]:
            chain = self._chains.pop(key)
            for hop in chain.hops:
                hop.error = hop.error or "the tab closed before the request ended"
                self._finish_later(hop, fetch_body=False)

    # network events

    def _recorded(self, url: str) -> bool:
        return url.startswith(("http://", "https://")) and not url.startswith(
            tuple(self.settings.ignored_url_prefixes))

    def _on_request(self, params: dict[str, Any], session: str | None) -> None:
        key = (session, params["requestId"])
        chain = self._chains.get(key)
        redirect = params.get("redirectResponse")
        if chain is not None and redirect is not None and chain.current is not None:
            self._end_redirect_hop(chain.current, redirect, params)
        request = params["request"]
        if not self._recorded(request.get("url", "")):
            self._chains.pop(key, None)
            return
        if chain is None:
            chain = self._chains[key] = RequestChain()
        hop = Exchange(request=request, started_ts=params["timestamp"],
                       started_wall=params.get("wallTime", time.time()),
                       resource_type=params.get("type", ""), target=session or "")
        chain.add_hop(hop)
        self._take_post_data(hop, params["requestId"], session)

    def _end_redirect_hop(self, hop: Exchange, redirect: dict[str, Any],
                          params: dict[str, Any]) -> None:
        hop.response = redirect
        hop.redirect_url = params["request"].get("url", "")
        hop.finished_ts = params["timestamp"]
        self._finish_later(hop, fetch_body=False)

    def _take_post_data(self, hop: Exchange, request_id: str, session: str | None) -> None:
        request = hop.request
        if "postData" in request:
            hop.post_data = request["postData"]
        elif request.get("postDataEntries"):
            hop.post_data = _joined_entries(request["postDataEntries"])
        elif request.get("hasPostData"):
            task = self._spawn(self._fetch_post_data(hop, request_id, session))
            self._pending.post_data[id(hop)] = task

    async def _fetch_post_data(self, hop: Exchange, request_id: str, session: str | None) -> None:
        with contextlib.suppress(CdpCommandError):
            result = await self.connection.send("Network.getRequestPostData",
                                                {"requestId": request_id}, session_id=session)
            hop.post_data = result.get("postData")

    def _chain(self, params: dict[str, Any], session: str | None) -> RequestChain | None:
        return self._chains.get((session, params["requestId"]))

    def _on_request_extra(self, params: dict[str, Any], session: str | None) -> None:
        key = (session, params["requestId"])
        chain = self._chains.setdefault(key, RequestChain())
        chain.request_extras.append(params)
        chain.pair_extras()

    def _on_response_extra(self, params: dict[str, Any], session: str | None) -> None:
        key = (session, params["requestId"])
        chain = self._chains.setdefault(key, RequestChain())
        chain.response_extras.append(params)
        chain.pair_extras()

    def _on_response(self, params: dict[str, Any], session: str | None) -> None:
        chain = self._chain(params, session)
        if chain is not None and chain.current is not None:
            chain.current.response = params["response"]
            chain.current.resource_type = params.get("type", chain.current.resource_type)

    def _on_finished(self, params: dict[str, Any], session: str | None) -> None:
        ending = self._ending(params, session)
        if ending is not None:
            key, hop = ending
            hop.encoded_length = params.get("encodedDataLength", -1)
            self._finish_later(hop, fetch_body=True, key=key)

    def _on_failed(self, params: dict[str, Any], session: str | None) -> None:
        ending = self._ending(params, session)
        if ending is not None:
            key, hop = ending
            hop.error = params.get("errorText") or "failed"
            # a page the agent (or a link it followed) tried to open off the sites; a site's own
            # sub-resources from elsewhere (fonts, analytics) are no action of the agent's
            url = str(hop.request.get("url", ""))[:MAX_URL]
            if hop.error == REFUSED_ERROR and hop.resource_type == "Document":
                self._refuse(url)
            if params.get("canceled"):
                hop.error += " (canceled)"
            self._finish_later(hop, fetch_body=False, key=key)

    def _on_navigated(self, params: dict[str, Any], _session: str | None) -> None:
        # an error page for a page that is not http(s): only the policy fails those (a file
        # that is not there is refused before it is looked for)
        url = str(params.get("frame", {}).get("unreachableUrl", ""))[:MAX_URL]
        if url and not url.startswith(("http://", "https://")):
            self._refuse(url)

    def _refuse(self, url: str) -> None:
        if url not in self.refused and len(self.refused) < MAX_REFUSED:
            self.refused.append(url)  # once: browser-use tries a failed page again

    def _ending(self, params: dict[str, Any], session: str | None) -> tuple[Key, Exchange] | None:
        """The request's last hop, stamped with its end time (None for a request not seen)."""
        key = (session, params["requestId"])
        chain = self._chains.get(key)
        if chain is None or chain.current is None:
            self._chains.pop(key, None)
            return None
        chain.current.finished_ts = params["timestamp"]
        return key, chain.current

    # completion

    def _finish_later(self, hop: Exchange, fetch_body: bool, key: Key | None = None) -> None:
        self._spawn(self._finish(hop, fetch_body, key))

    async def _finish(self, hop: Exchange, fetch_body: bool, key: Key | None) -> None:
        post_task = self._pending.post_data.pop(id(hop), None)
        if post_task is not None:
            await asyncio.wait({post_task})
        if fetch_body and key is not None:
            hop.body = await self._fetch_body(hop, key[1], key[0])
        await self._wait_for_extras(hop)
        if key is not None:  # the request ended: its chain may go once the hop is written
            self._chains.pop(key, None)
        self._write(hop)

    async def _wait_for_extras(self, hop: Exchange) -> None:
        deadline = time.monotonic() + self.settings.extra_info_wait_s
        while hop.request_extra is None and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def _fetch_body(self, hop: Exchange, request_id: str, session: str | None) -> Body:
        mime = str((hop.response or {}).get("mimeType", "")).lower()
        if not self.settings.binary_bodies and not any(m in mime for m in TEXT_MIME_MARKERS):
            return Body(skipped=f"binary body ({mime or 'unknown type'}) not recorded")
        if hop.encoded_length > self.settings.max_body_bytes:
            return Body(skipped=f"body over {self.settings.max_body_bytes} bytes not recorded")
        try:
            result = await self.connection.send("Network.getResponseBody",
                                                {"requestId": request_id}, session_id=session)
        except CdpCommandError as exc:
            return Body(skipped=f"body unavailable: {exc.message}")
        text = result.get("body", "")
        if len(text) > self.settings.max_body_bytes:
            return Body(skipped=f"body over {self.settings.max_body_bytes} bytes not recorded")
        return Body(text=text, base64=bool(result.get("base64Encoded")))

    def _write(self, hop: Exchange) -> None:
        url = hop.request.get("url", "")
        self.origins.add(_origin(url))
        self.writer.add(har_entry(hop), hop.started_ts)


def _joined_entries(entries: list[dict[str, Any]]) -> str:
    import base64

    raw = b"".join(base64.b64decode(e.get("bytes", "")) for e in entries)
    return raw.decode("utf-8", errors="replace")


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"
