"""One Chromium kept across the trials of a site worker, with its state wiped between trials.

Starting Chromium and connecting to it costs seconds; a trial on a running browser only pays for
a fresh tab and a cleared state: every other tab closed, cookies, storage (local storage,
IndexedDB, service workers, cache storage) of every origin the last trial touched, and the HTTP
cache. Each trial connects its own browser-use session and its own recorder to it.
Chromium dies with the thread that launched it (PR_SET_PDEATHSIG), so a killed harness leaves
no browser behind.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from types import TracebackType

from benchwright.files.owned_temp import OwnedTemp
from benchwright.web.browser.cdp import CdpCommandError, CdpConnection
from benchwright.web.browser.launch import (
    BrowserSettings,
    ChromiumProcess,
    launch_chromium,
)

CHROMIUM_PREFIX = "benchwright-chromium-"
"""Chromium's work folder (its profile), one per shared browser."""


class SharedBrowser:
    """A Chromium process reused by trials; launched on first use, restarted if it died."""

    def __init__(self, settings: BrowserSettings | None = None, workdir: Path | None = None,
                 site_urls: list[str] | None = None) -> None:
        self.settings = settings or BrowserSettings()
        self._owned: OwnedTemp | None = None
        if workdir is None:  # Chromium's profile: owned, a kill -9 leaves it to the next sweep
            self._owned = OwnedTemp(CHROMIUM_PREFIX)
            workdir = self._owned.path
        self.workdir = workdir
        self.site_urls = list(site_urls or [])
        self.origins: set[str] = set()
        self._process: ChromiumProcess | None = None
        self.launches = 0

    def running(self) -> ChromiumProcess:
        """The Chromium process, started (again) if needed."""
        if self._process is None or not self._process.alive:
            if self._process is not None:
                self._process.stop(grace_s=0.5)
            profile = self.workdir / "profile"
            shutil.rmtree(profile, ignore_errors=True)
            self._process = launch_chromium(self.settings, profile, self.site_urls)
            self.launches += 1
        return self._process

    def remember(self, origins: set[str]) -> None:
        """Origins a trial touched: their storage is cleared before the next trial."""
        self.origins |= origins

    async def reset(self) -> None:
        """A single blank tab and no cookies, storage or cache left from earlier trials."""
        connection = await CdpConnection.open(self.running().ws_url)
        try:
            page = await _fresh_tab(connection)
            await _clear_state(connection, self.origins | _origins(self.site_urls), page)
        finally:
            await connection.close()
        self.origins.clear()

    def close(self) -> None:
        """Stop Chromium; remove the work folder if this object made it."""
        if self._process is not None:
            self._process.stop()
            self._process = None
        if self._owned is not None:
            self._owned.close()

    def __enter__(self) -> SharedBrowser:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


async def _fresh_tab(connection: CdpConnection) -> str:
    targets = await connection.send("Target.getTargets")
    old = [t["targetId"] for t in targets["targetInfos"] if t["type"] == "page"]
    created = await connection.send("Target.createTarget", {"url": "about:blank"})
    for target_id in old:
        with contextlib.suppress(CdpCommandError):
            await connection.send("Target.closeTarget", {"targetId": target_id})
    return str(created["targetId"])


async def _clear_state(connection: CdpConnection, origins: set[str], page: str) -> None:
    await connection.send("Storage.clearCookies")
    for origin in sorted(origins):
        with contextlib.suppress(CdpCommandError):
            await connection.send("Storage.clearDataForOrigin",
                                  {"origin": origin, "storageTypes": "all"})
    # the new tab, not whichever page getTargets lists first: the old ones may still be closing
    attached = await connection.send("Target.attachToTarget", {"targetId": page, "flatten": True})
    session = attached["sessionId"]
    with contextlib.suppress(CdpCommandError):
        await connection.send("Network.clearBrowserCache", session_id=session)
        await connection.send("Target.detachFromTarget", {"sessionId": session})


def _origins(urls: list[str]) -> set[str]:
    return {"/".join(url.split("/", 3)[:3]) for url in urls}
