"""Drive headless Chromium over the DevTools protocol (a pipe, stdlib only) and record a HAR.

A test stand-in for the browser helper's agent: it replays the local suite's action scripts with
real mouse clicks (so the browser sends the same sec-fetch-* headers as for an agent) and records
every request with its full headers, post data and redirect hops.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import subprocess
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchwright.web.local_suite import ActionScript
from tests.helpers.tiers import starts

CHROMIUM = Path("/usr/bin/chromium")
_TIMEOUT_S = 30.0

# The element's line, built the way browser-use's serializer does (tag plus chosen attributes).
_FIND_JS = """(match) => {
  const attrs = ['title', 'type', 'checked', 'id', 'name', 'role', 'value', 'placeholder',
                 'alt', 'aria-label'];
  const els = document.querySelectorAll('a[href],button,input:not([type=hidden]),select,textarea');
  for (const el of els) {
    const parts = attrs.filter(a => el.getAttribute(a)).map(a => a + '=' + el.getAttribute(a));
    const line = '<' + el.tagName.toLowerCase() + ' ' + parts.join(' ') + ' />';
    if (line.includes(match)) { window.__bw_target = el; return true; }
  }
  return false;
}"""


@starts("browser")
class Cdp:
    """One Chromium process spoken to over --remote-debugging-pipe."""

    def __init__(self, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [str(CHROMIUM), "--headless", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
             "about:blank"], pass_fds=(3, 4), preexec_fn=wire,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._ids = itertools.count(1)
        self._replies: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._from_child, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._cond:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._replies[message["id"]] = message
                    else:
                        self.events.append(message)
                self._cond.notify_all()

    def send(self, method: str, params: Mapping[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send a command and wait for its result."""
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": dict(params or {})}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        with self._cond:
            if not self._cond.wait_for(lambda: ident in self._replies, _TIMEOUT_S):
                raise TimeoutError(method)
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def wait_event(self, start: int, method: str, timeout_s: float,
                   where: Mapping[str, Any] | None = None) -> int | None:
        """Index of the first `method` event at or after `start` (None on timeout)."""
        def found() -> int | None:
            for i in range(start, len(self.events)):
                event = self.events[i]
                params = event.get("params", {})
                if event["method"] == method and all(params.get(k) == v
                                                     for k, v in (where or {}).items()):
                    return i
            return None

        with self._cond:
            self._cond.wait_for(lambda: found() is not None, timeout_s)
            return found()

    def close(self) -> None:
        """Ask Chromium to exit; kill it if it lingers."""
        with contextlib.suppress(OSError, RuntimeError, TimeoutError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


class Tab:
    """A fresh browser context with one page; replays scripts and records a HAR."""

    def __init__(self, cdp: Cdp, downloads: Path) -> None:
        self.cdp = cdp
        self.first_event = len(cdp.events)
        self.context = cdp.send("Target.createBrowserContext")["browserContextId"]
        cdp.send("Browser.setDownloadBehavior", {"behavior": "allow", "eventsEnabled": True,
                                                 "downloadPath": str(downloads),
                                                 "browserContextId": self.context})
        target = cdp.send("Target.createTarget", {"url": "about:blank",
                                                  "browserContextId": self.context})["targetId"]
        self.session = cdp.send("Target.attachToTarget", {"targetId": target,
                                                          "flatten": True})["sessionId"]
        self.call("Network.enable")
        self.call("Page.enable")
        self.frame = self.call("Page.getFrameTree")["frameTree"]["frame"]["id"]

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A command in this page's session."""
        return self.cdp.send(method, params, self.session)

    def close(self) -> None:
        """Drop the context (cookies included)."""
        self.cdp.send("Target.disposeBrowserContext", {"browserContextId": self.context})

    def run(self, script: ActionScript, site_urls: dict[str, str]) -> str:
        """Replay every step; the `done` text comes back."""
        for step in script.with_sites(site_urls).steps:
            kind, args = step.kind, step.args
            if kind == "navigate":
                url = args["url"]
                self._then_wait(lambda url=url: self.call("Page.navigate", {"url": url}))
            elif kind == "click":
                self._find(args["match"])
                self._then_wait(self._click)
            elif kind == "input":
                self._find(args["match"])
                self._eval("() => { const el = window.__bw_target; el.focus(); el.value = ''; }")
                self.call("Input.insertText", {"text": args["text"]})
            elif kind == "select":
                self._find(args["match"])
                self._eval("(text) => { const el = window.__bw_target;"
                           " const o = [...el.options].find(o => o.text.trim() === text);"
                           " el.value = o.value; el.dispatchEvent(new Event('change',"
                           " {bubbles: true})); }", args["option"])
            elif kind == "scroll":
                self._eval("(down) => window.scrollBy(0, down ? 600 : -600)",
                           args.get("down", True))
        return script.final.text

    def _eval(self, function: str, arg: Any = None) -> Any:
        expression = f"({function})({json.dumps(arg)})"
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"script error: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def _find(self, match: str) -> None:
        if not self._eval(_FIND_JS, match):
            raise LookupError(f"no interactive element matches {match!r}")

    def _click(self) -> None:
        box = self._eval("() => { const el = window.__bw_target; el.scrollIntoView({block:"
                         " 'center'}); const r = el.getBoundingClientRect();"
                         " return [r.x + r.width / 2, r.y + r.height / 2]; }")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def _then_wait(self, action: Any) -> None:
        """Run an action; if it starts a navigation or download, wait until that settles."""
        mark = len(self.cdp.events)
        action()
        frame = {"frameId": self.frame}
        started = self.cdp.wait_event(mark, "Page.frameStartedLoading", 2.0, frame)
        if started is not None:
            self.cdp.wait_event(started, "Page.frameStoppedLoading", _TIMEOUT_S, frame)
        download = self.cdp.wait_event(mark, "Browser.downloadWillBegin", 0.2)
        if download is not None:
            self.cdp.wait_event(download, "Browser.downloadProgress", _TIMEOUT_S,
                                {"state": "completed"})
        time.sleep(0.05)  # let late network events of the last request arrive

    def har(self) -> dict[str, Any]:
        """Everything this page requested, as HAR 1.2."""
        mine = [e for e in self.cdp.events[self.first_event:] if e.get("sessionId") == self.session]
        return {"log": {"version": "1.2", "creator": {"name": "tests.cdp_driver", "version": "1"},
                        "pages": [], "entries": _entries(mine)}}


def _headers(raw: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in raw.items()]


def _post_data(request: Mapping[str, Any]) -> dict[str, str] | None:
    text = request.get("postData")
    if text is None and request.get("postDataEntries"):
        text = b"".join(base64.b64decode(e.get("bytes", ""))
                        for e in request["postDataEntries"]).decode("utf-8", "replace")
    if text is None:
        return None
    mime = next((v for k, v in request.get("headers", {}).items()
                 if k.lower() == "content-type"), "")
    return {"mimeType": mime, "text": text}


def _entry(request: Mapping[str, Any], extra: Mapping[str, str] | None,
           response: Mapping[str, Any] | None, redirect_to: str = "") -> dict[str, Any]:
    har_request: dict[str, Any] = {
        "method": request["method"], "url": request["url"], "httpVersion": "HTTP/1.1",
        "headers": _headers(extra if extra is not None else request.get("headers", {})),
        "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0}
    post = _post_data(request)
    if post is not None:
        har_request["postData"] = post
    status = int(response["status"]) if response else 0
    return {"startedDateTime": datetime.now(UTC).isoformat(), "time": 0,
            "request": har_request,
            "response": {"status": status, "statusText": (response or {}).get("statusText", ""),
                         "httpVersion": "HTTP/1.1",
                         "headers": _headers((response or {}).get("headers", {})),
                         "cookies": [], "redirectURL": redirect_to, "headersSize": -1,
                         "bodySize": -1, "content": {"size": 0, "mimeType":
                                                     (response or {}).get("mimeType", "")}},
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0}}


def _entries(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per request hop; a redirect's hop gets the next hop's URL as redirectURL."""
    hops: dict[str, list[dict[str, Any]]] = {}
    extras: dict[str, list[dict[str, str]]] = {}
    order: list[tuple[str, int]] = []
    for event in events:
        params = event["params"]
        rid = params.get("requestId")
        if event["method"] == "Network.requestWillBeSent":
            chain = hops.setdefault(rid, [])
            if params.get("redirectResponse") and chain:
                chain[-1]["response"] = params["redirectResponse"]
                chain[-1]["redirect_to"] = params["request"]["url"]
            chain.append({"request": params["request"], "response": None, "redirect_to": ""})
            order.append((rid, len(chain) - 1))
        elif event["method"] == "Network.requestWillBeSentExtraInfo":
            extras.setdefault(rid, []).append(params["headers"])
        elif event["method"] == "Network.responseReceived" and hops.get(rid):
            hops[rid][-1]["response"] = params["response"]
    entries = []
    for rid, index in order:
        hop = hops[rid][index]
        extra_list = extras.get(rid, [])
        extra = extra_list[index] if index < len(extra_list) else None
        entries.append(_entry(hop["request"], extra, hop["response"], hop["redirect_to"]))
    return entries
